import { SeededRandom } from './clock.js';
import { GameServerActors } from './lifecycle/gameserver-actors.js';
import { HealthMonitor } from './lifecycle/health-monitor.js';
import { PodRuntime } from './runtime/pod-runtime.js';
import { foreignFinalizers, type GameServer } from './kinds/gameserver/gameserver.js';
import { gameServerEvent } from './kinds/gameserver/events.js';
import { objectKey, rfc3339 } from './kinds/meta.js';
import type { Cause } from './log/cause.js';
import type { NewEvent } from './log/event-log.js';
import { Store, type StoreOptions } from './runtime/store.js';
import { sdkServerHoldsUntil } from '../machines/pod-lifecycle.js';
import { resourceEvent } from './kinds/resource.js';
import { NAMESPACE_KIND, namespaceObject, SYSTEM_NAMESPACES } from './kinds/namespace/namespace.js';

export type { GameServerChange } from './runtime/store.js';

export interface ClusterOptions extends StoreOptions {
  /** Seed of every random choice (uids, names, ports), so a run can be repeated. */
  seed?: number;
  /** Whether the cluster has Kubernetes's system namespaces (default true; a lone sidecar has no API to need them). */
  systemNamespaces?: boolean;
}

/**
 * The simulated cluster: the store (log, read model, change feeds), each GameServer's lifecycle
 * machine, the sidecars' health loop, the clock, the feature gates, the seeded generator, and what
 * the kubelet knows of each pod (container state and output).
 */
export class Cluster extends Store {
  /** The seed of `options`: models with draws of their own take their streams from it. */
  readonly seed: number;
  readonly rng: SeededRandom;
  readonly actors: GameServerActors;
  readonly health: HealthMonitor;
  readonly pods = new PodRuntime();

  constructor(options: ClusterOptions) {
    super(options);
    // A stream per position in the log: a fresh log with the same seed gives the same log, and a
    // restart draws uids and names no earlier start has drawn.
    this.seed = options.seed ?? 1;
    this.rng = new SeededRandom(this.seed, this.log.lastSeq);
    this.actors = new GameServerActors(this);
    this.actors.start();
    this.health = new HealthMonitor(this, this.actors);
    this.health.start();
    if (options.systemNamespaces ?? true) this.createSystemNamespaces();
    // A pod goes with its GameServer.
    this.gameServerChanges$.subscribe((change) => {
      if (!change.object) this.pods.remove(change.key);
    });
  }

  /** A cluster starts with its system namespaces (`default` among them); a log made before they existed gets them now. */
  private createSystemNamespaces(): void {
    const missing = SYSTEM_NAMESPACES.filter((name) => !this.get(NAMESPACE_KIND, '', name));
    const events = missing.map((name) =>
      resourceEvent('ResourceCreated', NAMESPACE_KIND, '', name, { object: namespaceObject(name, this.rng.uid(), this.clock.now()) }),
    );
    // Applied at once (the read model has them before any request); durable with the next commit,
    // and no reader sees them before that (reads wait for durable state).
    this.commit(events, { type: 'startup', detail: 'the cluster starts with its system namespaces' }).catch((error: unknown) =>
      console.error('fleetsim: could not record the system namespaces:', error),
    );
  }

  /**
   * The events deleting a GameServer: at once, or a deletionTimestamp that keeps it (its sidecar
   * answering) while a process that takes time to stop runs in its pod (a real one, or a simulated
   * one that waits after SIGTERM) until it has exited within its grace period
   * (server/controllers/gameserver-processes.ts or server/sim/processes.ts then call
   * `finishTermination`), or while finalizers other than Agones's own hold it. None when it is
   * already terminating.
   */
  gameServerDeletion(gs: GameServer): NewEvent[] {
    const { namespace, name } = gs.metadata;
    if (gs.metadata.deletionTimestamp !== undefined) return [];
    const slow = this.pods.stopsSlowly(objectKey(namespace, name)) || sdkServerHoldsUntil(gs, this.gates, this.clock.now()) !== undefined;
    if (!slow && foreignFinalizers(gs).length === 0) return [gameServerEvent('GameServerDeleted', namespace, name, {})];
    const deletionTimestamp = rfc3339(this.clock.now());
    const terminating = gameServerEvent('GameServerTerminating', namespace, name, { deletionTimestamp });
    if (slow) return [terminating];
    // No process to wait for: the pod is gone at once, and only the other finalizers hold it.
    return [terminating, this.podGone({ ...gs, metadata: { ...gs.metadata, deletionTimestamp } })];
  }

  /**
   * A terminating GameServer's process has exited: once its SDK server has stopped too (it holds
   * the pod only with SidecarContainers off: `sdkServerStopped`), Agones's controller takes its
   * finalizer off, and the GameServer goes unless other finalizers hold it (nothing when it is not
   * terminating, or its pod had gone already).
   */
  async finishTermination(key: string, cause: Cause): Promise<void> {
    const gs = this.gameServers.getByKey(key);
    if (!gs) return;
    this.pods.markGameStopped(key);
    if (sdkServerHoldsUntil(gs, this.gates, this.clock.now()) !== undefined) return;
    await this.podStopped(gs, cause);
  }

  /** A terminating GameServer's SDK server has stopped (SidecarContainers off): the pod goes once its game container has exited too. */
  async sdkServerStopped(key: string, cause: Cause): Promise<void> {
    const gs = this.gameServers.getByKey(key);
    if (!gs || this.pods.awaitsGameExit(key)) return;
    await this.podStopped(gs, cause);
  }

  private async podStopped(gs: GameServer, cause: Cause): Promise<void> {
    if (gs.metadata.deletionTimestamp === undefined) return;
    const others = foreignFinalizers(gs);
    // Held by others' finalizers alone: its pod went already.
    if (others.length > 0 && others.length === (gs.metadata.finalizers ?? []).length) return;
    await this.commit([this.podGone(gs)], cause).catch(() => undefined);
  }

  /** What follows a terminating GameServer's pod going: it goes, or it keeps only the finalizers not Agones's. */
  private podGone(gs: GameServer): NewEvent {
    const { namespace, name } = gs.metadata;
    const finalizers = foreignFinalizers(gs);
    if (finalizers.length === 0) return gameServerEvent('GameServerDeleted', namespace, name, {});
    return gameServerEvent('GameServerSpecUpdated', namespace, name, { metadata: { ...gs.metadata, finalizers }, spec: gs.spec });
  }

  override close(): void {
    this.actors.stopAll();
    this.health.stopAll();
    super.close();
  }
}
