import type { Store } from '../runtime/store.js';
import type { StoreFeeds, StoreProjections, StoreReads } from '../runtime/store-ports.js';

/**
 * What the metrics are handed of the cluster: the read model and the node counter for the gauges
 * read at each scrape, the committed GameServer changes for the counters that follow them, and
 * the store's commit observer, through which the controllers' writes are counted.
 */
export interface MetricsCluster
  extends Pick<StoreReads, 'gameServers' | 'gates' | 'readModel'>,
    Pick<StoreProjections, 'nodes'>,
    Pick<StoreFeeds, 'gameServerChanges$'>,
    Pick<Store, 'commitObserver'> {}
