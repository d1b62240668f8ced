import type { SeededRandom } from '../clock.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { StoreEntry } from '../runtime/object-store.js';
import type { NodeCount } from '../../machines/scale-down-order.js';

/** The servers of one bucket on one node, sorted by key (so by name within a namespace). */
interface NodeSlot {
  node: string;
  /** The node's allocatable counts (the node counter's, a live object), read when ordering. */
  counts: NodeCount;
  servers: string[];
  /** The store's entry of each server, in the same order: a pick answers it, and reads the server from it without a lookup. */
  entries: Array<ServerEntry | undefined>;
  /** `servers[0]`, kept beside it: the ordering reads it on every step. */
  first: string;
  /** The slot's links in its bucket's node order (a treap: see `NodeOrder`). */
  left?: NodeSlot;
  right?: NodeSlot;
  parent?: NodeSlot;
  priority: number;
}

/** A request's test of a candidate; none when the bucket holds exactly what the request takes. */
export type Accept = (gs: GameServer) => boolean;

/** A server's entry in the object store: its key, and its current version. */
export type ServerEntry = StoreEntry<GameServer>;

/**
 * Candidates of one namespace grouped by node, the nodes kept in Packed order: known nodes first,
 * most Allocated, then most Ready, then by first server name (a bucket holds one namespace, and a
 * server is on one node, so no two slots tie). Nodes whose counts tie are one rank, and the first
 * of a rank holds the rank's best name. The allocation index keeps one per label and pool.
 */
export class NodeBucket {
  private readonly order = new NodeOrder();
  private readonly slots = new Map<string, NodeSlot>();
  size = 0;

  /** The nodes in order, each with its servers. */
  nodes(): Array<{ node: string; servers: string[] }> {
    return Array.from(this.order, (slot) => ({ node: slot.node, servers: [...slot.servers] }));
  }

  nodeNames(): string[] {
    return Array.from(this.order, (slot) => slot.node);
  }

  /** Each key, node by node in order. */
  *keys(): Iterable<string> {
    for (const slot of this.order) yield* slot.servers;
  }

  /**
   * Adds `key` on `node`; true when the node is new to the bucket. `counts`: each node's, live.
   * `reorder` false: the caller puts the node back in order next (`repositionNode`).
   */
  insert(node: string, counts: (node: string) => NodeCount, key: string, reorder = true, entry?: ServerEntry): boolean {
    let slot = this.slots.get(node);
    const added = !slot;
    if (!slot) {
      slot = { node, counts: counts(node), servers: [key], entries: [entry], first: key, priority: 0 };
      this.slots.set(node, slot);
      this.order.add(slot);
    } else {
      const at = insertSorted(slot.servers, key);
      if (at >= 0) insertAt(slot.entries, at, entry);
      if (at === 0) {
        // A new first name: the node's place among those it ties with.
        slot.first = key;
        if (reorder) this.order.reposition(slot);
      }
    }
    this.size++;
    return added;
  }

  /** Removes `key` from `node`: false when it was not there; 'emptied' when the node has no server left here. `reorder`: as `insert`'s. */
  remove(node: string, key: string, reorder = true): boolean | 'emptied' {
    const slot = this.slots.get(node);
    if (!slot) return false;
    const at = removeSorted(slot.servers, key);
    if (at < 0) return false;
    removeAt(slot.entries, at);
    this.size--;
    if (slot.servers.length === 0) {
      this.order.delete(slot);
      this.slots.delete(node);
      return 'emptied';
    }
    if (at === 0) {
      slot.first = slot.servers[0]!;
      if (reorder) this.order.reposition(slot);
    }
    return true;
  }

  /** Puts `node` back in order after its counts moved (usually zero or one step). */
  repositionNode(node: string): void {
    const slot = this.slots.get(node);
    if (slot) this.order.reposition(slot);
  }

  /** Sorts the nodes again: two nodes' counts moved at once, and a step-wise move assumes every other node in place. */
  sort(): void {
    this.order.sort();
  }

  /**
   * The entry of the best server `accept` takes, in Packed order (busiest node first, then
   * `better`, then the name). Nodes whose counts tie are one rank: Agones sorts their servers
   * together, so the best of all of them wins, not the best of the node whose name sorts first.
   * Without `accept` and `better`, a member is taken as it stands: no server is read.
   */
  findPacked(accept: Accept | undefined, better?: (a: GameServer, b: GameServer) => number): ServerEntry | undefined {
    let best: ServerEntry | undefined;
    let rank: NodeSlot | undefined;
    for (let slot = this.order.first(); slot; slot = next(slot)) {
      // The busiest rank holding a match is decided once a less busy node comes up; without
      // other tie-breaks, also once a tied node's first name comes after the best one.
      if (best !== undefined) {
        // One rank: the same counts, or both nodes unknown.
        const tied = slot.counts.allocated === rank!.counts.allocated && slot.counts.ready === rank!.counts.ready && (slot.node === '') === (rank!.node === '');
        if (!tied || (!better && slot.first >= best.key)) return best;
      }
      const { servers, entries } = slot;
      for (let i = 0; i < servers.length; i++) {
        // Keys are in name order (one namespace per bucket): without other tie-breaks, nothing
        // from here on in this node can beat the best so far, so a tied node costs one compare.
        if (!better && best !== undefined && servers[i]! >= best.key) break;
        const entry = entries[i]!;
        if (accept && !accept(entry.object)) continue;
        if (best === undefined || (better ? better(entry.object, best.object) < 0 : servers[i]! < best.key)) {
          best = entry;
          rank = slot;
        }
        if (!better) break;
      }
    }
    return best;
  }

  /**
   * The entry of a uniformly random server `accept` takes. Rejection sampling stays uniform
   * among matches; after a few misses, all of them are scanned.
   */
  findRandom(accept: Accept | undefined, rng: SeededRandom): ServerEntry | undefined {
    if (this.size === 0) return undefined;
    const takes = (entry: ServerEntry) => !accept || accept(entry.object);
    for (let attempt = 0; attempt < 8; attempt++) {
      let r = rng.int(this.size);
      for (let slot = this.order.first(); slot; slot = next(slot)) {
        if (r >= slot.servers.length) {
          r -= slot.servers.length;
          continue;
        }
        if (takes(slot.entries[r]!)) return slot.entries[r];
        break;
      }
    }
    const matches: ServerEntry[] = [];
    for (const slot of this.order) for (const entry of slot.entries) if (takes(entry!)) matches.push(entry!);
    return matches.length ? matches[rng.int(matches.length)] : undefined;
  }

  /** The entry of the best server `accept` takes by `compare` alone (no node order). */
  findBest(accept: Accept | undefined, compare: (a: GameServer, b: GameServer) => number): ServerEntry | undefined {
    let best: ServerEntry | undefined;
    for (const slot of this.order) {
      for (const entry of slot.entries) {
        if ((!accept || accept(entry!.object)) && (!best || compare(entry!.object, best.object) < 0)) best = entry;
      }
    }
    return best;
  }
}

/**
 * A bucket's slots in Packed order, as a treap whose links are kept in the slots themselves:
 * adding, removing and moving a node cost O(log nodes), where an array renumbers every later
 * slot when a node leaves or comes back near the front (a node's last Ready server allocated).
 * A slot leaves by its links, never by comparing: its counts may have moved already. The
 * priorities come from a seeded generator, so the shape, though not the order, is arbitrary.
 */
class NodeOrder {
  private root: NodeSlot | undefined;
  private seed = 0x2545f491;

  *[Symbol.iterator](): Iterator<NodeSlot> {
    for (let slot = this.first(); slot; slot = next(slot)) yield slot;
  }

  first(): NodeSlot | undefined {
    let slot = this.root;
    while (slot?.left) slot = slot.left;
    return slot;
  }

  /** Puts `slot` in its place, every other slot being in order. */
  add(slot: NodeSlot): void {
    slot.left = slot.right = slot.parent = undefined;
    slot.priority = this.random();
    if (!this.root) {
      this.root = slot;
      return;
    }
    let at: NodeSlot = this.root;
    for (;;) {
      const side = before(slot, at) ? 'left' : 'right';
      const child: NodeSlot | undefined = at[side];
      if (!child) {
        at[side] = slot;
        slot.parent = at;
        break;
      }
      at = child;
    }
    while (slot.parent && slot.parent.priority < slot.priority) this.rotateUp(slot);
  }

  delete(slot: NodeSlot): void {
    // Down to a leaf, the child of higher priority taking its place each step; then unlinked.
    while (slot.left || slot.right) {
      this.rotateUp(!slot.right || (slot.left && slot.left.priority > slot.right.priority) ? slot.left! : slot.right);
    }
    this.link(slot.parent, slot, undefined);
    slot.parent = undefined;
  }

  /** Puts `slot` back in order after its counts or first name moved, the others in place. */
  reposition(slot: NodeSlot): void {
    const previous = prev(slot);
    const following = next(slot);
    if ((!previous || !before(slot, previous)) && (!following || !before(following, slot))) return;
    this.delete(slot);
    this.add(slot);
  }

  /** Orders every slot again. */
  sort(): void {
    const slots = [...this];
    this.root = undefined;
    slots.sort((x, y) => (before(x, y) ? -1 : 1));
    for (const slot of slots) this.add(slot);
  }

  private random(): number {
    // xorshift32
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  /** Lifts `x` above its parent, keeping the order. */
  private rotateUp(x: NodeSlot): void {
    const p = x.parent!;
    if (p.left === x) {
      p.left = x.right;
      if (x.right) x.right.parent = p;
      x.right = p;
    } else {
      p.right = x.left;
      if (x.left) x.left.parent = p;
      x.left = p;
    }
    this.link(p.parent, p, x);
    p.parent = x;
  }

  /** Puts `by` where `child` hung under `parent` (the root when none). */
  private link(parent: NodeSlot | undefined, child: NodeSlot, by: NodeSlot | undefined): void {
    if (!parent) this.root = by;
    else if (parent.left === child) parent.left = by;
    else parent.right = by;
    if (by) by.parent = parent;
  }
}

/** The slot after `slot` in order (toward 'right') or before it ('left'). */
function step(slot: NodeSlot, toward: 'left' | 'right'): NodeSlot | undefined {
  const away = toward === 'right' ? 'left' : 'right';
  let s = slot[toward];
  if (s) {
    while (s[away]) s = s[away];
    return s;
  }
  s = slot;
  while (s.parent && s.parent[toward] === s) s = s.parent;
  return s.parent;
}

const next = (slot: NodeSlot) => step(slot, 'right');
const prev = (slot: NodeSlot) => step(slot, 'left');

/**
 * The index's buckets by key, and by node the buckets holding it, so that a node whose counts
 * moved is put back in order in each. A change to a GameServer is one call per step here
 * (remove from its buckets, insert in its buckets, reorder its node).
 */
export class NodeBuckets {
  private readonly buckets = new Map<string, NodeBucket>();
  /** Read on every request, as a map rather than through a method. */
  readonly byKey: ReadonlyMap<string, NodeBucket> = this.buckets;
  private readonly ofNode = new Map<string, Set<NodeBucket>>();

  /** `counts`: a node's allocatable counts, a live object the ordering reads. */
  constructor(private readonly counts: (node: string) => NodeCount) {}

  clear(): void {
    this.buckets.clear();
    this.ofNode.clear();
  }

  /**
   * One GameServer's change, in one call: `key` leaves the buckets of `fromKeys` on `fromNode` and
   * joins those of `toKeys` on `toNode` (a bucket is made when missing, and goes when emptied);
   * then the nodes whose counts moved go back in Packed order (see `countsMoved`). `fromNode` and
   * `toNode` are those nodes (undefined: the server was, or is, in no pool there). `entry`: the
   * store's entry of `key`, which the buckets it joins answer to a pick.
   */
  move(key: string, fromNode: string | undefined, fromKeys: readonly string[], toNode: string | undefined, toKeys: readonly string[], entry?: ServerEntry): void {
    // The nodes are reordered once below, not at each removal and insertion.
    for (const bk of fromKeys) {
      const bucket = this.buckets.get(bk);
      const removed = bucket?.remove(fromNode!, key, false);
      if (removed === 'emptied') this.ofNode.get(fromNode!)?.delete(bucket!);
      if (removed && bucket!.size === 0) this.buckets.delete(bk);
    }
    for (const bk of toKeys) {
      let bucket = this.buckets.get(bk);
      if (!bucket) {
        bucket = new NodeBucket();
        this.buckets.set(bk, bucket);
      }
      this.insert(bucket, toNode!, key, false, entry);
    }
    this.countsMoved(fromNode, toNode);
  }

  /** Adds to a bucket kept by the caller (a view), which this then reorders with its nodes. */
  insert(bucket: NodeBucket, node: string, key: string, reorder = true, entry?: ServerEntry): void {
    if (!bucket.insert(node, this.counts, key, reorder, entry)) return;
    let buckets = this.ofNode.get(node);
    if (!buckets) {
      buckets = new Set();
      this.ofNode.set(node, buckets);
    }
    buckets.add(bucket);
  }

  /** Removes from a bucket kept by the caller; false when the key was not there. */
  remove(bucket: NodeBucket, node: string, key: string): boolean {
    const removed = bucket.remove(node, key);
    if (removed === 'emptied') this.ofNode.get(node)?.delete(bucket);
    return removed !== false;
  }

  /** Stops reordering a bucket the caller no longer keeps. */
  forget(bucket: NodeBucket): void {
    for (const node of bucket.nodeNames()) this.ofNode.get(node)?.delete(bucket);
  }

  /**
   * The counts of `from` and `to` moved in one change. One node (an allocation: Ready to Allocated
   * on the same node) moves a step or two in each bucket; two nodes (a server moved from one to
   * the other) sort each bucket holding either again, as a step-wise move assumes every other
   * node in place.
   */
  private countsMoved(from: string | undefined, to: string | undefined): void {
    if (from !== undefined && to !== undefined && from !== to) {
      for (const bucket of new Set([...(this.ofNode.get(from) ?? []), ...(this.ofNode.get(to) ?? [])])) bucket.sort();
      return;
    }
    const node = from ?? to;
    if (node === undefined) return;
    for (const bucket of this.ofNode.get(node) ?? []) bucket.repositionNode(node);
  }
}

/** Packed node order: known nodes first, most Allocated, then most Ready, then by first server name. */
function before(a: NodeSlot, b: NodeSlot): boolean {
  if ((a.node === '') !== (b.node === '')) return b.node === '';
  if (a.counts.allocated !== b.counts.allocated) return a.counts.allocated > b.counts.allocated;
  if (a.counts.ready !== b.counts.ready) return a.counts.ready > b.counts.ready;
  return a.first < b.first;
}

function position(sorted: string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Inserts `key` in order; its index, or -1 when it was there already. */
function insertSorted(sorted: string[], key: string): number {
  const i = position(sorted, key);
  if (sorted[i] === key) return -1;
  insertAt(sorted, i, key);
  return i;
}

/**
 * Removes `key`; the index it had, or -1 when it was not there. The first is tried before the
 * search: Packed allocates a node's first server, and that server is first in its other buckets.
 */
function removeSorted(sorted: string[], key: string): number {
  const i = sorted[0] === key ? 0 : position(sorted, key);
  if (sorted[i] !== key) return -1;
  removeAt(sorted, i);
  return i;
}

/**
 * `list.splice(at, 0, item)` without the array of removed items splice makes: a bucket's lists
 * change at every allocation and every return to Ready, mostly at their ends.
 */
function insertAt<T>(list: T[], at: number, item: T): void {
  if (at === 0) list.unshift(item);
  else if (at === list.length) list.push(item);
  else list.splice(at, 0, item);
}

/** `list.splice(at, 1)`, likewise (Packed takes a node's first server). */
function removeAt(list: unknown[], at: number): void {
  if (at === 0) list.shift();
  else if (at === list.length - 1) list.pop();
  else list.splice(at, 1);
}
