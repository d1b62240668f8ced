import { decideAllocation } from '../../machines/allocation.js';
import type { Cluster } from '../cluster.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import type { GameServerAllocation, GameServerAllocationStatus } from '../kinds/gameserverallocation/gameserverallocation.js';
import { objectKey } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';

/** What an allocation decided, and when it was committed. */
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

/** An allocation written to the store: the GameServer as it now is, and when that is durable. */
export interface CommittedAllocation {
  gameServer: GameServer;
  committed: Promise<void>;
}

/**
 * Allocates `gs` for `gsa` as one atomic event through the GameServer's machine (the read model
 * moves at once); undefined when the machine refuses (the server left the pool meanwhile).
 */
export function commitAllocation(cluster: Cluster, gs: GameServer, gsa: GameServerAllocation, cause: Cause | undefined): CommittedAllocation | undefined {
  const event = decideAllocation(gs, gsa, cluster.clock.now(), cluster.gates);
  const key = objectKey(event.namespace, event.name);
  const committed = cluster.actors.sendByKey(key, { type: 'allocator.allocate', event }, cause);
  if (!committed) return undefined;
  return { gameServer: cluster.gameServers.getByKey(key)!, committed };
}
