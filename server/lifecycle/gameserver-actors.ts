import type { TimerHandle } from '../clock.js';
import { type Decision, type GameServerCommand, type LifecycleContext, decide, timersOf } from '../../machines/gameserver.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { objectKey } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';
import type { LifecycleStore } from './lifecycle-store.js';
import type { StoreEntry } from '../runtime/object-store.js';
import { unawaited } from '../runtime/store.js';

/**
 * Each GameServer's lifecycle machine, run as a decider: the GameServer's state comes from its
 * record, the machine decides, the events are committed. Its delayed transitions (a
 * reservation's end) run as timers on the cluster's clock and fire as commands, so a timer that
 * fires is recorded as the event it causes.
 */
export class GameServerActors {
  private readonly timers = new Map<string, TimerHandle>();
  /** After stopAll (the cluster closing): no timer is armed again. */
  private stopped = false;

  constructor(private readonly store: LifecycleStore) {}

  /** Arms the timers of the GameServers in the log and forgets those that are deleted. */
  start(): void {
    const now = this.store.clock.now();
    for (const [key, gs] of this.store.gameServers.entries()) {
      this.arm(key, gs, timersOf(gs.status.state, contextOf(gs, now)));
    }
    this.store.gameServerApplied$.subscribe((change) => {
      if (!change.object) this.disarm(change.key);
    });
  }

  /**
   * Hands a command to the GameServer's machine. Returns the commit of the events it decided,
   * or undefined when the machine refused (or there is no such GameServer). `cause` is what
   * sent the command (a request, a controller, a process), recorded with the events.
   */
  send(namespace: string, name: string, command: GameServerCommand, cause?: Cause): Promise<void> | undefined {
    return this.sendByKey(objectKey(namespace, name), command, cause);
  }

  /** `send`, for callers that hold the `ns/name` key already. */
  sendByKey(key: string, command: GameServerCommand, cause?: Cause): Promise<void> | undefined {
    const entry = this.store.gameServers.entry(key);
    return entry && this.sendAs(entry, command, cause);
  }

  /** `sendByKey`, for a caller that holds the GameServer's store entry (its key, and its version now). */
  sendAs(entry: StoreEntry<GameServer>, command: GameServerCommand, cause?: Cause): Promise<void> | undefined {
    const { key, object: gs } = entry;
    const decision = decide(gs.status.state, contextOf(gs, this.store.clock.now()), command);
    if (!decision) return undefined;
    // Timers change only when the state is entered; most decisions have none to arm or clear.
    if (decision.entered && (decision.timers.length > 0 || this.timers.has(key))) this.arm(key, gs, decision.timers);
    return this.store.commit(decision.events, cause, entry);
  }

  /** Number of armed lifecycle timers (reservations), for tests and diagnostics. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  stopAll(): void {
    this.stopped = true;
    for (const key of [...this.timers.keys()]) this.disarm(key);
  }

  private arm(key: string, gs: GameServer, timers: Decision['timers']): void {
    this.disarm(key);
    const timer = timers[0];
    if (!timer || this.stopped) return;
    const { namespace, name } = gs.metadata;
    const cause: Cause = {
      type: 'timer',
      timer: timer.command.type,
      object: { kind: GAMESERVER_KIND, namespace, name },
      inputs: { due: new Date(timer.at).toISOString() },
    };
    const handle = this.store.clock.setTimeout(() => {
      this.timers.delete(key);
      unawaited(this.send(namespace, name, timer.command, cause));
    }, timer.at - this.store.clock.now());
    this.timers.set(key, handle);
  }

  private disarm(key: string): void {
    const handle = this.timers.get(key);
    if (handle === undefined) return;
    this.store.clock.clearTimeout(handle);
    this.timers.delete(key);
  }
}

export function contextOf(gs: GameServer, now: number): LifecycleContext {
  return {
    namespace: gs.metadata.namespace,
    name: gs.metadata.name,
    now,
    reservedUntil: gs.status.reservedUntil ? Date.parse(gs.status.reservedUntil) : null,
  };
}
