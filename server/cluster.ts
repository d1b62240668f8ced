import { setFlagsFromString } from 'node:v8';
import { SeededRandom } from './clock.js';
import { GameServerActors } from './lifecycle/gameserver-actors.js';
import { HealthMonitor } from './lifecycle/health-monitor.js';
import { GameServerTermination } from './lifecycle/termination.js';
import type { Draws, HealthLoop, Machines, Pods, Terminations } from './lifecycle/parts.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { Store, type StoreOptions } from './runtime/store.js';
import { resourceEvent } from './kinds/resource.js';
import { NAMESPACE_KIND, namespaceObject, SYSTEM_NAMESPACES } from './kinds/namespace/namespace.js';

export type { GameServerChange } from './runtime/store.js';

export interface ClusterOptions extends StoreOptions {
  /** Seed of every random choice (uids, names, ports), so a run can be repeated. */
  seed?: number;
  /** Whether the cluster has Kubernetes's system namespaces (default true; a lone sidecar has no API to need them). */
  systemNamespaces?: boolean;
}

/** What the cluster builds on its store: the parts every role's port is cut from (server/lifecycle/parts.ts). */
export interface ClusterParts extends Draws, Machines, HealthLoop, Pods, Terminations {
  /** The seed of the options: models with draws of their own take their streams from it. */
  readonly seed: number;
}

/**
 * The simulated cluster, as the composition roots hand it out: the store (log, read model, change
 * feeds, clock, gates) with the parts built on it. Every other file takes the narrow port it
 * declares beside itself, which this record satisfies.
 */
export type Cluster = Store & ClusterParts;

/**
 * Turns off V8's allocation-site pretenuring in a process that serves a cluster (`serve`, and
 * bench:allocate, which measures what serve does). While a fleet is set up, every object made at
 * a dozen of its literals lives on, so V8 starts allocating those literals' objects straight in
 * the old generation (--trace-pretenuring). Under allocations the same literals make short-lived
 * objects: dead in the old generation until the next full collection, they keep the young objects
 * they point at alive through every scavenge in between, which then copied and promoted four times
 * what they otherwise do and took 3-6 times as long. Whether it happened depended on where
 * set-up's scavenges fell (most runs at 3,000 and 10,000 GameServers). Set at run time, before
 * the cluster is built, the flag takes effect.
 */
export function servingHeapSettings(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

/** Assembles a cluster: the store, the seeded generator, the lifecycle runner and health loop, the pods, and the system namespaces. */
export function createCluster(options: ClusterOptions): Cluster {
  const store = new Store(options);
  const seed = options.seed ?? 1;
  // A stream per position in the log: a fresh log with the same seed gives the same log, and a
  // restart draws uids and names no earlier start has drawn.
  const rng = new SeededRandom(seed, store.log.lastSeq);
  const actors = new GameServerActors(store);
  actors.start();
  const health = new HealthMonitor(store, actors);
  health.start();
  store.onClose(() => actors.stopAll());
  store.onClose(() => health.stopAll());
  const pods = new PodRuntime();
  // A pod goes with its GameServer.
  store.gameServerChanges$.subscribe((change) => {
    if (!change.object) pods.remove(change.key);
  });
  const termination = new GameServerTermination(store, pods);
  const cluster: Cluster = Object.assign(store, { seed, rng, actors, health, pods, termination });
  if (options.systemNamespaces ?? true) createSystemNamespaces(cluster);
  return cluster;
}

/** A cluster starts with its system namespaces (`default` among them); a log made before they existed gets them now. */
function createSystemNamespaces(cluster: Cluster): void {
  const missing = SYSTEM_NAMESPACES.filter((name) => !cluster.get(NAMESPACE_KIND, '', name));
  const events = missing.map((name) =>
    resourceEvent('ResourceCreated', NAMESPACE_KIND, '', name, { object: namespaceObject(name, cluster.rng.uid(), cluster.clock.now()) }),
  );
  // Applied at once (the read model has them before any request); durable with the next commit,
  // and no reader sees them before that (reads wait for durable state).
  cluster.commit(events, { type: 'startup', detail: 'the cluster starts with its system namespaces' }).catch((error: unknown) =>
    console.error('fleetsim: could not record the system namespaces:', error),
  );
}
