import type { GameServer, GameServerState } from '../server/kinds/gameserver-types.js';
import type { AllocationOverflow } from '../server/kinds/common.js';
import { type ScaleDownOrderOptions, countPerNode, firstForScaleDown, sortForScaleDown } from './scale-down-order.js';

/**
 * What a GameServerSet does about its GameServers (Agones's computeReconciliationAction,
 * reference §4.3): how many to create and which to shut down. Pure: the controller lists,
 * this decides, the controller commits.
 */

export const ERRORED_AT_ANNOTATION = 'agones.dev/errored-at';
/** An Error GameServer is kept this long before it is replaced (less churn on a crash loop). */
export const ERROR_GRACE_MS = 30_000;

export interface ReconcileLimits {
  maxCreationsPerBatch: number;
  maxDeletionsPerBatch: number;
  maxPodPending: number;
}

/** Agones's Helm defaults. */
export const DEFAULT_RECONCILE_LIMITS: ReconcileLimits = {
  maxCreationsPerBatch: 64,
  maxDeletionsPerBatch: 64,
  maxPodPending: 5000,
};

export interface ReconcileOptions extends Partial<ScaleDownOrderOptions> {
  /** The set itself is being deleted: create nothing. */
  setBeingDeleted?: boolean;
}

export interface Reconciliation {
  /** GameServers to create from the template. */
  toAdd: number;
  /** GameServers to shut down, in order (Unhealthy/expired Error first, then scale-down victims). */
  toDelete: GameServer[];
  /** A limit cut this batch short: reconcile again at once. */
  partial: boolean;
  /** When an Error GameServer becomes replaceable: reconcile again after this many ms. */
  recheckAfterMs?: number;
}

const PENDING: ReadonlySet<GameServerState> = new Set(['PortAllocation', 'Creating', 'Starting', 'Scheduled']);

/** Allocated and Reserved servers are never chosen, unless already being deleted. */
export function isDeletable(gs: GameServer): boolean {
  const state = gs.status.state;
  return (state !== 'Allocated' && state !== 'Reserved') || gs.metadata.deletionTimestamp !== undefined;
}

export function isBeingDeleted(gs: GameServer): boolean {
  return gs.status.state === 'Shutdown' || gs.metadata.deletionTimestamp !== undefined;
}

/** Milliseconds until an Error GameServer may be replaced; 0 when it may be now. */
export function errorGraceLeft(gs: GameServer, now: number): number {
  const at = Date.parse(gs.metadata.annotations[ERRORED_AT_ANNOTATION] ?? '');
  if (Number.isNaN(at)) return 0;
  return Math.max(0, at + ERROR_GRACE_MS - now);
}

function limitAdditions(up: number, target: number, podPending: number, limits: ReconcileLimits): { toAdd: number; partial: boolean } {
  if (up >= target) return { toAdd: 0, partial: false };
  const wanted = target - up;
  let toAdd = Math.min(wanted, limits.maxCreationsPerBatch);
  if (toAdd + podPending > limits.maxPodPending) toAdd = Math.max(0, limits.maxPodPending - podPending);
  return { toAdd, partial: toAdd !== wanted };
}

/**
 * §4.3, step by step. `gameServers` are the set's own (label and controller owner match) in
 * list order; the victims among the healthy ones follow `options` (scheduling, priorities, node
 * counts; Packed when not given).
 */
export function computeReconciliation(
  gameServers: readonly GameServer[],
  targetReplicas: number,
  now: number,
  limits: Partial<ReconcileLimits> = {},
  options: ReconcileOptions = {},
): Reconciliation {
  const limit: ReconcileLimits = { ...DEFAULT_RECONCILE_LIMITS, ...limits };
  let up = 0;
  let deleteCount = 0;
  let podPending = 0;
  let recheckAfterMs: number | undefined;
  const potentialDeletions: GameServer[] = [];
  const toDelete: GameServer[] = [];

  for (const gs of gameServers) if (!isDeletable(gs)) up++;

  const handleUp = (gs: GameServer) => {
    if (up >= targetReplicas) deleteCount++;
    else up++;
    potentialDeletions.push(gs);
  };
  const scheduleDeletion = (gs: GameServer) => {
    toDelete.push(gs);
    deleteCount--;
  };

  for (const gs of gameServers) {
    if (!isDeletable(gs) || isBeingDeleted(gs)) continue;
    const state = gs.status.state;
    if (PENDING.has(state)) {
      podPending++;
      handleUp(gs);
    } else if (state === 'Error') {
      const left = errorGraceLeft(gs, now);
      if (left === 0) scheduleDeletion(gs);
      else {
        podPending++;
        handleUp(gs);
        recheckAfterMs = recheckAfterMs === undefined ? left : Math.min(recheckAfterMs, left);
      }
    } else if (state === 'Unhealthy') {
      scheduleDeletion(gs);
    } else {
      // RequestReady, Ready, Reserved-being-deleted and anything unknown count as up.
      handleUp(gs);
    }
  }

  let { toAdd, partial } = limitAdditions(up, targetReplicas, podPending, limit);

  // Victims: deleteCount of the healthy ones, in scale-down order. Only as many as fit in this
  // batch are picked, so a large scale-down does not sort the whole set every batch.
  const victims = Math.max(0, deleteCount);
  const total = toDelete.length + victims;
  if (total > limit.maxDeletionsPerBatch) partial = true;
  const room = Math.max(0, limit.maxDeletionsPerBatch - toDelete.length);
  if (victims > 0 && room > 0) {
    const order: ScaleDownOrderOptions = {
      scheduling: 'Packed',
      ...options,
      nodeCounts: options.nodeCounts ?? countPerNode(gameServers),
    };
    toDelete.push(...firstForScaleDown(potentialDeletions, Math.min(victims, room), order));
  }
  if (toDelete.length > limit.maxDeletionsPerBatch) toDelete.length = limit.maxDeletionsPerBatch;
  if (options.setBeingDeleted) toAdd = 0;

  return { toAdd, toDelete, partial, ...(recheckAfterMs !== undefined && { recheckAfterMs }) };
}

/**
 * A healthy server the scale-down may pick: deletable, not being deleted, not Unhealthy or Error
 * (those are replaced, not chosen). With no Error servers these are exactly the servers
 * `computeReconciliation` orders to choose its victims from.
 */
export function isScaleDownCandidate(gs: GameServer): boolean {
  const state = gs.status.state;
  return isDeletable(gs) && !isBeingDeleted(gs) && state !== 'Unhealthy' && state !== 'Error';
}

/**
 * How one GameServer counts towards its set's reconciliation, so a controller can keep running
 * totals and skip listing a large set when the totals already decide.
 */
export interface ReconcileCounts {
  /** GameServers not being deleted. */
  live: number;
  /** Of those: PortAllocation, Creating, Starting, Scheduled. */
  pending: number;
  unhealthy: number;
  error: number;
  allocated: number;
  reserved: number;
}

export function emptyReconcileCounts(): ReconcileCounts {
  return { live: 0, pending: 0, unhealthy: 0, error: 0, allocated: 0, reserved: 0 };
}

/** Adds (sign 1) or removes (sign -1) one GameServer's part of the totals. */
export function addToReconcileCounts(counts: ReconcileCounts, gs: GameServer, sign: 1 | -1): void {
  if (isBeingDeleted(gs)) return;
  const state = gs.status.state;
  counts.live += sign;
  if (PENDING.has(state)) counts.pending += sign;
  else if (state === 'Unhealthy') counts.unhealthy += sign;
  else if (state === 'Error') counts.error += sign;
  else if (state === 'Allocated') counts.allocated += sign;
  else if (state === 'Reserved') counts.reserved += sign;
}

/** The reconciliation as numbers: how many to create, and how many victims to pick. */
export interface CountedReconciliation {
  toAdd: number;
  /** Healthy servers beyond the target, in all. */
  victims: number;
  /** Of those, how many this batch shuts down: the first ones in scale-down order. */
  victimsInBatch: number;
  partial: boolean;
}

/**
 * The reconciliation from the totals alone, when there is no Unhealthy or Error server (those
 * must be listed to be replaced). Agrees with `computeReconciliation`: it creates `toAdd`, and its
 * `toDelete` is the first `victimsInBatch` of the candidates (`isScaleDownCandidate`) in
 * scale-down order. Undefined otherwise: list the set and call `computeReconciliation`.
 */
export function reconcileFromCounts(
  counts: ReconcileCounts,
  targetReplicas: number,
  limits: Partial<ReconcileLimits> = {},
  setBeingDeleted = false,
): CountedReconciliation | undefined {
  if (counts.unhealthy !== 0 || counts.error !== 0) return undefined;
  const limit: ReconcileLimits = { ...DEFAULT_RECONCILE_LIMITS, ...limits };
  // Pass 1 counts the servers that cannot be deleted; pass 2 fills up to the target with the
  // candidates and counts the rest as excess.
  const kept = counts.allocated + counts.reserved;
  const candidates = counts.live - kept;
  const upCandidates = Math.min(candidates, Math.max(0, targetReplicas - kept));
  const victims = candidates - upCandidates;
  const { toAdd, partial } = limitAdditions(kept + upCandidates, targetReplicas, counts.pending, limit);
  return {
    toAdd: setBeingDeleted ? 0 : toAdd,
    victims,
    victimsInBatch: Math.min(victims, limit.maxDeletionsPerBatch),
    partial: partial || victims > limit.maxDeletionsPerBatch,
  };
}

export function hasOverflowMetadata(overflow: AllocationOverflow | undefined): overflow is AllocationOverflow {
  return Object.keys(overflow?.labels ?? {}).length > 0 || Object.keys(overflow?.annotations ?? {}).length > 0;
}

function carries(gs: GameServer, overflow: AllocationOverflow): boolean {
  for (const [key, value] of Object.entries(overflow.labels ?? {})) if (gs.metadata.labels[key] !== value) return false;
  for (const [key, value] of Object.entries(overflow.annotations ?? {})) if (gs.metadata.annotations[key] !== value) return false;
  return true;
}

/**
 * Allocation overflow (§4.6): when a set holds more Allocated servers than its replicas, the
 * excess ones get the overflow labels and annotations. Returns the servers to mark, in order;
 * those already carrying the metadata count towards the excess.
 */
export function computeAllocationOverflow(
  gameServers: readonly GameServer[],
  replicas: number,
  overflow: AllocationOverflow | undefined,
  order: ScaleDownOrderOptions,
): GameServer[] {
  if (!hasOverflowMetadata(overflow)) return [];
  const allocated = gameServers.filter((gs) => gs.status.state === 'Allocated' && !isBeingDeleted(gs));
  const excess = allocated.length - replicas;
  if (excess <= 0) return [];
  const rest: GameServer[] = [];
  let matches = 0;
  for (const gs of allocated) {
    if (carries(gs, overflow)) matches++;
    else rest.push(gs);
  }
  if (matches >= excess) return [];
  return sortForScaleDown(rest, order).slice(0, excess - matches);
}
