import type { SeededRandom } from '../clock.js';
import type { PodRuntime } from '../runtime/pod-runtime.js';
import type { GameServerActors } from './gameserver-actors.js';
import type { HealthMonitor } from './health-monitor.js';
import type { GameServerTermination } from './termination.js';

/*
 * The parts the cluster builds on its store (server/cluster.ts), one face each, for the ports
 * the roles declare beside themselves (with the store's faces, server/runtime/store-ports.ts).
 */

/** Uids, names and ports come from the seeded generator. */
export interface Draws {
  readonly rng: SeededRandom;
}

/** Each GameServer's lifecycle machine, to tell one what happened. */
export interface Machines {
  readonly actors: GameServerActors;
}

/** The sidecars' health loop. */
export interface HealthLoop {
  readonly health: HealthMonitor;
}

/** What the kubelet knows of each pod (container state and output). */
export interface Pods {
  readonly pods: PodRuntime;
}

/** How a GameServer leaves (./termination.ts). */
export interface Terminations {
  readonly termination: GameServerTermination;
}
