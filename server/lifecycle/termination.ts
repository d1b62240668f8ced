import { sdkServerHoldsUntil } from '../../machines/pod-lifecycle.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { foreignFinalizers } from '../kinds/gameserver/gameserver.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { objectKey, rfc3339 } from '../kinds/meta.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import type { PodRuntime } from '../runtime/pod-runtime.js';
import type { StoreCommits, StoreReads } from '../runtime/store-ports.js';

/** What deciding a GameServer's way out reads of the store (its state, the gates, the clock) and commits. */
export type TerminationStore = Pick<StoreReads, 'clock' | 'gates' | 'gameServers'> & StoreCommits;

/**
 * How a GameServer leaves: deleted at once, or kept terminating (its sidecar answering) while a
 * process that takes time to stop runs in its pod, its SDK server holds the pod, or finalizers
 * other than Agones's own hold it.
 */
export class GameServerTermination {
  constructor(
    private readonly store: TerminationStore,
    private readonly pods: PodRuntime,
  ) {}

  /**
   * The events deleting a GameServer: at once, or a deletionTimestamp that keeps it while a
   * process that takes time to stop runs in its pod (a real one, or a simulated one that waits
   * after SIGTERM) until it has exited within its grace period (server/controllers/gameserver-processes.ts
   * or server/sim/processes.ts then call `processExited`), or while finalizers other than
   * Agones's own hold it. None when it is already terminating.
   */
  deletion(gs: GameServer): NewEvent[] {
    const { namespace, name } = gs.metadata;
    if (gs.metadata.deletionTimestamp !== undefined) return [];
    const { clock, gates } = this.store;
    const slow = this.pods.stopsSlowly(objectKey(namespace, name)) || sdkServerHoldsUntil(gs, gates, clock.now()) !== undefined;
    if (!slow && foreignFinalizers(gs).length === 0) return [gameServerEvent('GameServerDeleted', namespace, name, {})];
    const deletionTimestamp = rfc3339(clock.now());
    const terminating = gameServerEvent('GameServerTerminating', namespace, name, { deletionTimestamp });
    if (slow) return [terminating];
    // No process to wait for: the pod is gone at once, and only the other finalizers hold it.
    return [terminating, podGone({ ...gs, metadata: { ...gs.metadata, deletionTimestamp } })];
  }

  /**
   * A terminating GameServer's process has exited: once its SDK server has stopped too (it holds
   * the pod only with SidecarContainers off: `sdkServerStopped`), Agones's controller takes its
   * finalizer off, and the GameServer goes unless other finalizers hold it (nothing when it is not
   * terminating, or its pod had gone already).
   */
  async processExited(key: string, cause: Cause): Promise<void> {
    const gs = this.store.gameServers.getByKey(key);
    if (!gs) return;
    this.pods.markGameStopped(key);
    if (sdkServerHoldsUntil(gs, this.store.gates, this.store.clock.now()) !== undefined) return;
    await this.podStopped(gs, cause);
  }

  /** A terminating GameServer's SDK server has stopped (SidecarContainers off): the pod goes once its game container has exited too. */
  async sdkServerStopped(key: string, cause: Cause): Promise<void> {
    const gs = this.store.gameServers.getByKey(key);
    if (!gs || this.pods.awaitsGameExit(key)) return;
    await this.podStopped(gs, cause);
  }

  private async podStopped(gs: GameServer, cause: Cause): Promise<void> {
    if (gs.metadata.deletionTimestamp === undefined) return;
    const others = foreignFinalizers(gs);
    // Held by others' finalizers alone: its pod went already.
    if (others.length > 0 && others.length === (gs.metadata.finalizers ?? []).length) return;
    await this.store.commit([podGone(gs)], cause).catch(() => undefined);
  }
}

/** What follows a terminating GameServer's pod going: it goes, or it keeps only the finalizers not Agones's. */
function podGone(gs: GameServer): NewEvent {
  const { namespace, name } = gs.metadata;
  const finalizers = foreignFinalizers(gs);
  if (finalizers.length === 0) return gameServerEvent('GameServerDeleted', namespace, name, {});
  return gameServerEvent('GameServerSpecUpdated', namespace, name, { metadata: { ...gs.metadata, finalizers }, spec: gs.spec });
}
