import type { Subscription } from 'rxjs';
import type { Cluster } from '../runtime/cluster.js';
import type { GameServer } from '../kinds/gameserver.js';

/**
 * The GameServer controller's RequestReady step: once a RequestReady is committed, move the
 * GameServer to Ready (filling its address if it had none). Runs from a work queue on the
 * cluster's clock, like a Kubernetes controller reacting to what it observed.
 */
export class GameServerController {
  private readonly queue = new Set<string>();
  private scheduled = false;
  private subscription: Subscription | undefined;

  constructor(private readonly cluster: Cluster) {}

  start(): void {
    for (const gs of this.cluster.gameServers.values()) this.observe(gs);
    this.subscription = this.cluster.gameServerChanges$.subscribe((change) => {
      if (change.object) this.observe(change.object);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  private observe(gs: GameServer): void {
    if (gs.status.state !== 'RequestReady') return;
    this.queue.add(`${gs.metadata.namespace}/${gs.metadata.name}`);
    if (this.scheduled) return;
    this.scheduled = true;
    this.cluster.clock.setTimeout(() => this.drain(), 0);
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.queue];
    this.queue.clear();
    for (const key of keys) {
      const slash = key.indexOf('/');
      const namespace = key.slice(0, slash);
      const name = key.slice(slash + 1);
      const gs = this.cluster.gameServers.get(namespace, name);
      if (gs?.status.state !== 'RequestReady') continue;
      void this.cluster.actors.send(namespace, name, { type: 'controller.ready' });
    }
  }
}
