import type { NodeCount, NodeCounts } from '../../machines/scale-down-order.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { type HostPort, podHostPorts } from '../kinds/pod/pod.js';
import type { ObjectChange, ObjectStore } from './object-store.js';
import type { Projection } from './projection.js';

/** One node's GameServers, as the node counter keeps them. */
export interface NodeTally extends NodeCount {
  /** Every GameServer that names the node, whatever its state: the pods it runs. */
  gameServers: number;
  /**
   * Ready and Allocated ones not being deleted: what the allocator orders nodes by (its cache
   * leaves a GameServer out once it has a deletionTimestamp).
   */
  allocatable: NodeCount;
  /** Host ports its pods hold (`hostPortKey`), each with how many pods hold it. */
  hostPorts: Map<number, number>;
}

/** A host port as one number: the port and its protocol. */
function hostPortKey({ port, protocol }: HostPort): number {
  return port * 2 + (protocol === 'TCP' ? 1 : 0);
}

export const NODE_COUNTER = 'node-counter';

/** A node's counts for the GameServers with no node (never read: such servers rank apart). */
const NO_NODE: NodeCount = Object.freeze({ ready: 0, allocated: 0 });

/**
 * GameServers per node (Agones's PerNodeCounter): Ready and Allocated over the cluster, the
 * allocatable ones, and every GameServer naming the node. The one count the allocation index,
 * the GameServerSet index, fleet scale-down, the scheduler and the metrics read. A node has a
 * tally while a GameServer names it; a tally object stays the same object for as long as it
 * exists, so a reader may hold it.
 */
export class NodeCounter implements Projection {
  readonly name = NODE_COUNTER;
  private readonly nodes = new Map<string, NodeTally>();
  private stamp = 0;

  constructor(private readonly gameServers: ObjectStore<GameServer>) {}

  /** Ready and Allocated per node, every node a GameServer names. */
  get counts(): NodeCounts {
    return this.nodes;
  }

  /** Moves whenever a node's Ready or Allocated count does. */
  get version(): number {
    return this.stamp;
  }

  tally(node: string): NodeTally | undefined {
    return this.nodes.get(node);
  }

  /** The allocatable counts of a node a GameServer names (a constant for no node). */
  allocatable(node: string): NodeCount {
    return node === '' ? NO_NODE : this.nodes.get(node)!.allocatable;
  }

  /** Which of `ports` pods on `node` hold already (Kubernetes's scheduler places no two pods holding one on a node). */
  takenHostPorts(node: string, ports: readonly HostPort[]): HostPort[] {
    const held = this.nodes.get(node)?.hostPorts;
    return held && held.size > 0 ? ports.filter((p) => held.has(hostPortKey(p))) : [];
  }

  /** GameServers naming `node`: its pods. */
  gameServersOn(node: string): number {
    return this.nodes.get(node)?.gameServers ?? 0;
  }

  rebuild(): void {
    this.nodes.clear();
    this.stamp++;
    for (const gs of this.gameServers.values()) this.gameServerApplied({ previous: undefined, object: gs });
  }

  gameServerApplied({ previous, object }: Pick<ObjectChange<GameServer>, 'previous' | 'object'>): void {
    if (previous === object) return;
    const from = previous?.status.nodeName ?? '';
    const to = object?.status.nodeName ?? '';
    if (from === to) {
      // On the same node the tally never passes through empty, so it stays the same object.
      if (from === '') return;
      const tally = this.nodes.get(from)!;
      if (previous!.spec.ports !== object!.spec.ports) {
        this.holdPorts(tally, previous!, -1);
        this.holdPorts(tally, object!, 1);
      }
      if (!countsDiffer(previous!, object!)) return;
      this.count(tally, previous!, -1);
      this.count(tally, object!, 1);
      return;
    }
    if (from !== '') {
      const tally = this.nodes.get(from)!;
      this.count(tally, previous!, -1);
      this.holdPorts(tally, previous!, -1);
      if (--tally.gameServers === 0) this.nodes.delete(from);
    }
    if (to !== '') {
      let tally = this.nodes.get(to);
      if (!tally) {
        tally = { ready: 0, allocated: 0, gameServers: 0, allocatable: { ready: 0, allocated: 0 }, hostPorts: new Map() };
        this.nodes.set(to, tally);
      }
      tally.gameServers++;
      this.count(tally, object!, 1);
      this.holdPorts(tally, object!, 1);
    }
  }

  snapshot(): unknown {
    return [...this.nodes]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([node, tally]) => ({ node, ...tally, allocatable: { ...tally.allocatable }, hostPorts: [...tally.hostPorts].sort(([a], [b]) => a - b) }));
  }

  private holdPorts(tally: NodeTally, gs: GameServer, sign: 1 | -1): void {
    for (const port of podHostPorts(gs)) {
      const key = hostPortKey(port);
      const held = (tally.hostPorts.get(key) ?? 0) + sign;
      if (held > 0) tally.hostPorts.set(key, held);
      else tally.hostPorts.delete(key);
    }
  }

  private count(tally: NodeTally, gs: GameServer, sign: 1 | -1): void {
    const state = gs.status.state;
    if (state !== 'Ready' && state !== 'Allocated') return;
    const field = state === 'Ready' ? 'ready' : 'allocated';
    tally[field] += sign;
    if (gs.metadata.deletionTimestamp === undefined) tally.allocatable[field] += sign;
    this.stamp++;
  }
}

/** Whether two versions of a GameServer on one node count differently. */
function countsDiffer(a: GameServer, b: GameServer): boolean {
  return a.status.state !== b.status.state || (a.metadata.deletionTimestamp === undefined) !== (b.metadata.deletionTimestamp === undefined);
}
