import type { Draws, Machines, Pods, Terminations } from '../lifecycle/parts.js';
import type { PodLossStore } from '../lifecycle/pod-loss.js';
import type { StoreCommits, StoreFeeds, StoreLog, StoreProjections, StoreReads } from '../runtime/store-ports.js';

/*
 * What each controller is handed of the cluster: the port its constructor takes says what it may
 * touch. The assembled cluster (server/cluster.ts) satisfies every one.
 */

/** Every controller reads the read model, hears the change feeds and commits what it decides. */
export interface ControllerStore extends StoreReads, StoreFeeds, StoreCommits {}

export interface FleetControllerPort extends ControllerStore, Draws {}
export interface GameServerSetControllerPort extends ControllerStore, StoreProjections, Draws, Machines {}
export interface FleetAutoscalerControllerPort extends ControllerStore, StoreProjections, Draws {}
export interface GameServerControllerPort extends ControllerStore, StoreProjections, Draws, Machines, Terminations {}
/** Real game-server processes: their pods, their machines, and how a terminating one leaves once its process exits. */
export interface GameServerProcessesPort extends ControllerStore, Draws, Machines, Pods, Terminations {}
export type NamespaceControllerPort = ControllerStore;
export interface NodeAutoscalerPort extends ControllerStore, Draws, StoreLog {}
export interface SdkServerTerminationPort extends ControllerStore, Terminations {}
/** A node's loss: which GameServers it held, and their pods' loss (server/lifecycle/pod-loss.ts). */
export interface NodeLossPort extends Pick<StoreFeeds, 'changesOf'>, PodLossStore {}
