import type { GameServer, SchedulingStrategy } from '../server/kinds/gameserver-types.js';
import { type Priority, comparePriorities } from '../server/kinds/priorities.js';

/**
 * Which GameServers a GameServerSet shuts down first when it has too many (Agones's
 * SortGameServersByStrategy, reference §4.4). Pure: the same inputs give the same order, because
 * every comparison ends on the GameServer's name (Agones's unstable sort does not).
 */

/** Ready and Allocated GameServers on one node (Agones's per-node counter). */
export interface NodeCount {
  ready: number;
  allocated: number;
}
export type NodeCounts = ReadonlyMap<string, NodeCount>;

export interface ScaleDownOrderOptions {
  scheduling: SchedulingStrategy;
  /** Used only when `countsAndLists` is on. */
  priorities?: readonly Priority[];
  countsAndLists?: boolean;
  /**
   * Per-node counts over the whole cluster. A GameServer whose node has no entry (unscheduled,
   * node gone) goes first. When omitted they are counted from the GameServers being ordered.
   */
  nodeCounts?: NodeCounts;
}

/**
 * The one counting rule for GameServers per node: a Ready one counts in its node's `ready`, an
 * Allocated one in `allocated`, one without a node nowhere; every node named gets an entry.
 * `sign` -1 takes a GameServer back out (never below 0). True when a count moved. Indexes keep
 * their counts incrementally with it; `countPerNode` counts a list.
 */
export function countOnNode(counts: Map<string, NodeCount>, gs: GameServer, sign: 1 | -1): boolean {
  const node = gs.status.nodeName;
  if (!node) return false;
  let count = counts.get(node);
  if (!count) {
    count = { ready: 0, allocated: 0 };
    counts.set(node, count);
  }
  if (gs.status.state === 'Ready') count.ready = Math.max(0, count.ready + sign);
  else if (gs.status.state === 'Allocated') count.allocated = Math.max(0, count.allocated + sign);
  else return false;
  return true;
}

/** Counts Ready and Allocated per node over a list of GameServers. */
export function countPerNode(gameServers: Iterable<GameServer>): Map<string, NodeCount> {
  const counts = new Map<string, NodeCount>();
  for (const gs of gameServers) countOnNode(counts, gs, 1);
  return counts;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The comparator: negative when `a` is shut down before `b`.
 *
 * Packed, as tuple keys: node without a count first; then the node's Ready+Allocated total
 * ascending (the emptiest node is drained first); then node name (one node at a time); within a
 * node a server that is not Ready before a Ready one; then priorities; then name.
 * Distributed: priorities, then creationTimestamp ascending (oldest first), then name.
 */
export function scaleDownComparator(
  options: ScaleDownOrderOptions,
  nodeCounts: NodeCounts,
): (a: GameServer, b: GameServer) => number {
  const priorities = options.countsAndLists && options.priorities?.length ? options.priorities : undefined;
  if (options.scheduling === 'Distributed') {
    return (a, b) => {
      if (priorities) {
        const byPriority = comparePriorities(a, b, priorities);
        if (byPriority !== 0) return byPriority;
      }
      const byAge = compareNames(a.metadata.creationTimestamp, b.metadata.creationTimestamp);
      return byAge !== 0 ? byAge : compareNames(a.metadata.name, b.metadata.name);
    };
  }
  return (a, b) => {
    const nodeA = nodeCounts.get(a.status.nodeName);
    const nodeB = nodeCounts.get(b.status.nodeName);
    if ((nodeA === undefined) !== (nodeB === undefined)) return nodeA === undefined ? -1 : 1;
    const totalA = nodeA ? nodeA.ready + nodeA.allocated : 0;
    const totalB = nodeB ? nodeB.ready + nodeB.allocated : 0;
    if (totalA !== totalB) return totalA - totalB;
    const byNode = compareNames(a.status.nodeName, b.status.nodeName);
    if (byNode !== 0) return byNode;
    // Agones puts a not-yet-Ready server before a Ready one on the same node; every other state
    // ranks with the not-Ready ones, which keeps the order total.
    const readyA = a.status.state === 'Ready' ? 1 : 0;
    const readyB = b.status.state === 'Ready' ? 1 : 0;
    if (readyA !== readyB) return readyA - readyB;
    if (priorities) {
      const byPriority = comparePriorities(a, b, priorities);
      if (byPriority !== 0) return byPriority;
    }
    return compareNames(a.metadata.name, b.metadata.name);
  };
}

/** Every candidate, first victim first. */
export function sortForScaleDown(candidates: readonly GameServer[], options: ScaleDownOrderOptions): GameServer[] {
  const compare = scaleDownComparator(options, options.nodeCounts ?? countPerNode(candidates));
  return [...candidates].sort(compare);
}

/** Restores the heap below `start`: a parent stays `above` its children. */
function siftDown<T>(heap: T[], start: number, above: (a: T, b: T) => boolean): void {
  let i = start;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let top = i;
    if (l < heap.length && above(heap[l]!, heap[top]!)) top = l;
    if (r < heap.length && above(heap[r]!, heap[top]!)) top = r;
    if (top === i) return;
    const t = heap[i]!;
    heap[i] = heap[top]!;
    heap[top] = t;
    i = top;
  }
}

/**
 * The first `count` victims in the order `sortForScaleDown` gives, without sorting everything:
 * a bounded heap keeps the cost at O(n log count), so a 64-server batch out of a 100,000-server
 * set does not pay for a full sort.
 */
export function firstForScaleDown(candidates: readonly GameServer[], count: number, options: ScaleDownOrderOptions): GameServer[] {
  if (count <= 0 || candidates.length === 0) return [];
  const compare = scaleDownComparator(options, options.nodeCounts ?? countPerNode(candidates));
  if (count >= candidates.length / 4) return [...candidates].sort(compare).slice(0, count);
  // Max-heap (by deletion order) of the best `count` seen so far: its root is the worst kept.
  const heap: GameServer[] = [];
  const above = (a: GameServer, b: GameServer) => compare(a, b) > 0;
  for (const gs of candidates) {
    if (heap.length < count) {
      heap.push(gs);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!above(heap[i]!, heap[parent]!)) break;
        const t = heap[i]!;
        heap[i] = heap[parent]!;
        heap[parent] = t;
        i = parent;
      }
    } else if (compare(gs, heap[0]!) < 0) {
      heap[0] = gs;
      siftDown(heap, 0, above);
    }
  }
  return heap.sort(compare);
}

/**
 * Every candidate in `sortForScaleDown`'s order, produced as it is read: a walk that stops
 * after a few victims costs O(n + k log n), not a full sort. (A Counter or List autoscaler on a
 * Packed fleet walks node by node from the controllers' FleetDeletionIndex instead.)
 */
export function* scaleDownOrder(candidates: readonly GameServer[], options: ScaleDownOrderOptions): Generator<GameServer> {
  const compare = scaleDownComparator(options, options.nodeCounts ?? countPerNode(candidates));
  const above = (a: GameServer, b: GameServer) => compare(a, b) < 0;
  const heap = [...candidates];
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i, above);
  while (heap.length > 0) {
    const first = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      siftDown(heap, 0, above);
    }
    yield first;
  }
}
