import type { Subscription } from 'rxjs';
import { losePod } from '../lifecycle/pod-loss.js';
import { syncCause } from '../log/cause.js';
import type { NodeLossPort } from './ports.js';
import { NODE_KIND } from '../sim/nodes.js';

/**
 * A Node that goes (deleted through the API, lost with its machine) takes its pods with it:
 * Kubernetes's pod garbage collector deletes the pods bound to a node that no longer exists, and
 * Agones's health controller then marks each of their GameServers Unhealthy ("Issue with
 * Gameserver pod"), which its set replaces. The node autoscaler removes only empty nodes, so
 * this concerns a node lost with GameServers on it.
 */
export class NodeLoss {
  private subscription: Subscription | undefined;

  constructor(private readonly store: NodeLossPort) {}

  start(): void {
    this.subscription = this.store.changesOf(NODE_KIND).subscribe((change) => {
      if (change.type === 'DELETED') this.lost(change.name, change.seq);
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  private lost(node: string, after: number): void {
    const cause = syncCause(NODE_KIND, '', node, after);
    for (const [key, gs] of this.store.gameServers.entries()) {
      if (gs.status.nodeName !== node || gs.metadata.deletionTimestamp !== undefined) continue;
      losePod(this.store, key, `its node ${node} was deleted`, cause).catch(() => undefined);
    }
  }
}
