import type { GameServer } from '../../server/kinds/gameserver-types.js';
import { NodeCounter } from '../../server/runtime/node-counter.js';
import type { ObjectStore } from '../../server/runtime/object-store.js';

/**
 * An index over `store` and the node counter it reads, both built from the store; `count` tells
 * the counter of a change, which the store does before the index hears of it.
 */
export function withNodeCounter<I extends { rebuild(): void }>(
  store: ObjectStore<GameServer>,
  make: (nodes: NodeCounter) => I,
): { index: I; nodes: NodeCounter; count: (previous: GameServer | undefined, object: GameServer | undefined) => void } {
  const nodes = new NodeCounter(store);
  nodes.rebuild();
  const index = make(nodes);
  index.rebuild();
  return { index, nodes, count: (previous, object) => nodes.gameServerApplied({ previous, object }) };
}
