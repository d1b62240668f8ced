import { type Actor, createActor } from 'xstate';
import { type GameServerCommand, gameServerMachine } from '../../machines/gameserver.js';
import { GAMESERVER_KIND, type GameServer } from '../kinds/gameserver.js';
import { objectKey } from '../kinds/meta.js';
import type { Cluster } from './cluster.js';

type GameServerActor = Actor<typeof gameServerMachine>;

/**
 * One XState actor per GameServer, booted from the record in the read model and running its
 * timers on the cluster's clock. An actor's emits are committed to the log; the actor itself
 * holds no state that is not derivable from the log (a restart boots it again from the record).
 */
export class GameServerActors {
  private readonly actors = new Map<string, GameServerActor>();
  /** The commit of the last emit, so a command can wait for exactly what it caused. */
  private lastCommit: Promise<void> | undefined;

  constructor(private readonly cluster: Cluster) {}

  /** Boots actors for the GameServers already in the read model and follows creations and deletions. */
  start(): void {
    for (const gs of this.cluster.gameServers.values()) this.boot(gs);
    this.cluster.applied$.subscribe((event) => {
      if (event.kind !== GAMESERVER_KIND) return;
      if (event.type === 'GameServerCreated') {
        const gs = this.cluster.gameServers.get(event.namespace, event.name);
        if (gs) this.boot(gs);
      } else if (event.type === 'GameServerDeleted') {
        this.stop(objectKey(event.namespace, event.name));
      }
    });
  }

  /**
   * Hands a command to the GameServer's machine. Returns the commit of the events it decided,
   * or undefined when the machine made no change (a refusal, or no such GameServer).
   */
  send(namespace: string, name: string, command: GameServerCommand): Promise<void> | undefined {
    const actor = this.actors.get(objectKey(namespace, name));
    if (!actor) return undefined;
    this.lastCommit = undefined;
    actor.send(command);
    const commit = this.lastCommit;
    this.lastCommit = undefined;
    return commit;
  }

  /** The lifecycle state the machine is in, for tests and diagnostics. */
  machineState(namespace: string, name: string): unknown {
    return this.actors.get(objectKey(namespace, name))?.getSnapshot().value;
  }

  get size(): number {
    return this.actors.size;
  }

  stopAll(): void {
    for (const key of [...this.actors.keys()]) this.stop(key);
  }

  private boot(gs: GameServer): void {
    const key = objectKey(gs.metadata.namespace, gs.metadata.name);
    this.stop(key);
    const clock = this.cluster.clock;
    const actor = createActor(gameServerMachine, {
      clock,
      input: {
        namespace: gs.metadata.namespace,
        name: gs.metadata.name,
        state: gs.status.state,
        reservedUntil: gs.status.reservedUntil ? Date.parse(gs.status.reservedUntil) : null,
        health: gs.spec.health,
        now: () => clock.now(),
      },
    });
    actor.on('domain', ({ event }) => {
      this.lastCommit = this.cluster.commit([event]);
    });
    this.actors.set(key, actor);
    actor.start();
  }

  private stop(key: string): void {
    const actor = this.actors.get(key);
    if (!actor) return;
    this.actors.delete(key);
    actor.stop();
  }
}
