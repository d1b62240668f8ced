import { compareDistributed, comparePacked, matchesSelector, testsBeyondLabels } from '../../machines/allocation.js';
import type { NodeCounts } from '../../machines/scale-down-order.js';
import type { SeededRandom } from '../clock.js';
import type { FeatureGates } from '../features.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import type { Cluster } from '../cluster.js';
import type { Cause } from '../log/cause.js';
import { ALLOCATION_INDEX, type AllocationIndex, type Pool } from './allocation-index.js';
import { type AllocationResult, commitAllocation } from './allocation-commit.js';
import { BatchAllocator } from './batch-allocator.js';
import {
  type GameServerAllocation,
  type GameServerSelector,
  LOCAL_ALLOCATION_SOURCE,
  allocationStatus,
  failedAllocationStatus,
  toSelectors,
} from '../kinds/gameserverallocation/gameserverallocation.js';

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

export type { AllocationResult } from './allocation-commit.js';

const EMPTY_NODE_COUNTS: NodeCounts = new Map();

/**
 * The candidate the index gives one selector of a (defaulted) request, by the request's
 * strategy: the same rule as machines/allocation's orderForAllocation followed by
 * findGameServerForAllocation, without sorting the fleet (a property test holds the two equal).
 * Distributed without priorities draws from `rng`. A selector testing more than labels has its
 * matches kept by the index (a view keyed by the selector object: requests are reused, and the
 * cluster's gates never change).
 */
export function pickForSelector(
  index: AllocationIndex,
  namespace: string,
  selector: GameServerSelector,
  gsa: GameServerAllocation,
  gates: FeatureGates,
  rng: SeededRandom,
): GameServer | undefined {
  const spec = gsa.spec ?? {};
  const priorities = gates.CountsAndLists ? (spec.priorities ?? undefined) : undefined;
  const pool: Pool = selector.gameServerState === 'Allocated' ? 'Allocated' : 'Ready';
  const accept = (gs: GameServer) => matchesSelector(gs, selector, gates);
  const labels = selector.matchLabels ?? {};
  const viewKey = testsBeyondLabels(selector, gates) ? selector : undefined;
  if (spec.scheduling !== 'Distributed') {
    // Within a node, Packed breaks ties by player room and priorities before the name.
    const tieBreaks = gates.PlayerAllocationFilter || (priorities && priorities.length > 0);
    const better = tieBreaks ? (a: GameServer, b: GameServer) => comparePacked(a, b, EMPTY_NODE_COUNTS, priorities, gates) : undefined;
    return index.findPacked(namespace, pool, labels, accept, better, viewKey);
  }
  if (priorities && priorities.length > 0) {
    return index.findBest(namespace, pool, labels, accept, (a, b) => compareDistributed(a, b, priorities), viewKey);
  }
  return index.findRandom(namespace, pool, labels, accept, rng);
}

/**
 * What the CLI and scenario readers already refuse with their own words (a flag, a field),
 * checked again here for a caller that builds options itself: a bad value would otherwise fail
 * deep in the batch loop (no replica to send to) or sleep forever.
 */
function checkAllocatorOptions(options: AllocatorOptions): void {
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

/**
 * The allocator: picks a GameServer for a (defaulted, validated) GameServerAllocation and
 * allocates it as one atomic event through the GameServer's machine. The index moves as soon as
 * the event is applied, so no GameServer is ever handed out twice.
 */
export class Allocator {
  readonly index: AllocationIndex;
  readonly model: AllocatorModel;
  /** The agones-batch model, when it is the model. */
  readonly batch: BatchAllocator | undefined;
  private readonly selectors = new WeakMap<GameServerAllocation, GameServerSelector[]>();

  constructor(
    private readonly cluster: Cluster,
    options: AllocatorOptions = {},
  ) {
    checkAllocatorOptions(options);
    this.model = options.model ?? 'exact';
    this.index = cluster.use(ALLOCATION_INDEX);
    if (this.model === 'agones-batch') {
      this.batch = new BatchAllocator(cluster, {
        replicas: options.replicas ?? DEFAULT_ALLOCATOR_REPLICAS,
        batchWaitMs: options.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS,
        informerLagMs: options.informerLagMs ?? DEFAULT_INFORMER_LAG_MS,
        seed: cluster.seed,
      });
    }
  }

  /**
   * Told of each allocation asked for with a start time, once its result is final (undefined:
   * it failed with `error`): the metrics' allocation latency and retries, and the server's log
   * line, taken where the result is made rather than through one more promise.
   */
  onAllocated: ((gsa: GameServerAllocation, result: AllocationResult | undefined, started: number, error?: unknown) => void) | undefined;

  /**
   * Allocates in this cluster; resolves once the allocation is committed. `cause`: the request,
   * recorded with it; `started` (performance.now()): report the result to `onAllocated`.
   */
  allocate(gsa: GameServerAllocation, cause?: Cause, started?: number): Promise<AllocationResult> {
    if (!this.batch) return this.allocateNow(gsa, cause, started);
    const result = this.batch.allocate(gsa, cause);
    if (started === undefined) return result;
    return result.then(
      (done) => this.done(gsa, done, started),
      (error: unknown) => {
        this.onAllocated?.(gsa, undefined, started, error);
        throw error;
      },
    );
  }

  stop(): void {
    this.batch?.stop();
  }

  /** The first selector that matches anything wins; within it, the strategy's best candidate. */
  private allocateNow(gsa: GameServerAllocation, cause: Cause | undefined, started: number | undefined): Promise<AllocationResult> {
    const namespace = gsa.metadata?.namespace ?? 'default';
    const selectors = this.selectorsOf(gsa);
    for (let i = 0; i < selectors.length; i++) {
      const chosen = pickForSelector(this.index, namespace, selectors[i]!, gsa, this.cluster.gates, this.cluster.rng);
      if (!chosen) continue;
      const result = this.apply(chosen, gsa, i, cause, started);
      if (result) return result;
    }
    // "None free" may rest on allocations not yet durable: answer once everything seen is committed.
    return this.cluster.readCommitted(() => this.done(gsa, { status: failedAllocationStatus('UnAllocated') }, started));
  }

  /** The request's selectors, worked out once per request object (a benchmark or k6 reuses one). */
  private selectorsOf(gsa: GameServerAllocation): GameServerSelector[] {
    let selectors = this.selectors.get(gsa);
    if (!selectors) {
      selectors = toSelectors(gsa);
      this.selectors.set(gsa, selectors);
    }
    return selectors;
  }

  /** Commits the allocation through the GameServer's machine; undefined when the machine refuses. */
  private apply(
    gs: GameServer,
    gsa: GameServerAllocation,
    selector: number,
    cause: Cause | undefined,
    started: number | undefined,
  ): Promise<AllocationResult> | undefined {
    const applied = commitAllocation(this.cluster, gs, gsa, cause);
    if (!applied) return undefined; // The machine refused: the server left the pool meanwhile.
    const allocated = applied.gameServer;
    return applied.committed.then(() =>
      this.done(gsa, { status: allocationStatus(allocated, LOCAL_ALLOCATION_SOURCE, this.cluster.gates), gameServer: allocated, selector }, started),
    );
  }

  private done(gsa: GameServerAllocation, result: AllocationResult, started: number | undefined): AllocationResult {
    if (started !== undefined) this.onAllocated?.(gsa, result, started);
    return result;
  }
}
