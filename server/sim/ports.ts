import type { Draws, Pods, Terminations } from '../lifecycle/parts.js';
import type { StoreCommits, StoreFeeds, StoreReads } from '../runtime/store-ports.js';
import type { SidecarCluster } from '../sidecar/port.js';

/*
 * What the simulated world is handed of the cluster: the port a constructor or function takes
 * says what it may touch. The assembled cluster (server/cluster.ts) satisfies each.
 */

/** Making simulated nodes: what exists, a uid for each new one, and the commit that creates them. */
export interface NodeMaker extends Pick<StoreReads, 'clock' | 'get' | 'readModel'>, StoreCommits, Draws {}

/**
 * The simulated game-server processes: the GameServers and their changes, what their sidecars
 * are handed (a process calls the SDK and pings), the pods (a process's container) and how a
 * terminating GameServer leaves once its process exits.
 */
export interface SimulatedWorld extends SidecarCluster, Pick<StoreReads, 'clock'>, Pick<StoreFeeds, 'gameServerChanges$'>, Draws, Pods, Terminations {}
