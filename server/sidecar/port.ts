import type { HealthLoop, Machines } from '../lifecycle/parts.js';
import type { StoreCommits, StoreCommittedReads, StoreFeeds, StoreReads } from '../runtime/store-ports.js';

/**
 * What a sidecar is handed of the cluster: its GameServer and the gates, reads that wait for
 * durable state (an SDK answer never shows what a crash could take back) and its committed
 * changes (WatchGameServer), commits for counters,
 * lists and players, the lifecycle machine its calls drive, and the health loop its pings feed.
 */
export interface SidecarCluster
  extends Pick<StoreReads, 'gameServers' | 'gates'>,
    Pick<StoreCommittedReads, 'readCommitted' | 'settled'>,
    Pick<StoreFeeds, 'watchGameServer'>,
    StoreCommits,
    Machines,
    HealthLoop {}
