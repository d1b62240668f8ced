import type { PodLossStore } from '../../lifecycle/pod-loss.js';
import type { ControlPlanePort, ResourceServicePort } from '../../resources/ports.js';
import type { StoreCommittedReads, StoreFeeds, StoreReads } from '../../runtime/store-ports.js';

/*
 * What the Kubernetes resource API's handlers are handed of the cluster: the port each takes says
 * what it may touch. The assembled cluster (server/cluster.ts) satisfies every one.
 */

/** Lists and watches (list-watch.ts): the read model, the committed resourceVersion, and the committed changes from one. */
export interface ListWatchPort extends Pick<StoreReads, 'clock' | 'get'>, Pick<StoreCommittedReads, 'resourceVersion'>, Pick<StoreFeeds, 'changesSince'> {}

/** The installed CustomResourceDefinitions (crds.ts): as old as the `default` namespace, listed at the committed resourceVersion. */
export interface CrdsPort extends Pick<StoreReads, 'clock' | 'get'>, Pick<StoreCommittedReads, 'resourceVersion'> {}

/**
 * Pods (pods.ts): the GameServers they are built from and what the kubelet knows of them, their
 * committed changes (watch, a followed log), and a deleted pod's loss (server/lifecycle/pod-loss.ts),
 * answered once durable; Agones's own pods, stored, and their replacement (control-plane.ts).
 */
export interface PodsPort
  extends Pick<StoreReads, 'clock' | 'gameServers'>,
    Pick<StoreCommittedReads, 'resourceVersion' | 'settled'>,
    Pick<StoreFeeds, 'changesSince' | 'watchGameServer'>,
    PodLossStore,
    ControlPlanePort {}

/**
 * The resource API's router (resource-api.ts): what the handlers it routes to take, reads answered
 * from durable state only, and the resource service it builds when handed none.
 */
export interface ResourceApiPort extends ListWatchPort, CrdsPort, PodsPort, ResourceServicePort, Pick<StoreCommittedReads, 'readCommitted'> {}
