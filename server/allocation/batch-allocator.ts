import type { Subscription } from 'rxjs';
import { findGameServerForAllocation, searchesAtRandom, shuffleInPlace, sortForAllocation } from '../../machines/allocation.js';
import { type NodeCount, countOnNode } from '../../machines/scale-down-order.js';
import { SeededRandom, type TimerHandle } from '../clock.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import {
  type GameServerAllocation,
  LOCAL_ALLOCATION_SOURCE,
  allocationStatus,
  failedAllocationStatus,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { objectKey } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';
import type { StoreEntry } from '../runtime/object-store.js';
import type { GameServerChange } from '../runtime/store.js';
import type { AllocationPort } from './allocation-port.js';
import type { AllocationResult } from './allocator.js';

/**
 * `agones-batch`: Agones's allocator as it works, not as a rate limit (its allocator.go and
 * allocation_cache.go are the facts followed):
 *
 *  - `replicas` allocator pods, each with its own cache of Ready and Allocated GameServers, fed by
 *    a watch that delivers each committed change `informerLagMs` late. A request goes to the next
 *    replica in turn, as the Service spreads clients over the pods.
 *  - Each replica's batch loop sleeps `batchWaitMs` whenever its queue is empty; awake, it takes
 *    one sorted list from its cache for the whole batch (again after 100 requests, or when the
 *    priorities change) and hands out servers from it, taking each one out of the list and the
 *    cache. A request no server in the list matches is UnAllocated at once, not retried.
 *  - The update of the picked server fails with a conflict when its resourceVersion moved since
 *    the cache read it (another replica took it): contention. The server stays out of that cache
 *    until the watch brings its new version. A failed update is retried, as Agones's Allocate
 *    retries: 5 attempts 10 ms apart (10 % jitter), each queued again for the replica's next batch.
 *    After the last, the cache is rebuilt from the watch and the request fails with an error.
 *
 * Deterministic on the virtual clock: the replicas' phases and draws come from the cluster's seed.
 */

/** Agones's maxBatchBeforeRefresh: a batch takes a fresh list after this many requests. */
const MAX_BATCH_BEFORE_REFRESH = 100;
/** Agones's allocationRetry: attempts, the wait between them, its jitter. */
const ALLOCATION_ATTEMPTS = 5;
const RETRY_WAIT_MS = 10;
const RETRY_JITTER = 0.1;
/** A stream of the cluster's seed of the model's own: its draws leave the cluster's untouched. */
const MODEL_STREAM = 0xa11_0c8;

/** Agones's ErrGameServerUpdateConflict, the answer once every attempt's update failed. */
export class GameServerUpdateConflictError extends Error {
  constructor(
    readonly attempts: number,
    /** When the last try failed (the cluster's clock). */
    readonly decidedAt: number,
  ) {
    super('could not update the selected GameServer');
  }
}

/** Decides and commits an allocation of the GameServer of `entry` (the store's) through its machine (the handler's step); undefined when the machine refuses. */
export type CommitAllocation = (entry: StoreEntry<GameServer>, gsa: GameServerAllocation, cause: Cause | undefined) => { gameServer: GameServer; durable: Promise<void> } | undefined;

export interface BatchAllocatorOptions {
  replicas: number;
  batchWaitMs: number;
  informerLagMs: number;
  seed: number;
}

/** What the replicas did, since the start. */
export interface BatchAllocatorStats {
  requests: number;
  /** Tries of a request, retries included. */
  attempts: number;
  /** Updates refused because another replica changed the server since the cache read it (HTTP 409). */
  conflicts: number;
  allocated: number;
  unallocated: number;
  /** Requests whose attempts all lost a race: errors (Agones's ErrGameServerUpdateConflict) or Contention. */
  failed: number;
  batches: number;
}

interface Pending {
  gsa: GameServerAllocation;
  cause: Cause | undefined;
  attempts: number;
  resolve: (result: AllocationResult) => void;
  reject: (error: unknown) => void;
}

/** Ready or Allocated and not being deleted: what Agones's allocation cache keeps. */
function allocatable(gs: GameServer): boolean {
  return gs.metadata.deletionTimestamp === undefined && (gs.status.state === 'Ready' || gs.status.state === 'Allocated');
}

/**
 * The GameServers as the replicas' watch has delivered them: each committed change arrives
 * `lagMs` after it was committed, in order. Holds the lister (every GameServer as last delivered)
 * and its per-node counts (Agones's PerNodeCounter, fed by the same watch).
 */
class LaggingWatch {
  readonly lister = new Map<string, GameServer>();
  readonly nodeCounts = new Map<string, NodeCount>();
  readonly caches: ReplicaCache[] = [];
  private readonly inFlight: Array<{ due: number; change: GameServerChange }> = [];
  private next = 0;
  private timer: TimerHandle | undefined;
  private readonly subscription: Subscription;

  constructor(
    private readonly cluster: AllocationPort,
    private readonly lagMs: number,
  ) {
    for (const [key, gs] of cluster.gameServers.entries()) this.store(key, gs);
    this.subscription = cluster.gameServerChanges$.subscribe((change) => {
      if (lagMs === 0) return this.deliver(change);
      this.inFlight.push({ due: cluster.clock.now() + lagMs, change });
      this.timer ??= cluster.clock.setTimeout(() => this.deliverDue(), lagMs);
    });
  }

  stop(): void {
    this.subscription.unsubscribe();
    this.cluster.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private deliverDue(): void {
    this.timer = undefined;
    const now = this.cluster.clock.now();
    while (this.next < this.inFlight.length && this.inFlight[this.next]!.due <= now) this.deliver(this.inFlight[this.next++]!.change);
    if (this.next === this.inFlight.length) {
      this.inFlight.length = 0;
      this.next = 0;
    } else {
      // Under steady load the queue never empties: drop what was delivered once it is most of it.
      if (this.next > 1024 && this.next * 2 > this.inFlight.length) {
        this.inFlight.splice(0, this.next);
        this.next = 0;
      }
      this.timer = this.cluster.clock.setTimeout(() => this.deliverDue(), this.inFlight[this.next]!.due - now);
    }
  }

  private deliver({ key, object }: GameServerChange): void {
    const old = this.lister.get(key);
    this.store(key, object);
    for (const cache of this.caches) cache.watched(key, old, object);
  }

  private store(key: string, gs: GameServer | undefined): void {
    const old = this.lister.get(key);
    if (old) countOnNode(this.nodeCounts, old, -1);
    if (gs) {
      this.lister.set(key, gs);
      countOnNode(this.nodeCounts, gs, 1);
    } else {
      this.lister.delete(key);
    }
  }
}

/** One replica's allocation cache (Agones's AllocationCache): built from the watch, then kept by it and by the replica. */
class ReplicaCache {
  private readonly servers = new Map<string, GameServer>();

  constructor(private readonly watch: LaggingWatch) {
    watch.caches.push(this);
    this.resync();
  }

  /** A change the watch delivered: an update stores a Ready or Allocated server, drops one that left; a deletion drops it. */
  watched(key: string, old: GameServer | undefined, gs: GameServer | undefined): void {
    if (!gs) {
      this.servers.delete(key);
      return;
    }
    // Only updates are followed (a creation is never Ready yet), and only those with a new version.
    if (!old || old.metadata.resourceVersion === gs.metadata.resourceVersion) return;
    if (gs.metadata.deletionTimestamp !== undefined) this.servers.delete(key);
    else if (allocatable(gs)) this.servers.set(key, gs);
    else if (allocatable(old)) this.servers.delete(key);
  }

  /** Rebuilt from the watch's lister, as Agones does after a failed allocation. */
  resync(): void {
    for (const key of this.servers.keys()) if (!this.watch.lister.has(key)) this.servers.delete(key);
    for (const [key, gs] of this.watch.lister) {
      const cached = this.servers.get(key);
      if (!allocatable(gs)) this.servers.delete(key);
      else if (!cached || cached.metadata.resourceVersion !== gs.metadata.resourceVersion) this.servers.set(key, gs);
    }
  }

  list(): GameServer[] {
    return [...this.servers.values()];
  }

  /** False when the server was no longer there (Agones's ErrConflictInGameServerSelection). */
  remove(key: string): boolean {
    return this.servers.delete(key);
  }

  add(key: string, gs: GameServer): void {
    this.servers.set(key, gs);
  }
}

/** How one attempt of a request ended. */
type Attempt =
  | { kind: 'allocated'; gameServer: GameServer; committed: Promise<void>; selector: number }
  | { kind: 'none' }
  /** The update failed: retried; the last one's answer is an error. */
  | { kind: 'update-failed' }
  /** The picked server had left the cache meanwhile: retried; the last one's answer is Contention. */
  | { kind: 'selection-conflict' };

/** One allocator pod: its cache, its queue and batch loop, its update of the picked servers. */
class AllocatorReplica {
  private readonly queue: Pending[] = [];
  private readonly cache: ReplicaCache;
  private readonly random: SeededRandom;
  /** When the loop last went to sleep: it wakes every batch wait from then while it has nothing. */
  private sleepingSince: number;
  private wake: TimerHandle | undefined;
  private sortKey: string | undefined;
  private readonly retries = new Set<TimerHandle>();

  constructor(
    private readonly owner: BatchAllocator,
    private readonly cluster: AllocationPort,
    watch: LaggingWatch,
    seed: number,
    index: number,
  ) {
    this.cache = new ReplicaCache(watch);
    this.random = new SeededRandom(seed, MODEL_STREAM + index);
    // Pods start at different moments: each loop sleeps in its own phase of the batch wait.
    this.sleepingSince = cluster.clock.now() - this.random.next() * owner.options.batchWaitMs;
  }

  enqueue(request: Pending): void {
    this.queue.push(request);
    if (this.wake !== undefined) return;
    const wait = this.owner.options.batchWaitMs;
    const slept = this.cluster.clock.now() - this.sleepingSince;
    this.wake = this.cluster.clock.setTimeout(() => this.runBatch(), wait - (slept % wait));
  }

  stop(): void {
    this.cluster.clock.clearTimeout(this.wake);
    this.wake = undefined;
    for (const retry of this.retries) this.cluster.clock.clearTimeout(retry);
    this.retries.clear();
  }

  /** Awake: serves every queued request from one sorted list, then sleeps again. */
  private runBatch(): void {
    this.wake = undefined;
    this.owner.stats.batches++;
    const gates = this.cluster.gates;
    let list: GameServer[] | undefined;
    let served = 0;
    while (this.queue.length > 0) {
      const request = this.queue.shift()!;
      if (served >= MAX_BATCH_BEFORE_REFRESH) {
        list = undefined;
        served = 0;
      }
      if (gates.CountsAndLists) {
        const sortKey = JSON.stringify(request.gsa.spec?.priorities ?? null);
        if (sortKey !== this.sortKey) {
          this.sortKey = sortKey;
          list = undefined;
          served = 0;
        }
      }
      served++;
      list ??= sortForAllocation(this.cache.list(), request.gsa, this.owner.watch.nodeCounts, gates);
      try {
        this.ended(request, this.attempt(request, list));
      } catch (error) {
        request.reject(error);
      }
    }
    this.sleepingSince = this.cluster.clock.now();
  }

  /** One try: pick from the batch's list, then update the server in the store. */
  private attempt(request: Pending, list: GameServer[]): Attempt {
    const { gsa } = request;
    const gates = this.cluster.gates;
    const searched = searchesAtRandom(gsa, gates) ? shuffleInPlace([...list], this.random) : list;
    const match = findGameServerForAllocation(searched, gsa, gates);
    if (!match) return { kind: 'none' };
    const picked = match.gameServer;
    list.splice(searched === list ? match.index : list.indexOf(picked), 1);
    const key = objectKey(picked.metadata.namespace, picked.metadata.name);
    if (!this.cache.remove(key)) return { kind: 'selection-conflict' };
    const current = this.cluster.gameServers.entry(key);
    if (current && current.object.metadata.resourceVersion !== picked.metadata.resourceVersion) {
      // Conflict: the cache is behind. The server stays out of it until the watch brings it back.
      this.owner.stats.conflicts++;
      return { kind: 'update-failed' };
    }
    const applied = current && this.owner.commit(current, gsa, request.cause);
    if (!applied) {
      // Any other failed update puts the server back as the cache had it.
      this.cache.add(key, picked);
      return { kind: 'update-failed' };
    }
    this.cache.add(key, applied.gameServer);
    return { kind: 'allocated', gameServer: applied.gameServer, committed: applied.durable, selector: match.selectorIndex };
  }

  /** Answers the request, or tries it again as Agones's Retry does. */
  private ended(request: Pending, attempt: Attempt): void {
    const { stats } = this.owner;
    request.attempts++;
    stats.attempts++;
    const gates = this.cluster.gates;
    const decidedAt = this.cluster.clock.now();
    switch (attempt.kind) {
      case 'allocated': {
        stats.allocated++;
        const status = allocationStatus(attempt.gameServer, LOCAL_ALLOCATION_SOURCE, gates);
        const result = { status, gameServer: attempt.gameServer, selector: attempt.selector, attempts: request.attempts, decidedAt };
        attempt.committed.then(() => request.resolve(result), request.reject);
        return;
      }
      case 'none':
        stats.unallocated++;
        // "None free" may rest on allocations not yet durable: answer once everything seen is committed.
        void this.cluster.readCommitted(() => request.resolve({ status: failedAllocationStatus('UnAllocated'), attempts: request.attempts, decidedAt }));
        return;
    }
    if (request.attempts < ALLOCATION_ATTEMPTS) {
      const wait = RETRY_WAIT_MS * (1 + RETRY_JITTER * this.random.next());
      const retry = this.cluster.clock.setTimeout(() => {
        this.retries.delete(retry);
        this.enqueue(request);
      }, wait);
      this.retries.add(retry);
      return;
    }
    stats.failed++;
    if (attempt.kind === 'selection-conflict') {
      request.resolve({ status: failedAllocationStatus('Contention'), attempts: request.attempts, decidedAt });
      return;
    }
    this.cache.resync();
    request.reject(new GameServerUpdateConflictError(request.attempts, decidedAt));
  }
}

/** The `agones-batch` model: the replicas, and the turn by which requests reach them. */
export class BatchAllocator {
  readonly stats: BatchAllocatorStats = { requests: 0, attempts: 0, conflicts: 0, allocated: 0, unallocated: 0, failed: 0, batches: 0 };
  readonly watch: LaggingWatch;
  private readonly replicas: AllocatorReplica[] = [];
  private turn = 0;

  constructor(
    cluster: AllocationPort,
    readonly options: BatchAllocatorOptions,
    readonly commit: CommitAllocation,
  ) {
    this.watch = new LaggingWatch(cluster, options.informerLagMs);
    for (let i = 0; i < options.replicas; i++) this.replicas.push(new AllocatorReplica(this, cluster, this.watch, options.seed, i));
  }

  allocate(gsa: GameServerAllocation, cause: Cause | undefined): Promise<AllocationResult> {
    this.stats.requests++;
    const replica = this.replicas[this.turn]!;
    this.turn = (this.turn + 1) % this.replicas.length;
    return new Promise((resolve, reject) => replica.enqueue({ gsa, cause, attempts: 0, resolve, reject }));
  }

  stop(): void {
    this.watch.stop();
    for (const replica of this.replicas) replica.stop();
  }
}
