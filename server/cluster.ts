import { SeededRandom } from './clock.js';
import { GameServerActors } from './lifecycle/gameserver-actors.js';
import { HealthMonitor } from './lifecycle/health-monitor.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { Store, type StoreOptions } from './runtime/store.js';

export type { GameServerChange } from './runtime/store.js';

export interface ClusterOptions extends StoreOptions {
  /** Seed of every random choice (uids, names, ports), so a run can be repeated. */
  seed?: number;
}

/**
 * The simulated cluster: the store (log, read model, change feeds), each GameServer's lifecycle
 * machine, the sidecars' health loop, the clock, the feature gates, the seeded generator, and what
 * the kubelet knows of each pod (container state and output).
 */
export class Cluster extends Store {
  readonly rng: SeededRandom;
  readonly actors: GameServerActors;
  readonly health: HealthMonitor;
  readonly pods = new PodRuntime();

  constructor(options: ClusterOptions) {
    super(options);
    // A stream per position in the log: a fresh log with the same seed gives the same log, and a
    // restart draws uids and names no earlier start has drawn.
    this.rng = new SeededRandom(options.seed ?? 1, this.log.lastSeq);
    this.actors = new GameServerActors(this);
    this.actors.start();
    this.health = new HealthMonitor(this, this.actors);
    this.health.start();
    // A pod goes with its GameServer.
    this.gameServerChanges$.subscribe((change) => {
      if (!change.object) this.pods.remove(change.key);
    });
  }

  override close(): void {
    this.actors.stopAll();
    this.health.stopAll();
    super.close();
  }
}
