import { compareDistributed, comparePacked, decideAllocation, matchesSelector, testsBeyondLabels } from '../../machines/allocation.js';
import type { NodeCounts } from '../../machines/scale-down-order.js';
import type { SeededRandom, TimerHandle } from '../clock.js';
import type { FeatureGates } from '../features.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import { objectKey } from '../kinds/meta.js';
import type { Cluster } from '../cluster.js';
import type { Cause } from '../log/cause.js';
import { AllocationIndex, type Pool } from './allocation-index.js';
import {
  type GameServerAllocation,
  type GameServerAllocationStatus,
  type GameServerSelector,
  LOCAL_ALLOCATION_SOURCE,
  allocationStatus,
  failedAllocationStatus,
  toSelectors,
} from '../kinds/gameserverallocation/gameserverallocation.js';

/**
 * `exact`: every request sees the current state. `agones-batch`: requests wait in a queue that a
 * dispatcher drains, sleeping 500 ms whenever the queue is empty, as Agones's allocator does, so
 * users can reproduce the latency profile of a real cluster.
 */
export type AllocatorModel = 'exact' | 'agones-batch';

export interface AllocatorOptions {
  model?: AllocatorModel;
  /** How long the batch dispatcher sleeps when idle (Agones's allocationBatchWaitTime). */
  batchWaitMs?: number;
}

/** What an allocation decided, and when it was committed. */
export interface AllocationResult {
  status: GameServerAllocationStatus;
  gameServer?: GameServer;
}

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
 * The allocator: picks a GameServer for a (defaulted, validated) GameServerAllocation and
 * allocates it as one atomic event through the GameServer's machine. The index moves as soon as
 * the event is applied, so no GameServer is ever handed out twice.
 */
export class Allocator {
  readonly index: AllocationIndex;
  readonly model: AllocatorModel;
  private readonly batchWaitMs: number;
  private readonly queue: Array<{
    gsa: GameServerAllocation;
    cause: Cause | undefined;
    started: number | undefined;
    resolve: (r: AllocationResult) => void;
    reject: (e: unknown) => void;
  }> = [];
  private sleepingSince: number | undefined;
  private readonly selectors = new WeakMap<GameServerAllocation, GameServerSelector[]>();
  private wake: TimerHandle | undefined;

  constructor(
    private readonly cluster: Cluster,
    options: AllocatorOptions = {},
  ) {
    this.model = options.model ?? 'exact';
    this.batchWaitMs = options.batchWaitMs ?? 500;
    this.index = new AllocationIndex(cluster.gameServers);
    cluster.gameServerApplied$.subscribe((change) => this.index.update(change.previous, change.object));
    this.sleepingSince = cluster.clock.now();
  }

  /**
   * Told of each allocation asked for with a start time, once its result is final: the metrics'
   * allocation latency, taken where the result is made rather than through one more promise.
   */
  onAllocated: ((gsa: GameServerAllocation, result: AllocationResult, started: number) => void) | undefined;

  /**
   * Allocates in this cluster; resolves once the allocation is committed. `cause`: the request,
   * recorded with it; `started` (performance.now()): report the result to `onAllocated`.
   */
  allocate(gsa: GameServerAllocation, cause?: Cause, started?: number): Promise<AllocationResult> {
    if (this.model === 'exact') return this.allocateNow(gsa, cause, started);
    return new Promise((resolve, reject) => {
      this.queue.push({ gsa, cause, started, resolve, reject });
      this.scheduleDispatch();
    });
  }

  stop(): void {
    this.cluster.clock.clearTimeout(this.wake);
    this.wake = undefined;
  }

  /** The first selector that matches anything wins; within it, the strategy's best candidate. */
  private allocateNow(gsa: GameServerAllocation, cause: Cause | undefined, started: number | undefined): Promise<AllocationResult> {
    const namespace = gsa.metadata?.namespace ?? 'default';
    for (const selector of this.selectorsOf(gsa)) {
      const chosen = pickForSelector(this.index, namespace, selector, gsa, this.cluster.gates, this.cluster.rng);
      if (!chosen) continue;
      const result = this.apply(chosen, gsa, cause, started);
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

  /** Commits the decided event through the GameServer's machine; undefined when the machine refuses. */
  private apply(gs: GameServer, gsa: GameServerAllocation, cause: Cause | undefined, started: number | undefined): Promise<AllocationResult> | undefined {
    const gates = this.cluster.gates;
    const event = decideAllocation(gs, gsa, this.cluster.clock.now(), gates);
    const key = objectKey(event.namespace, event.name);
    const committed = this.cluster.actors.sendByKey(key, { type: 'allocator.allocate', event }, cause);
    if (!committed) return undefined; // The machine refused: the server left the pool meanwhile.
    const allocated = this.cluster.gameServers.getByKey(key)!;
    return committed.then(() => this.done(gsa, { status: allocationStatus(allocated, LOCAL_ALLOCATION_SOURCE, gates), gameServer: allocated }, started));
  }

  private done(gsa: GameServerAllocation, result: AllocationResult, started: number | undefined): AllocationResult {
    if (started !== undefined) this.onAllocated?.(gsa, result, started);
    return result;
  }

  /** agones-batch: a request arriving while the dispatcher sleeps waits for it to wake. */
  private scheduleDispatch(): void {
    if (this.wake !== undefined || this.sleepingSince === undefined) return;
    const now = this.cluster.clock.now();
    const slept = now - this.sleepingSince;
    const wakeIn = this.batchWaitMs - (slept % this.batchWaitMs);
    this.wake = this.cluster.clock.setTimeout(() => {
      this.wake = undefined;
      void this.dispatch();
    }, wakeIn);
  }

  /** Drains the queue without sleeping, then goes back to sleep. */
  private async dispatch(): Promise<void> {
    this.sleepingSince = undefined;
    while (this.queue.length > 0) {
      const request = this.queue.shift()!;
      try {
        request.resolve(await this.allocateNow(request.gsa, request.cause, request.started));
      } catch (error) {
        request.reject(error);
      }
    }
    this.sleepingSince = this.cluster.clock.now();
  }
}
