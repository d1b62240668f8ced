import type { GameServer, GameServerState, SchedulingStrategy } from '../server/kinds/gameserver/gameserver.js';
import { type Int64, subInt64 } from '../server/int64.js';

/**
 * Which GameServers a GameServerSet shuts down first when it has too many (Agones's
 * SortGameServersByStrategy, reference §4.4). Pure: the same inputs give the same order, because
 * every comparison ends on the GameServer's name (Agones's unstable sort does not).
 */

/** A Counts/Lists priority of a Fleet or GameServerSet (`spec.priorities[]`). */
export interface Priority {
  type: 'Counter' | 'List';
  key: string;
  order?: 'Ascending' | 'Descending';
}

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

const BEFORE_READY: ReadonlySet<GameServerState> = new Set(['PortAllocation', 'Creating', 'Starting', 'Scheduled', 'RequestReady']);

export function isBeforeReady(state: GameServerState): boolean {
  return BEFORE_READY.has(state);
}

/** Counts Ready and Allocated per node; every node a GameServer names gets an entry. */
export function countPerNode(gameServers: Iterable<GameServer>): Map<string, NodeCount> {
  const counts = new Map<string, NodeCount>();
  for (const gs of gameServers) {
    const node = gs.status.nodeName;
    if (!node) continue;
    let count = counts.get(node);
    if (!count) {
      count = { ready: 0, allocated: 0 };
      counts.set(node, count);
    }
    if (gs.status.state === 'Ready') count.ready++;
    else if (gs.status.state === 'Allocated') count.allocated++;
  }
  return counts;
}

/** Room left under a Counter or List priority, or undefined when the GameServer lacks the key. */
function available(gs: GameServer, priority: Priority): Int64 | undefined {
  if (priority.type === 'Counter') {
    const counter = gs.status.counters?.[priority.key];
    return counter ? subInt64(counter.capacity, counter.count) : undefined;
  }
  const list = gs.status.lists?.[priority.key];
  return list ? list.capacity - list.values.length : undefined;
}

/**
 * Deletion order under Counts/Lists priorities: Ascending (the default) deletes the GameServer
 * with less room first, Descending the one with more; one that has the key goes before one
 * that lacks it, whatever the order. Zero when the priorities do not tell them apart.
 */
export function compareByPriorities(a: GameServer, b: GameServer, priorities: readonly Priority[]): number {
  for (const priority of priorities) {
    const roomA = available(a, priority);
    const roomB = available(b, priority);
    if (roomA === undefined && roomB === undefined) continue;
    if (roomA === undefined) return 1;
    if (roomB === undefined) return -1;
    if (roomA === roomB) continue;
    const ascending = (priority.order ?? 'Ascending') === 'Ascending';
    return (roomA < roomB) === ascending ? -1 : 1;
  }
  return 0;
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
        const byPriority = compareByPriorities(a, b, priorities);
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
      const byPriority = compareByPriorities(a, b, priorities);
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
  const above = (i: number, j: number) => compare(heap[i]!, heap[j]!) > 0;
  const swap = (i: number, j: number) => {
    const t = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = t;
  };
  const siftDown = (start: number) => {
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && above(l, top)) top = l;
      if (r < heap.length && above(r, top)) top = r;
      if (top === i) return;
      swap(i, top);
      i = top;
    }
  };
  for (const gs of candidates) {
    if (heap.length < count) {
      heap.push(gs);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!above(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (compare(gs, heap[0]!) < 0) {
      heap[0] = gs;
      siftDown(0);
    }
  }
  return heap.sort(compare);
}
