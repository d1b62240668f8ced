/**
 * The FleetAutoscaler's formulas (Agones's pkg/fleetautoscalers, reference §7.5–§7.7): from a
 * fleet as the read model shows it and a policy, the replicas the fleet should have and whether
 * a limit capped them. Pure: no clock, no I/O; the controller reads, calls these, and commits.
 */

import type { Int64 } from '../server/int64.js';
import type { AutoscalerPolicy, BufferPolicy, BufferSize, CapacityPolicy } from '../server/kinds/fleetautoscaler/fleetautoscaler.js';

export type CapacityKind = 'Counter' | 'List';

/** What the webhook answered (`FleetAutoscaleResponse`, uid already checked). */
export interface WebhookAnswer {
  scale: boolean;
  replicas: number;
}

/** A Fleet's aggregated counter or list (`status.counters[key]`, `status.lists[key]`). */
export interface AggregatedCapacity {
  count: Int64;
  capacity: Int64;
  allocatedCount: Int64;
  allocatedCapacity?: Int64;
}

/** The parts of a Fleet the formulas read (a Fleet from the read model fits). */
export interface AutoscaledFleet {
  spec?: {
    replicas?: number;
    template?: {
      spec?: {
        counters?: Readonly<Record<string, { count?: Int64; capacity?: Int64 }>>;
        lists?: Readonly<Record<string, { capacity?: number; values?: readonly string[] }>>;
      };
    };
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    reservedReplicas?: number;
    allocatedReplicas?: number;
    counters?: Readonly<Record<string, AggregatedCapacity>>;
    lists?: Readonly<Record<string, AggregatedCapacity>>;
  };
}

/** The parts of a GameServer a Counter/List scale-down reads (a GameServer fits). */
export interface GameServerCapacity {
  status: {
    counters?: Readonly<Record<string, { count: Int64; capacity: Int64 }>>;
    lists?: Readonly<Record<string, { capacity: number; values: readonly string[] }>>;
  };
}

/**
 * The fleet's GameServers in the order its sets would delete them (all states, all sets). A
 * function is called only when a scale-down needs the order, which spares the sort otherwise.
 */
export type DeletionOrder = Iterable<GameServerCapacity> | (() => Iterable<GameServerCapacity>);

export interface ScaleDecision {
  replicas: number;
  /** The policy's limits capped the result (status `scalingLimited`). */
  limited: boolean;
}

/** A policy could not be applied; the message is Agones's where Agones has one. */
export class AutoscalerError extends Error {
  override readonly name = 'AutoscalerError';
}

type ParsedBuffer = { kind: 'int'; value: number } | { kind: 'percent'; value: number };

/** Reads an int-or-string buffer size the way Agones's intstr helpers do (integer percentages only). */
export function parseBufferSize(raw: BufferSize): ParsedBuffer {
  if (typeof raw === 'bigint') return { kind: 'int', value: Number(raw) };
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) throw new AutoscalerError(`invalid value for IntOrString: ${raw} is not an integer`);
    return { kind: 'int', value: raw };
  }
  const match = /^([+-]?\d+)%$/.exec(raw);
  if (!match) {
    const reason = raw.endsWith('%') ? `invalid value "${raw}"` : 'invalid type: string is not a percentage';
    throw new AutoscalerError(`invalid value for IntOrString: ${reason}`);
  }
  const value = Number(match[1]);
  // 100% would divide by zero below; validation keeps percentages within 1..99.
  if (value < 1 || value > 99) throw new AutoscalerError('bufferSize should be between 1% and 99%');
  return { kind: 'percent', value };
}

/**
 * The total a `p%` buffer needs so that `used` is `(100 − p)%` of it, rounded up: with 8
 * allocated and 30%, allocated must be 70% of the fleet, so the fleet is ceil(800 / 70) = 12.
 */
function totalForPercentBuffer(used: number, percent: number): number {
  return Math.ceil((used * 100) / (100 - percent));
}

/**
 * Buffer policy (§7.5): allocated replicas plus the buffer (a number, or a percentage of the
 * total, rounded up), then clamped to [minReplicas, maxReplicas]. Ready and Reserved servers
 * do not count as used.
 */
export function bufferPolicy(fleet: AutoscaledFleet, policy: BufferPolicy): ScaleDecision {
  const allocated = fleet.status?.allocatedReplicas ?? 0;
  const size = parseBufferSize(policy.bufferSize);
  let replicas = size.kind === 'int' ? allocated + size.value : totalForPercentBuffer(allocated, size.value);
  let limited = false;
  const min = policy.minReplicas ?? 0;
  if (replicas < min) {
    replicas = min;
    limited = true;
  }
  if (replicas > policy.maxReplicas) {
    replicas = policy.maxReplicas;
    limited = true;
  }
  return { replicas, limited };
}

/**
 * Webhook policy (§7.7): `scale: true` takes the answer's replicas as they are (no clamp, 0
 * allowed); `scale: false` keeps the fleet's current total (`status.replicas`, not the spec).
 */
export function webhookPolicy(fleet: AutoscaledFleet, answer: WebhookAnswer): ScaleDecision {
  return { replicas: answer.scale ? answer.replicas : (fleet.status?.replicas ?? 0), limited: false };
}

/** Go's integer division truncates toward zero. */
function goDiv(a: number, b: number): number {
  return Math.trunc(a / b);
}

/** One GameServer's count and capacity under the key, or undefined when it lacks the key. */
function gameServerValues(gs: GameServerCapacity, kind: CapacityKind, key: string): { count: number; capacity: number } | undefined {
  if (kind === 'Counter') {
    const counter = gs.status.counters?.[key];
    return counter ? { count: Number(counter.count), capacity: Number(counter.capacity) } : undefined;
  }
  const list = gs.status.lists?.[key];
  return list ? { count: list.values.length, capacity: list.capacity } : undefined;
}

function resolveOrder(order: DeletionOrder | undefined): Iterable<GameServerCapacity> {
  if (order === undefined) return [];
  return typeof order === 'function' ? order() : order;
}

interface CapacityState {
  kind: CapacityKind;
  key: string;
  replicas: number;
  /** Per-replica count and capacity, from the fleet's template. */
  count: number;
  capacity: number;
  aggCount: number;
  aggCapacity: number;
  minCapacity: number;
  maxCapacity: number;
  buffer: number;
  order: DeletionOrder | undefined;
}

/** Below the minimum: add template-sized replicas until the aggregate capacity reaches it. */
function scaleUpLimited(s: CapacityState): ScaleDecision {
  // Agones tests for exactly 0; a negative capacity (impossible by schema) would never terminate.
  if (s.capacity <= 0) throw new AutoscalerError('cannot scale up as Capacity is equal to 0');
  let { replicas, aggCapacity } = s;
  while (aggCapacity < s.minCapacity) {
    aggCapacity += s.capacity;
    replicas++;
  }
  return { replicas, limited: true };
}

/** Above the maximum: remove servers in deletion order until the aggregate capacity fits. */
function scaleDownLimited(s: CapacityState): ScaleDecision {
  let { replicas, aggCapacity } = s;
  for (const gs of resolveOrder(s.order)) {
    if (aggCapacity <= s.maxCapacity) break;
    const values = gameServerValues(gs, s.kind, s.key);
    if (values) aggCapacity -= values.capacity;
    replicas--;
  }
  return { replicas: Math.max(1, replicas), limited: true };
}

function scaleUp(s: CapacityState, available: number): ScaleDecision {
  const perReplica = s.capacity - s.count;
  if (perReplica <= 0) {
    throw new AutoscalerError('cannot scale up as adding additional replicas does not increase available Capacity');
  }
  let add = Math.ceil((s.buffer - available) / perReplica);
  const after = s.aggCapacity + add * s.capacity;
  const limited = after < s.minCapacity || after > s.maxCapacity;
  if (limited) add = goDiv(s.maxCapacity - s.aggCapacity, s.capacity);
  return { replicas: s.replicas + add, limited };
}

/**
 * Walks the deletion order removing one server at a time, and stops at the last count that
 * still keeps the buffer (and the minimum capacity).
 */
function scaleDown(s: CapacityState): ScaleDecision {
  if (s.aggCapacity === s.minCapacity) return { replicas: s.replicas, limited: true };
  let { replicas, aggCount, aggCapacity } = s;
  for (const gs of resolveOrder(s.order)) {
    replicas--;
    const values = gameServerValues(gs, s.kind, s.key);
    if (!values) continue; // counted as removed, no capacity change
    aggCount -= values.count;
    aggCapacity -= values.capacity;
    const available = aggCapacity - aggCount;
    if (available < s.buffer) return { replicas: replicas + 1, limited: false };
    if (aggCapacity < s.minCapacity) return { replicas: replicas + 1, limited: true };
    if (available === s.buffer) return { replicas, limited: false };
    if (aggCapacity === s.minCapacity) return { replicas, limited: true };
  }
  // Counter and List policies never scale a fleet to zero.
  return { replicas: Math.max(1, replicas), limited: false };
}

/**
 * Counter and List policies (§7.6): keeps `bufferSize` of the key's capacity available across
 * the fleet (a number, or a percentage of the total over what allocated servers use), adding
 * template-sized replicas or removing servers in deletion order, within [minCapacity,
 * maxCapacity] of aggregate capacity. Never below one replica.
 */
export function counterOrListPolicy(
  fleet: AutoscaledFleet,
  policy: CapacityPolicy,
  kind: CapacityKind,
  gameServersInDeletionOrder?: DeletionOrder,
): ScaleDecision {
  const key = policy.key;
  const templateSpec = fleet.spec?.template?.spec;
  let count: number;
  let capacity: number;
  if (kind === 'Counter') {
    const counter = templateSpec?.counters?.[key];
    if (!counter) throw new AutoscalerError(`cannot apply CounterPolicy as Counter key ${key} does not exist in the Fleet Spec`);
    count = Number(counter.count ?? 0);
    capacity = Number(counter.capacity ?? 0);
  } else {
    const list = templateSpec?.lists?.[key];
    if (!list) throw new AutoscalerError(`cannot apply ListPolicy as List key ${key} does not exist in the Fleet Spec`);
    count = list.values?.length ?? 0;
    capacity = list.capacity ?? 0;
  }
  const aggregate = kind === 'Counter' ? fleet.status?.counters?.[key] : fleet.status?.lists?.[key];
  if (!aggregate) throw new AutoscalerError(`cannot apply ${kind}Policy as ${kind} key ${key} does not exist in the Fleet Status`);

  // The formulas work in doubles: exact up to 2^53, and their result (replicas) is an int32.
  const minCapacity = Number(policy.minCapacity ?? 0);
  const maxCapacity = Number(policy.maxCapacity);
  const replicas = fleet.status?.replicas ?? 0;
  const [aggCount, aggCapacity, aggAllocatedCount] = [Number(aggregate.count), Number(aggregate.capacity), Number(aggregate.allocatedCount)];

  // Whether the fleet's capacity is outside the limits already, and which way it must move.
  const direction = aggCapacity < minCapacity ? 1 : aggCapacity > maxCapacity ? -1 : 0;
  const limited = direction !== 0;

  const size = parseBufferSize(policy.bufferSize);
  let buffer: number;
  if (size.kind === 'int') {
    buffer = size.value;
  } else {
    // Nothing allocated gives a desired capacity of 0: one replica is enough when it meets the minimum.
    if (aggAllocatedCount <= 0 && capacity >= minCapacity) return { replicas: 1, limited: true };
    buffer = totalForPercentBuffer(aggAllocatedCount, size.value) - aggAllocatedCount;
  }

  const state: CapacityState = {
    kind,
    key,
    replicas,
    count,
    capacity,
    aggCount,
    aggCapacity,
    minCapacity,
    maxCapacity,
    buffer,
    order: gameServersInDeletionOrder,
  };
  const limitedByDirection = (): ScaleDecision =>
    direction === 1 ? scaleUpLimited(state) : direction === -1 ? scaleDownLimited(state) : { replicas, limited: false };

  const available = aggCapacity - aggCount;
  if (available === buffer) return limited ? limitedByDirection() : { replicas, limited: false };
  if (available < buffer) return limited ? limitedByDirection() : scaleUp(state, available);
  return limited && direction === 1 ? scaleUpLimited(state) : scaleDown(state);
}

export const SUPPORTED_POLICY_TYPES = ['Buffer', 'Webhook', 'Counter', 'List'] as const;

export interface ComputeOptions {
  /** The CountsAndLists feature gate. */
  countsAndLists: boolean;
  gameServersInDeletionOrder?: DeletionOrder;
  /** The webhook's answer, for a Webhook policy (the caller makes the call). */
  webhook?: WebhookAnswer;
}

/**
 * Agones's computeDesiredFleetSize for the policies fleetsim runs: dispatches on `type` and
 * checks that the matching settings are there. A Webhook policy needs the answer in `options`.
 */
export function computeDesiredReplicas(policy: AutoscalerPolicy, fleet: AutoscaledFleet, options: ComputeOptions): ScaleDecision {
  switch (policy.type) {
    case 'Buffer':
      if (!policy.buffer) throw new AutoscalerError('buffer policy config params are missing');
      return bufferPolicy(fleet, policy.buffer);
    case 'Counter':
    case 'List': {
      if (!options.countsAndLists) throw new AutoscalerError('cannot apply CounterPolicy unless feature flag CountsAndLists is enabled');
      const settings = policy.type === 'Counter' ? policy.counter : policy.list;
      if (!settings) throw new AutoscalerError(`${policy.type.toLowerCase()} policy config params are missing`);
      return counterOrListPolicy(fleet, settings, policy.type, options.gameServersInDeletionOrder);
    }
    case 'Webhook':
      if (!options.webhook) throw new AutoscalerError('webhook policy config params are missing');
      return webhookPolicy(fleet, options.webhook);
    case 'Schedule':
    case 'Chain':
    case 'Wasm':
      throw new AutoscalerError(`policy type ${policy.type} is not supported by fleetsim; use one of: ${SUPPORTED_POLICY_TYPES.join(', ')}`);
    default:
      throw new AutoscalerError(`wrong policy type, should be one of: ${SUPPORTED_POLICY_TYPES.join(', ')}`);
  }
}
