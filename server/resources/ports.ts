import type { Draws, Terminations } from '../lifecycle/parts.js';
import type { StoreCommits, StoreCommittedReads, StoreReads } from '../runtime/store-ports.js';

/*
 * What the resource API's command side is handed of the cluster: the port each part takes says
 * what it may touch. The assembled cluster (server/cluster.ts) satisfies both.
 */

/**
 * The command handler (service.ts): the read model it decides on, commits, uids and generated
 * names from the seeded generator, answers once what they rest on is durable, and how a deleted
 * GameServer leaves (its pod runs a process).
 */
export interface ResourceServicePort
  extends Pick<StoreReads, 'clock' | 'gates' | 'get' | 'readModel'>,
    StoreCommits,
    Pick<StoreCommittedReads, 'settled'>,
    Draws,
    Terminations {}

/** What fleetsim installs of Agones's deployment (agones-install.ts): what is there, uids from the seeded generator, and commits. */
export interface AgonesInstallPort extends Pick<StoreReads, 'clock' | 'get'>, StoreCommits, Draws {}

/** Agones's control-plane Deployments and pods (control-plane.ts): the install's, and the pods stored in the read model. */
export interface ControlPlanePort extends AgonesInstallPort, Pick<StoreReads, 'readModel'> {}
