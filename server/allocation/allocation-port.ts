import type { Draws, Machines } from '../lifecycle/parts.js';
import type { StoreCommittedReads, StoreFeeds, StoreProjections, StoreReads } from '../runtime/store-ports.js';

/**
 * What allocation is handed of the cluster: the read model (GameServers, the policies and Secrets
 * of multi-cluster allocation), the gates and the clock; its GameServers' committed changes (the
 * agones-batch model's lagging watch); the allocation index it registers; answers that wait for
 * durable state; each GameServer's machine to commit an allocation through; the seeded draws,
 * and the seed the agones-batch model takes streams of its own from.
 */
export interface AllocationPort
  extends Pick<StoreReads, 'clock' | 'gates' | 'readModel' | 'gameServers'>,
    Pick<StoreFeeds, 'gameServerChanges$'>,
    Pick<StoreProjections, 'use'>,
    Pick<StoreCommittedReads, 'readCommitted'>,
    Draws,
    Machines {
  readonly seed: number;
}
