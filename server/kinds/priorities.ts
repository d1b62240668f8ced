import type { GameServer } from './gameserver-types.js';
import { type Int64, subInt64 } from '../int64.js';

/**
 * Counts/Lists priorities (`spec.priorities[]` of a GameServerAllocation, Fleet or
 * GameServerSet) and the one order they put GameServers in: allocation tries, and scale-down
 * deletes, in this order.
 */

export type PriorityType = 'Counter' | 'List';
export type PriorityOrder = 'Ascending' | 'Descending';

export interface Priority {
  type: PriorityType;
  key: string;
  /** Defaults to Ascending. */
  order?: PriorityOrder;
}

/** Room left under a priority: capacity minus count, or minus the number of values; undefined without the key. */
function availableFor(gs: GameServer, priority: Priority): Int64 | undefined {
  if (priority.type === 'Counter') {
    const counter = gs.status.counters?.[priority.key];
    return counter ? subInt64(counter.capacity, counter.count) : undefined;
  }
  if (priority.type === 'List') {
    const list = gs.status.lists?.[priority.key];
    return list ? list.capacity - list.values.length : undefined;
  }
  return undefined;
}

/**
 * Agones's CompareCountAndListPriorities as a comparator (negative: `a` comes first). For each
 * priority in turn: when both have the key, Ascending puts less room first and Descending more;
 * when only one has it, that one goes first whatever the order; when neither, the next priority
 * decides. 0 when the priorities do not tell them apart.
 */
export function comparePriorities(a: GameServer, b: GameServer, priorities: readonly Priority[] | undefined): number {
  if (!priorities) return 0;
  for (const priority of priorities) {
    const roomA = availableFor(a, priority);
    const roomB = availableFor(b, priority);
    if (roomA === undefined && roomB === undefined) continue;
    if (roomA === undefined) return 1;
    if (roomB === undefined) return -1;
    if (roomA === roomB) continue;
    const ascending = priority.order !== 'Descending';
    return (roomA < roomB) === ascending ? -1 : 1;
  }
  return 0;
}
