import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import type { SdkServerTerminationPort } from './ports.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { processCause } from '../kinds/gameserver/events.js';
import { sdkServerHoldsUntil } from '../../machines/pod-lifecycle.js';

/**
 * With SidecarContainers off, a deleted GameServer's SDK server keeps its pod until the GameServer
 * is Shutdown or the pod's grace period ends (machines/pod-lifecycle.ts): this tells the lifecycle
 * (lifecycle/termination.ts) when it stops, so the pod and the GameServer go. Nothing to do with the gate on.
 */
export class SdkServerTermination {
  private subscription: Subscription | undefined;
  private readonly timers = new Map<string, TimerHandle>();
  /** Terminating GameServers whose SDK server has stopped. */
  private readonly stoppedKeys = new Set<string>();

  constructor(private readonly cluster: SdkServerTerminationPort) {}

  start(): void {
    if (this.cluster.gates.SidecarContainers) return;
    // GameServers a restart found terminating.
    for (const [key, gs] of this.cluster.gameServers.entries()) this.observe(key, gs);
    this.subscription = this.cluster.gameServerChanges$.subscribe((change) => {
      // The grace period runs from the deletion itself (its deletionTimestamp keeps whole seconds only).
      const deletedNow = change.previous !== undefined && change.previous.metadata.deletionTimestamp === undefined;
      this.observe(change.key, change.object, deletedNow ? this.cluster.clock.now() : undefined);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    for (const timer of this.timers.values()) this.cluster.clock.clearTimeout(timer);
    this.timers.clear();
    this.stoppedKeys.clear();
  }

  private observe(key: string, gs: GameServer | undefined, deletedAt?: number): void {
    if (!gs || gs.metadata.deletionTimestamp === undefined) {
      this.stoppedKeys.delete(key);
      return this.forget(key);
    }
    if (this.stoppedKeys.has(key)) return;
    if (this.timers.has(key)) {
      // Waiting for its grace period to end: a Shutdown state ends the wait sooner.
      if (gs.status.state === 'Shutdown') this.stopped(key, gs, 'the GameServer is Shutdown');
      return;
    }
    const until = sdkServerHoldsUntil(gs, this.cluster.gates, this.cluster.clock.now(), deletedAt);
    if (until === undefined) return this.stopped(key, gs, gs.status.state === 'Shutdown' ? 'the GameServer is Shutdown' : 'it had nothing to wait for');
    this.timers.set(
      key,
      this.cluster.clock.setTimeout(() => {
        const now = this.cluster.gameServers.getByKey(key);
        if (now) this.stopped(key, now, "the pod's termination grace period ended");
      }, until - this.cluster.clock.now()),
    );
  }

  private stopped(key: string, gs: GameServer, why: string): void {
    this.forget(key);
    this.stoppedKeys.add(key);
    void this.cluster.termination.sdkServerStopped(key, processCause(gs, `the SDK server stopped: ${why}`));
  }

  private forget(key: string): void {
    const timer = this.timers.get(key);
    if (timer === undefined) return;
    this.cluster.clock.clearTimeout(timer);
    this.timers.delete(key);
  }
}
