import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import { healthDeadline } from '../../machines/gameserver.js';
import { SIDECAR_RUNNING_STATES } from '../kinds/gameserver/gameserver.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import type { GameServerActors } from './gameserver-actors.js';
import type { LifecycleStore } from './lifecycle-store.js';
import { unawaited } from '../runtime/store.js';

interface Watch {
  namespace: string;
  name: string;
  startedAt: number;
  lastPing: number;
  handle: TimerHandle | undefined;
}

/** A process that pings every `periodMs` from `firstAt` on (a simulated one): no timer per ping. */
interface Cadence {
  firstAt: number;
  periodMs: number;
}

function watched(gs: GameServer | undefined): boolean {
  return !!gs && !gs.spec.health.disabled && SIDECAR_RUNNING_STATES.has(gs.status.state);
}

/**
 * The sidecar's health loop for every running GameServer: pings only note the time; one timer
 * per GameServer waits for the deadline `healthDeadline` gives and, when it comes with no newer
 * ping, tells the machine `health.failed`. A restart starts the loop afresh, as a restarted
 * sidecar does.
 */
export class HealthMonitor {
  private readonly watches = new Map<string, Watch>();
  private readonly cadences = new Map<string, Cadence>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly store: LifecycleStore,
    private readonly actors: GameServerActors,
  ) {}

  start(): void {
    for (const [key, gs] of this.store.gameServers.entries()) if (watched(gs)) this.watch(key, gs);
    this.subscription = this.store.gameServerApplied$.subscribe((change) => {
      // Most changes (allocations, metadata, counters) leave health checking as it was: under one
      // spec, whether a server is watched moves only with whether its state runs a sidecar.
      const { previous, object } = change;
      if (previous && object && previous.spec === object.spec && SIDECAR_RUNNING_STATES.has(previous.status.state) === SIDECAR_RUNNING_STATES.has(object.status.state)) return;
      const was = this.watches.has(change.key);
      const should = watched(change.object);
      if (should && !was) this.watch(change.key, change.object!);
      else if (!should && was) this.unwatch(change.key);
    });
  }

  /** One health ping (a message on the Health stream, a JSON object POSTed to /health). */
  ping(key: string): void {
    const watch = this.watches.get(key);
    if (watch) watch.lastPing = this.store.clock.now();
  }

  /**
   * Declares that a GameServer's process pings every `periodMs` from `firstAt` on, until
   * `stopPinging`. The monitor reads the last such ping when a deadline comes, which is what
   * pinging each period would have recorded, without a timer per ping.
   */
  pingEvery(key: string, firstAt: number, periodMs: number): void {
    this.cadences.set(key, { firstAt, periodMs });
    const watch = this.watches.get(key);
    const gs = watch && this.store.gameServers.get(watch.namespace, watch.name);
    if (watch && gs) this.arm(key, watch, gs);
  }

  /** The process stops pinging: its last ping stands, and the deadline it sets is watched again. */
  stopPinging(key: string): void {
    this.catchUp(key);
    this.cadences.delete(key);
    const watch = this.watches.get(key);
    const gs = watch && this.store.gameServers.get(watch.namespace, watch.name);
    if (watch && gs && watched(gs)) this.arm(key, watch, gs);
  }

  /** Folds a cadence's pings up to now into the watch's last ping. */
  private catchUp(key: string): void {
    const cadence = this.cadences.get(key);
    const watch = this.watches.get(key);
    if (!cadence || !watch) return;
    const now = this.store.clock.now();
    if (now < cadence.firstAt) return;
    const last = cadence.firstAt + Math.floor((now - cadence.firstAt) / cadence.periodMs) * cadence.periodMs;
    if (last > watch.lastPing) watch.lastPing = last;
  }

  get size(): number {
    return this.watches.size;
  }

  /** Stops watching: no check is due any more, and no change arms one. */
  stopAll(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    for (const key of [...this.watches.keys()]) this.unwatch(key);
    this.cadences.clear();
  }

  private watch(key: string, gs: GameServer): void {
    const now = this.store.clock.now();
    const watch: Watch = { namespace: gs.metadata.namespace, name: gs.metadata.name, startedAt: now, lastPing: now, handle: undefined };
    this.watches.set(key, watch);
    this.arm(key, watch, gs);
  }

  /**
   * Sets the timer for the next deadline — unless a cadence's first ping comes before it: a
   * process that pings every period never misses one, so no check can fail until it stops
   * (stopPinging arms again). A fleet of simulated servers then costs no timer per period.
   */
  private arm(key: string, watch: Watch, gs: GameServer): void {
    this.store.clock.clearTimeout(watch.handle);
    watch.handle = undefined;
    const deadline = healthDeadline(gs.spec.health, watch.startedAt, watch.lastPing);
    const cadence = this.cadences.get(key);
    const periodMs = (gs.spec.health.periodSeconds ?? 0) * 1000;
    if (cadence && cadence.periodMs > 0 && cadence.periodMs <= periodMs && cadence.firstAt < deadline) return;
    watch.handle = this.store.clock.setTimeout(() => this.check(key), deadline - this.store.clock.now());
  }

  /** At the deadline computed earlier: a ping since moves it on; otherwise the check has failed. */
  private check(key: string): void {
    const watch = this.watches.get(key);
    if (!watch) return;
    watch.handle = undefined;
    const gs = this.store.gameServers.get(watch.namespace, watch.name);
    if (!gs || !watched(gs)) return this.unwatch(key);
    this.catchUp(key);
    const deadline = healthDeadline(gs.spec.health, watch.startedAt, watch.lastPing);
    if (deadline > this.store.clock.now()) return this.arm(key, watch, gs);
    this.unwatch(key);
    const { periodSeconds = 0, failureThreshold = 0 } = gs.spec.health;
    unawaited(this.actors.send(
      watch.namespace,
      watch.name,
      { type: 'health.failed' },
      {
        type: 'timer',
        timer: 'health.check',
        object: { kind: GAMESERVER_KIND, namespace: watch.namespace, name: watch.name },
        inputs: { lastPing: new Date(watch.lastPing).toISOString(), periodSeconds, failureThreshold },
      },
    ));
  }

  private unwatch(key: string): void {
    const watch = this.watches.get(key);
    if (!watch) return;
    this.cadences.delete(key);
    this.store.clock.clearTimeout(watch.handle);
    this.watches.delete(key);
  }
}
