import type { SeededRandom } from '../clock.js';
import { jsonEqual } from '../kinds/common.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { ObjectChange, ObjectStore } from '../runtime/object-store.js';
import type { NodeCounter } from '../runtime/node-counter.js';
import type { Projection, ProjectionDefinition } from '../runtime/projection.js';
import type { Store } from '../runtime/store.js';
import type { NodeCount } from '../../machines/scale-down-order.js';
import type { SelectorPick } from '../../machines/allocation.js';
import { NodeBucket, NodeBuckets, type ServerEntry } from './node-bucket.js';

/** The states an allocation can pick from: Ready, or Allocated for a re-allocation. */
export type Pool = 'Ready' | 'Allocated';

/**
 * The candidates of one pool in one namespace that a request's test takes, kept in step with
 * every change: a request whose test rejects most of its bucket (a free room among thousands of
 * full Allocated servers) then looks at matches only.
 */
interface View {
  namespace: string;
  pool: Pool;
  accept: (gs: GameServer) => boolean;
  bucket: NodeBucket;
  /** Each member's node: where to find it when it changes or leaves. */
  nodeOf: Map<string, string>;
}

/** Views kept, least recently used dropped first: a client making a new selector per request cannot grow them. */
const MAX_VIEWS = 32;

/** A labels object's bucket keys in one namespace, by pool. */
interface BucketKeys {
  namespace: string;
  Ready?: string[];
  Allocated?: string[];
}

/** No bucket: a server in no pool, or in one that is not bucketed. */
const NO_KEYS: readonly string[] = [];

/** The bucket of every candidate of a pool in a namespace, whatever its labels. */
const ALL = '*';

function bucketKey(namespace: string, pool: Pool, label: string): string {
  return `${namespace}\u0000${pool}\u0000${label}`;
}

function labelKey(key: string, value: string): string {
  return `${key}=${value}`;
}

function poolOf(gs: GameServer | undefined): Pool | undefined {
  if (!gs || gs.metadata.deletionTimestamp) return undefined;
  const state = gs.status.state;
  return state === 'Ready' || state === 'Allocated' ? state : undefined;
}

/**
 * The allocator's view of the cluster (Agones's allocation cache), kept in step with every
 * GameServer change: candidates are bucketed by label and by node, so a request with a label
 * selector looks at the best node first instead of scanning the fleet. The cost of a Packed
 * request is the number of servers on one node, whatever the fleet's size.
 */
export class AllocationIndex implements Projection {
  readonly name = ALLOCATION_INDEX.name;
  private readonly buckets: NodeBuckets;
  /**
   * Namespaces whose Allocated servers are bucketed. Re-allocation is rare, so that pool is
   * built the first time a request asks for it (the node counter counts it all along).
   */
  private readonly allocatedPools = new Set<string>();
  private readonly selectorKeyCache = new WeakMap<Record<string, string>, { namespace: string; pool: Pool; keys: string[] }>();
  private readonly keyCache = new WeakMap<Record<string, string>, BucketKeys>();
  /** The labels `keysOf` answered last, and their keys. */
  private lastLabels: Record<string, string> | undefined;
  private lastCached: BucketKeys | undefined;
  /** Views by the object their test depends on, in least-recently-used order. */
  private readonly views = new Map<object, View>();
  /** View keys asked for once: a view is built on the second request, so one-off tests pay nothing. */
  private seenOnce = new WeakSet<object>();

  /** `nodes`: Packed orders nodes by its allocatable counts; it must hear each change before this index does. */
  constructor(
    private readonly gameServers: ObjectStore<GameServer>,
    private readonly nodes: NodeCounter,
  ) {
    this.buckets = new NodeBuckets((node) => nodes.allocatable(node));
  }

  rebuild(): void {
    this.buckets.clear();
    this.allocatedPools.clear();
    this.views.clear();
    this.seenOnce = new WeakSet();
    for (const [key, gs] of this.gameServers.entries()) this.update(undefined, gs, key);
  }

  gameServerApplied(change: ObjectChange<GameServer>): void {
    this.update(change.previous, change.object, change.key);
  }

  /** The Ready pool's buckets (the Allocated pool is built when first asked for): each node's servers, in Packed order. */
  snapshot(): unknown {
    const ready = [...this.buckets.byKey].filter(([bk]) => bk.split('\u0000')[1] === 'Ready').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return ready.map(([bk, bucket]) => ({ bucket: bk, nodes: bucket.nodes() }));
  }

  /**
   * Applies one GameServer change (synchronously, so the next decision sees it), after the store
   * and the node counter have. `key` is the change's (the store's own string for the object: see
   * ObjectStore), kept in every bucket with the store's entry for it.
   */
  update(previous: GameServer | undefined, next: GameServer | undefined, key: string): void {
    // Before the early return: a counter or player change moves a server in or out of a view.
    if (this.views.size > 0) this.updateViews(previous, next, key);
    const before = poolOf(previous);
    const after = poolOf(next);
    if (before === after && previous?.status.nodeName === next?.status.nodeName && jsonEqual(previous?.metadata.labels, next?.metadata.labels)) return;
    const toKeys = after && this.bucketed(next!, after) ? this.keysOf(next!, after) : NO_KEYS;
    // The node counter has moved the counts already: the nodes they moved go back in Packed order.
    // A server that stays on its node (an allocation: Ready to Allocated) moved both its node's
    // counts, and the node is put back in order once.
    this.buckets.move(
      key,
      before ? previous!.status.nodeName : undefined,
      before && this.bucketed(previous!, before) ? this.keysOf(previous!, before) : NO_KEYS,
      after ? next!.status.nodeName : undefined,
      toKeys,
      // Just applied, so found in the cache: a pick then reads the server from it, without a lookup.
      toKeys.length > 0 ? this.gameServers.entry(key) : undefined,
    );
  }

  /**
   * The best candidate of a pool for a selector's labels, in Packed order (busiest node first,
   * then `better`, then the name), among those `accept` takes. Nodes whose counts tie are one
   * rank: Agones sorts their servers together, so the best of all of them wins, not the best of
   * the node whose name sorts first.
   */
  findPacked(
    namespace: string,
    pool: Pool,
    matchLabels: Record<string, string>,
    accept: (gs: GameServer) => boolean,
    /** Tie-breaks beyond the name (players, priorities); omit when there are none. */
    better?: (a: GameServer, b: GameServer) => number,
    /** The object `accept` depends on alone (see `candidates`). */
    viewKey?: object,
  ): GameServer | undefined {
    return this.candidates(namespace, pool, matchLabels, accept, viewKey)?.findPacked(accept, better)?.object;
  }

  /**
   * A uniformly random candidate (Distributed without priorities). No view here: the draws from
   * `rng` depend on the whole bucket, and a run must draw the same numbers to stay reproducible.
   */
  findRandom(
    namespace: string,
    pool: Pool,
    matchLabels: Record<string, string>,
    accept: (gs: GameServer) => boolean,
    rng: SeededRandom,
  ): GameServer | undefined {
    return this.smallestBucket(namespace, pool, matchLabels)?.findRandom(accept, rng)?.object;
  }

  /** The best candidate by `compare` alone (Distributed with priorities: no node logic). */
  findBest(
    namespace: string,
    pool: Pool,
    matchLabels: Record<string, string>,
    accept: (gs: GameServer) => boolean,
    compare: (a: GameServer, b: GameServer) => number,
    /** The object `accept` depends on alone (see `candidates`). */
    viewKey?: object,
  ): GameServer | undefined {
    return this.candidates(namespace, pool, matchLabels, accept, viewKey)?.findBest(accept, compare)?.object;
  }

  /**
   * The store's entry of the candidate a request's selector gets (machines/allocation's
   * `selectorPick`), by its order: Packed, the best by `compare`, or at random from `rng`. No test
   * runs when the pick is exact. The entry is live (see ObjectStore): the caller reads the server,
   * and its version after a commit, from it, with no lookup in a store of the whole fleet.
   */
  pick(namespace: string, pick: SelectorPick, rng: SeededRandom): ServerEntry | undefined {
    const accept = pick.exact ? undefined : pick.accept;
    if (pick.order === 'random') return this.smallestBucket(namespace, pick.pool, pick.labels)?.findRandom(accept, rng);
    const bucket = pick.viewKey ? this.candidates(namespace, pick.pool, pick.labels, pick.accept, pick.viewKey) : this.smallestBucket(namespace, pick.pool, pick.labels);
    if (pick.order === 'packed') return bucket?.findPacked(accept, pick.compare);
    return bucket?.findBest(accept, pick.compare!);
  }

  /** What Packed orders `node` by: its Ready and Allocated servers not being deleted. */
  nodeCounts(node: string): NodeCount | undefined {
    return this.nodes.tally(node)?.allocatable;
  }

  /**
   * Where to look for a request's candidates. With a `viewKey` (an object `accept` depends on
   * alone, the same test for as long as the index lives, taking only servers with `matchLabels`,
   * as a selector's test does) asked for before: the view of what `accept` takes, a subset of the
   * label bucket in the same node order, so the same answer.
   * `accept` is still asked of each server looked at, so a view can narrow but never decide.
   */
  private candidates(
    namespace: string,
    pool: Pool,
    matchLabels: Record<string, string>,
    accept: (gs: GameServer) => boolean,
    viewKey: object | undefined,
  ): NodeBucket | undefined {
    if (viewKey === undefined) return this.smallestBucket(namespace, pool, matchLabels);
    let view = this.views.get(viewKey);
    if (view && view.namespace === namespace && view.pool === pool) {
      // Most recently used last.
      this.views.delete(viewKey);
      this.views.set(viewKey, view);
      return view.bucket;
    }
    const bucket = this.smallestBucket(namespace, pool, matchLabels);
    if (!this.seenOnce.has(viewKey)) {
      this.seenOnce.add(viewKey);
      return bucket;
    }
    if (view) this.dropView(viewKey, view);
    view = { namespace, pool, accept, bucket: new NodeBucket(), nodeOf: new Map() };
    for (const key of bucket?.keys() ?? []) {
      const entry = this.gameServers.entry(key);
      if (entry && accept(entry.object)) this.join(view, entry);
    }
    this.views.set(viewKey, view);
    if (this.views.size > MAX_VIEWS) {
      const [oldest, dropped] = this.views.entries().next().value!;
      this.dropView(oldest, dropped);
    }
    return view.bucket;
  }

  private updateViews(previous: GameServer | undefined, next: GameServer | undefined, key: string): void {
    for (const view of this.views.values()) {
      const node = view.nodeOf.get(key);
      const takes = next !== undefined && next.metadata.namespace === view.namespace && poolOf(next) === view.pool && view.accept(next);
      if (node !== undefined && takes && node === next.status.nodeName) continue;
      if (node !== undefined) {
        this.buckets.remove(view.bucket, node, key);
        view.nodeOf.delete(key);
      }
      if (takes) this.join(view, this.gameServers.entry(key)!);
    }
  }

  /** Adds a server its test takes. */
  private join(view: View, entry: ServerEntry): void {
    const node = entry.object.status.nodeName;
    this.buckets.insert(view.bucket, node, entry.key, true, entry);
    view.nodeOf.set(entry.key, node);
  }

  private dropView(viewKey: object, view: View): void {
    this.views.delete(viewKey);
    this.buckets.forget(view.bucket);
  }

  /**
   * The narrowest bucket the selector's labels allow; undefined when one of them has no candidate.
   * The labels' bucket keys are cached per labels object (requests are often reused).
   */
  private smallestBucket(namespace: string, pool: Pool, matchLabels: Record<string, string>): NodeBucket | undefined {
    if (pool === 'Allocated' && !this.allocatedPools.has(namespace)) this.buildAllocatedPool(namespace);
    let cached = this.selectorKeyCache.get(matchLabels);
    if (!cached || cached.namespace !== namespace || cached.pool !== pool) {
      cached = { namespace, pool, keys: Object.entries(matchLabels).map(([k, v]) => bucketKey(namespace, pool, labelKey(k, v))) };
      this.selectorKeyCache.set(matchLabels, cached);
    }
    if (cached.keys.length === 0) return this.buckets.byKey.get(bucketKey(namespace, pool, ALL));
    let smallest: NodeBucket | undefined;
    for (const key of cached.keys) {
      const bucket = this.buckets.byKey.get(key);
      if (!bucket || bucket.size === 0) return undefined;
      if (!smallest || bucket.size < smallest.size) smallest = bucket;
    }
    return smallest;
  }

  private buildAllocatedPool(namespace: string): void {
    this.allocatedPools.add(namespace);
    for (const [key, gs] of this.gameServers.entries()) {
      if (gs.metadata.namespace === namespace && poolOf(gs) === 'Allocated') this.bucket(gs, 'Allocated', key);
    }
  }

  private bucketed(gs: GameServer, pool: Pool): boolean {
    return pool === 'Ready' || this.allocatedPools.has(gs.metadata.namespace);
  }

  /**
   * Bucket keys of a server, cached per labels object (versions and batch copies share it). The
   * last labels looked up are tried first, by their values: a fleet's servers have alike labels,
   * and a large cache's lookup is a cold read (at 100,000 servers it cost more than comparing).
   */
  private keysOf(gs: GameServer, pool: Pool): string[] {
    const ns = gs.metadata.namespace;
    const labels = gs.metadata.labels;
    const last = this.lastLabels;
    let cached = last !== undefined && (labels === last || jsonEqual(labels, last)) ? this.lastCached : this.keyCache.get(labels);
    if (!cached || cached.namespace !== ns) {
      cached = { namespace: ns };
      this.keyCache.set(labels, cached);
    }
    this.lastLabels = labels;
    this.lastCached = cached;
    let keys = cached[pool];
    if (!keys) {
      keys = [bucketKey(ns, pool, ALL)];
      for (const [k, v] of Object.entries(labels)) keys.push(bucketKey(ns, pool, labelKey(k, v)));
      cached[pool] = keys;
    }
    return keys;
  }

  private bucket(gs: GameServer, pool: Pool, key: string): void {
    this.buckets.move(key, undefined, NO_KEYS, gs.status.nodeName, this.keysOf(gs, pool), this.gameServers.entry(key));
  }
}

/** The allocation index of a store: registered once, shared by every allocator of its cluster. */
export const ALLOCATION_INDEX: ProjectionDefinition<AllocationIndex, Store> = {
  name: 'allocation-index',
  create: (store) => new AllocationIndex(store.gameServers, store.nodes),
};
