import type { GameServer } from '../kinds/gameserver-types.js';
import type { GameServerAllocationStatus } from '../kinds/gameserverallocation/gameserverallocation.js';

/**
 * `exact`: every request sees the current state. `agones-batch`: Agones's allocator as it works
 * (batch-allocator.ts): replicas with caches that lag the store, batches served from one sorted
 * list after an idle wait, update conflicts retried — so users meet the latency and the failures
 * of a real cluster.
 */
export type AllocatorModel = 'exact' | 'agones-batch';

/** Agones's defaults: allocationBatchWaitTime and the allocator Deployment's replicas (its Helm chart). */
export const DEFAULT_BATCH_WAIT_MS = 500;
export const DEFAULT_ALLOCATOR_REPLICAS = 3;
/** Most replicas a model runs: each is a pod with its own cache and batch loop. */
export const MAX_ALLOCATOR_REPLICAS = 64;
/**
 * How late a replica's watch delivers a committed change (client-go informer): an assumption,
 * as Kubernetes publishes no target for watch latency; see docs/allocation.md, the allocator model.
 */
export const DEFAULT_INFORMER_LAG_MS = 100;

export interface AllocatorOptions {
  model?: AllocatorModel;
  /** agones-batch: how long a replica's batch loop sleeps when idle (Agones's allocationBatchWaitTime). */
  batchWaitMs?: number;
  /** agones-batch: allocator pods, each with its own cache and batch loop. */
  replicas?: number;
  /** agones-batch: how late each replica's cache hears of a change to a GameServer. */
  informerLagMs?: number;
}

/** What an allocation decided, once committed. */
export interface AllocationResult {
  status: GameServerAllocationStatus;
  gameServer?: GameServer;
  /** Which of the request's selectors (`toSelectors`) found it, when allocated here. */
  selector?: number;
  /** Tries it took (agones-batch retries a lost race); one when absent. */
  attempts?: number;
  /** When it was decided (the cluster's clock), when later than asked (agones-batch waits for its batch). */
  decidedAt?: number;
}

/**
 * What the CLI and scenario readers already refuse with their own words (a flag, a field),
 * checked again here for a caller that builds options itself: a bad value would otherwise fail
 * deep in the batch loop (no replica to send to) or sleep forever.
 */
export function checkAllocatorOptions(options: AllocatorOptions): void {
  const { model = 'exact', replicas, batchWaitMs, informerLagMs } = options;
  if (model !== 'exact' && model !== 'agones-batch') throw new RangeError(`allocator model must be exact or agones-batch, not "${String(model)}"`);
  if (model === 'exact' && [replicas, batchWaitMs, informerLagMs].some((value) => value !== undefined)) {
    throw new RangeError('replicas, batchWaitMs and informerLagMs go with the agones-batch model');
  }
  if (replicas !== undefined && !(Number.isInteger(replicas) && replicas >= 1 && replicas <= MAX_ALLOCATOR_REPLICAS)) {
    throw new RangeError(`allocator replicas must be a whole number from 1 to ${MAX_ALLOCATOR_REPLICAS}, not ${replicas}`);
  }
  if (batchWaitMs !== undefined && !(batchWaitMs > 0 && Number.isFinite(batchWaitMs))) throw new RangeError(`allocator batchWaitMs must be above 0, not ${batchWaitMs}`);
  if (informerLagMs !== undefined && !(informerLagMs >= 0 && Number.isFinite(informerLagMs))) throw new RangeError(`allocator informerLagMs must be 0 or more, not ${informerLagMs}`);
}
