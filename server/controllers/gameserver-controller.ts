import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import type { GameServerCommand } from '../../machines/gameserver.js';
import { type GameServer, type GameServerPort, type GameServerStatusPort, type NodeAddress } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { type Cause, syncCause } from '../log/cause.js';

import type { GameServerControllerPort } from './ports.js';
import { unawaited } from '../runtime/store.js';
import { NODE_KIND, allocatablePods, nodeAddress, podNodeSelector } from '../sim/nodes.js';
import { hasLabels } from '../kinds/label-selector.js';
import { type HostPort, podHostPorts, podReference } from '../kinds/pod/pod.js';
import type { Resource } from '../kinds/resource.js';
import type { StoredEvent } from '../log/event-log.js';
import { PortAllocator } from '../sim/port-allocator.js';
import { EventRecorder } from './k8s-events.js';
import type { SchedulingView } from './node-autoscaler.js';
import type { WorkQueueObserver } from './work-queue.js';

export interface GameServerControllerOptions {
  /** Dynamic host port range (Agones's default is 7000-8000). */
  portRange?: { min: number; max: number };
  /**
   * At most this many pods on any node, whatever its own capacity (`status.allocatable.pods`)
   * says: tests make small nodes so. Default: each node's own capacity.
   */
  maxPodsPerNode?: number;
  /**
   * Whether a Shutdown GameServer is deleted. The standalone sidecar keeps its one GameServer,
   * as a pod that is still terminating would.
   */
  deleteShutdown?: boolean;
  /**
   * Whether a GameServer's process listens on its host ports here (a real process, a simulated
   * simple-game-server): its dynamic ports are unique in the cluster, since a real process may
   * listen on every address of this machine, every node's included.
   */
  listens?: (gs: GameServer) => boolean;
}

/** States in which the controller has a step to take. */
const ACTIONABLE = new Set(['PortAllocation', 'Creating', 'Starting', 'RequestReady', 'Shutdown']);

/**
 * The GameServer controller (Agones's pkg/gameservers): allocates host ports, "creates the
 * pod", schedules it onto a simulated node and fills address and ports, turns RequestReady into
 * Ready, and deletes Shutdown GameServers. Each step is a machine transition, so it is an event.
 * It is the scheduler too: it places each pod on a node with room by that node's own capacity
 * and free host ports (Kubernetes's NodePorts filter: no two pods on a node hold one port and
 * protocol), among the nodes whose labels match the pod's nodeSelector, and keeps the pods that
 * fit nowhere waiting (what the node autoscaler reads).
 */
export class GameServerController implements SchedulingView {
  private readonly queue = new Set<string>();
  /** The queue's drain, when one is due (a zero-delay timer on the cluster's clock). */
  private drainTimer: TimerHandle | undefined;
  private readonly subscriptions: Subscription[] = [];
  /** Packed's last choice: still the busiest node with room until a pod leaves a node. */
  private packedBest: string | undefined;
  private readonly ports: PortAllocator;
  private readonly listeningPorts: PortAllocator;
  private readonly listens: (gs: GameServer) => boolean;
  /** GameServers waiting for a free listening port, retried when one is released. */
  private readonly waitingForPorts = new Set<string>();
  private readonly events: EventRecorder;
  /** The Kubernetes scheduler's Events, on the pods it cannot place. */
  private readonly schedulerEvents: EventRecorder;
  /** Unschedulable GameServers kept off nodes with room by a host port or their nodeSelector: retried whenever a pod leaves a node or a node changes, which may free them. */
  private readonly reportedUnschedulable = new Set<string>();
  /** Pods each node takes, for the nodes that exist. */
  private readonly capacity = new Map<string, number>();
  /**
   * Nodes that have room, by how many pods they run (index = pods), so choosing one does not
   * scan them all; a full node is in none until a pod leaves it.
   */
  private readonly nodesByPods: Array<Set<string>> = [];
  /** Where each node with room is filed in nodesByPods (its pods when last filed). */
  private readonly filed = new Map<string, number>();
  /** The largest capacity of a node seen: how far a choice looks through nodesByPods. */
  private largestCapacity = 0;
  private readonly maxPods: number;
  /** GameServers whose pod fit on no node, in the order they failed: retried as room appears. */
  private readonly unschedulable = new Set<string>();
  private readonly deleteShutdown: boolean;
  /** Metrics' observer of the queue (none: no bookkeeping). */
  private queueObserver: WorkQueueObserver | undefined;
  /** When the pending drain was scheduled (for the queue's wait, when observed). */
  private scheduledAt = 0;

  constructor(
    private readonly cluster: GameServerControllerPort,
    options: GameServerControllerOptions = {},
  ) {
    const range = options.portRange ?? { min: 7000, max: 8000 };
    this.ports = new PortAllocator(range.min, range.max, cluster.rng);
    this.listeningPorts = new PortAllocator(range.min, range.max, cluster.rng, 1, false);
    this.listens = options.listens ?? (() => false);
    this.events = new EventRecorder(cluster, 'gameserver-controller');
    this.schedulerEvents = new EventRecorder(cluster, 'default-scheduler');
    this.maxPods = options.maxPodsPerNode ?? Number.POSITIVE_INFINITY;
    this.deleteShutdown = options.deleteShutdown ?? true;
  }

  start(): void {
    for (const node of this.cluster.readModel.list(NODE_KIND)) this.setNode(node);
    for (const [key, gs] of this.cluster.gameServers.entries()) {
      // A TCPUDP port's two halves share their host port.
      const hostPorts = [...new Set(gs.spec.ports.filter(isDynamic).map((p) => p.hostPort ?? 0).filter((p) => p > 0))];
      if (hostPorts.length) (this.listens(gs) ? this.listeningPorts : this.ports).claim(key, hostPorts);
      this.observe(key, gs);
    }
    // The node counter counts pods as changes are applied, so several placements in one turn see each other.
    this.subscriptions.push(
      this.cluster.gameServerApplied$.subscribe((change) => {
        this.account(change.previous, change.object);
        if (!change.object) this.release(change.key);
        if (this.unschedulable.size > 0 && change.object?.status.state !== 'Starting') {
          this.unschedulable.delete(change.key);
          this.reportedUnschedulable.delete(change.key);
        }
      }),
      this.cluster.resourceApplied$.subscribe((event) => {
        if (event.kind === NODE_KIND) this.nodeChanged(event);
      }),
      this.cluster.gameServerChanges$.subscribe((change) => {
        if (change.object) this.observe(change.key, change.object);
      }),
    );
  }

  /** Stops watching, and drops the queue with its pending drain: nothing runs after stop (the log may be closed next). */
  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
    this.cluster.clock.clearTimeout(this.drainTimer);
    this.drainTimer = undefined;
    this.queue.clear();
  }

  /** Tells `observer` of the queue's work from now on, as a WorkQueue does (its steps never fail, so no retries). */
  observeQueue(observer: WorkQueueObserver): void {
    this.queueObserver = observer;
  }

  /** Started and not stopped: what Agones's liveness check of its work queue reports. */
  get running(): boolean {
    return this.subscriptions.length > 0;
  }

  private release(key: string): void {
    this.ports.release(key);
    this.listeningPorts.release(key);
    this.waitingForPorts.delete(key);
    // A port came free: those waiting for one try again.
    for (const waiting of this.waitingForPorts) {
      const gs = this.cluster.gameServers.getByKey(waiting);
      if (gs) this.observe(waiting, gs);
      else this.waitingForPorts.delete(waiting);
    }
  }

  /** Files again the nodes a pod left or joined (the node counter has counted it already). */
  private account(previous: GameServer | undefined, next: GameServer | undefined): void {
    const before = previous?.status.nodeName;
    const after = next?.status.nodeName;
    if (before === after) return;
    if (before) {
      const room = this.file(before);
      if (room !== undefined) {
        // A pod leaving a node can make another node the busiest with room, and gives a waiting pod a place.
        this.packedBest = undefined;
        this.retryReportedUnschedulable();
        this.retryUnschedulable(room);
      }
    }
    if (after) this.file(after);
  }

  /** Files a known node under its pods, if it has room; its room (undefined for a node not known). */
  private file(node: string): number | undefined {
    this.unfile(node);
    const capacity = this.capacity.get(node);
    if (capacity === undefined) return undefined;
    const pods = this.podsOn(node);
    if (pods < capacity) {
      (this.nodesByPods[pods] ??= new Set()).add(node);
      this.filed.set(node, pods);
    }
    return capacity - pods;
  }

  private unfile(node: string): void {
    const at = this.filed.get(node);
    if (at === undefined) return;
    this.nodesByPods[at]?.delete(node);
    this.filed.delete(node);
  }

  /** A Node was created, changed or deleted: the scheduler takes it up or forgets it. */
  private nodeChanged(event: StoredEvent): void {
    if (event.type === 'ResourceDeleted') this.forgetNode(event.name);
    else if (event.type === 'ResourceCreated' || event.type === 'ResourceUpdated') this.setNode((event.payload as { object: Resource }).object);
  }

  private setNode(node: Resource): void {
    const name = node.metadata.name;
    this.forgetNode(name);
    const capacity = Math.min(allocatablePods(node), this.maxPods);
    this.capacity.set(name, capacity);
    this.largestCapacity = Math.max(this.largestCapacity, capacity);
    this.retryReportedUnschedulable();
    this.retryUnschedulable(this.file(name)!);
  }

  private forgetNode(name: string): void {
    if (!this.capacity.delete(name)) return;
    this.unfile(name);
    if (this.packedBest === name) this.packedBest = undefined;
  }

  /** Room for `room` more pods appeared: as many waiting GameServers try again, longest waiting first. */
  private retryUnschedulable(room: number): void {
    for (const key of this.unschedulable) {
      if (room-- <= 0) return;
      this.unschedulable.delete(key);
      const gs = this.cluster.gameServers.getByKey(key);
      if (gs) this.observe(key, gs);
    }
  }

  /** A pod left a node or a node came: the pods waiting for a host port or a matching node look again, whatever room is counted. */
  private retryReportedUnschedulable(): void {
    for (const key of this.reportedUnschedulable) {
      if (!this.unschedulable.delete(key)) continue;
      const gs = this.cluster.gameServers.getByKey(key);
      if (gs) this.observe(key, gs);
    }
  }

  /** GameServers whose pod fits on no node now (Kubernetes's Unschedulable pods). */
  get unschedulableCount(): number {
    return this.unschedulable.size;
  }

  /** The first `limit` unschedulable GameServers (`namespace/name` keys), longest waiting first. */
  unschedulableKeys(limit: number): string[] {
    const keys: string[] = [];
    for (const key of this.unschedulable) {
      if (keys.length >= limit) break;
      keys.push(key);
    }
    return keys;
  }

  /** Pods running on `node` now. */
  podsOn(node: string): number {
    return this.cluster.nodes.gameServersOn(node);
  }

  private observe(key: string, gs: GameServer): void {
    if (!ACTIONABLE.has(gs.status.state)) return;
    if (gs.status.state === 'Shutdown' && !this.deleteShutdown) return;
    if (this.queueObserver && !this.queue.has(key)) {
      this.queueObserver.added();
      this.queueObserver.depth(this.queue.size + 1);
    }
    this.queue.add(key);
    if (this.drainTimer !== undefined) return;
    this.scheduledAt = this.cluster.clock.now();
    this.drainTimer = this.cluster.clock.setTimeout(() => this.drain(), 0);
  }

  private drain(): void {
    this.drainTimer = undefined;
    const keys = [...this.queue];
    this.queue.clear();
    const observer = this.queueObserver;
    observer?.depth(0);
    // Every key waited since the drain was scheduled at most (one turn of the loop): counted so,
    // rather than keeping when each was added.
    const waited = observer ? this.cluster.clock.now() - this.scheduledAt : 0;
    for (const key of keys) {
      const gs = this.cluster.gameServers.getByKey(key);
      if (!observer) {
        if (gs) this.step(key, gs);
        continue;
      }
      observer.started(waited);
      const begun = performance.now();
      if (gs) this.step(key, gs);
      observer.finished(performance.now() - begun);
    }
  }

  private step(key: string, gs: GameServer): void {
    // What the controller acts on is the GameServer's state: the event that set it is the cause.
    const cause = syncCause(GAMESERVER_KIND, gs.metadata.namespace, gs.metadata.name, Number(gs.metadata.resourceVersion));
    const send = (command: GameServerCommand) => unawaited(this.cluster.actors.sendByKey(key, command, cause));
    switch (gs.status.state) {
      case 'PortAllocation': {
        const count = gs.spec.ports.filter(isDynamic).length;
        const listening = this.listens(gs);
        const hostPorts = (listening ? this.listeningPorts : this.ports).allocate(key, count);
        if (!hostPorts) {
          // Every port of the range is held by a listening process: wait for one to be released.
          if (!this.waitingForPorts.has(key)) {
            this.waitingForPorts.add(key);
            const range = `${this.listeningPorts.min}-${this.listeningPorts.max}`;
            unawaited(this.cluster.commit([
              this.events.event(gs, {
                type: 'Warning',
                reason: 'PortAllocation',
                message: `no ${count} free host ports in ${range} for a process that listens on them (ports are unique across the simulated cluster, as a real process may listen on every node's address); waiting for one to be released`,
              }),
            ], cause));
          }
          return;
        }
        this.waitingForPorts.delete(key);
        send({ type: 'controller.portsAllocated', hostPorts });
        return;
      }
      case 'Creating':
        send({ type: 'controller.podCreated' });
        return;
      case 'Starting': {
        const hostPorts = podHostPorts(gs);
        const node = this.chooseNode(gs, hostPorts);
        if (node === undefined || node === PORTS_TAKEN) {
          // Unschedulable: retried when a pod leaves a node or a node is added.
          this.unschedulable.add(key);
          if (node === PORTS_TAKEN || podNodeSelector(gs.spec.template)) this.reportUnschedulable(key, gs, hostPorts, cause);
          // Without sidecar containers, Agones's health controller takes a pod unschedulable for
          // want of free ports as an unhealthy GameServer; with them it waits on the pod.
          if (node === PORTS_TAKEN && !this.cluster.gates.SidecarContainers) send({ type: 'controller.unhealthy', message: 'Issue with Gameserver pod' });
          return;
        }
        this.reportedUnschedulable.delete(key);
        send({ type: 'controller.scheduled', ...node });
        return;
      }
      case 'RequestReady':
        send({ type: 'controller.ready' });
        return;
      case 'Shutdown': {
        const deletion = this.cluster.termination.deletion(gs);
        if (deletion.length) unawaited(this.cluster.commit(deletion, cause));
        return;
      }
    }
  }

  /**
   * A pod fits nowhere, and a node with room held one of its host ports or its nodeSelector
   * matched too few nodes: the scheduler says so on the pod, once while it waits, counting the
   * nodes as Kubernetes's scheduler does.
   */
  private reportUnschedulable(key: string, gs: GameServer, hostPorts: HostPort[], cause: Cause): void {
    if (this.reportedUnschedulable.has(key)) return;
    this.reportedUnschedulable.add(key);
    let full = 0;
    let conflicting = 0;
    let mismatched = 0;
    const taken = new Set<string>();
    const selector = podNodeSelector(gs.spec.template);
    for (const [node, capacity] of this.capacity) {
      if (selector && !this.nodeMatches(node, selector)) {
        mismatched++;
        continue;
      }
      if (this.podsOn(node) >= capacity) {
        full++;
        continue;
      }
      const held = this.cluster.nodes.takenHostPorts(node, hostPorts);
      if (held.length > 0) conflicting++;
      for (const { port, protocol } of held) taken.add(`${port}/${protocol}`);
    }
    const reasons = [
      ...(full > 0 ? [`${full} Too many pods`] : []),
      ...(conflicting > 0 ? [`${conflicting} node(s) didn't have free ports for the requested pod ports (${[...taken].join(', ')})`] : []),
      ...(mismatched > 0 ? [`${mismatched} node(s) didn't match Pod's node affinity/selector`] : []),
    ];
    const message = `0/${this.capacity.size} nodes are available: ${reasons.join(', ')}.`;
    unawaited(this.cluster.commit([this.schedulerEvents.event(podReference(gs), { type: 'Warning', reason: 'FailedScheduling', message })], cause));
  }

  private nodeMatches(name: string, selector: Record<string, string>): boolean {
    const node = this.cluster.get(NODE_KIND, '', name);
    // Kubernetes's NodeAffinity filter, for a nodeSelector.
    return node !== undefined && hasLabels(node.metadata.labels, selector);
  }

  /**
   * Packed fills the busiest node that has room; Distributed the emptiest. Either skips a node
   * holding one of the pod's host ports: PORTS_TAKEN when no node is left but such ones.
   */
  private chooseNode(gs: GameServer, hostPorts: readonly HostPort[]):
    | { nodeName: string; address: string; addresses: NodeAddress[]; ports: GameServerStatusPort[] }
    | typeof PORTS_TAKEN
    | undefined {
    const packed = gs.spec.scheduling !== 'Distributed';
    const selector = podNodeSelector(gs.spec.template);
    let skipped = false;
    const fits = (node: string) => {
      if (selector && !this.nodeMatches(node, selector)) return false;
      if (hostPorts.length === 0 || this.cluster.nodes.takenHostPorts(node, hostPorts).length === 0) return true;
      skipped = true;
      return false;
    };
    let chosen: string | undefined;
    const best = this.packedBest;
    if (packed && best !== undefined && this.podsOn(best) < (this.capacity.get(best) ?? 0) && fits(best)) chosen = best;
    // Only nodes with room are indexed: the first found, from the busiest (Packed) or the emptiest, is the one.
    const largest = this.largestCapacity;
    for (let i = 0; i < largest && chosen === undefined; i++) {
      chosen = firstOf(this.nodesByPods[packed ? largest - 1 - i : i], fits);
    }
    // Packed keeps its node; a Distributed placement may lift another node above it, and a node
    // chosen past one whose ports were taken is not the busiest.
    this.packedBest = packed && !skipped && !selector ? chosen : undefined;
    const node = chosen === undefined ? undefined : this.cluster.get(NODE_KIND, '', chosen);
    if (!node) return skipped ? PORTS_TAKEN : undefined;
    const chosenNode = { name: chosen!, addresses: (node.status as { addresses: NodeAddress[] }).addresses };
    const podIp = `10.${100 + (this.cluster.rng.int(100))}.${this.cluster.rng.int(256)}.${1 + this.cluster.rng.int(254)}`;
    return {
      nodeName: chosenNode.name,
      address: nodeAddress(chosenNode.addresses) ?? podIp,
      // concat sizes the array exactly; a spread grows it by pushes and keeps the slack (~145 B a GameServer).
      addresses: chosenNode.addresses.concat({ type: 'PodIP', address: podIp }),
      ports: gs.spec.ports.map((p) => ({
        name: p.name,
        port: p.portPolicy === 'None' ? (p.containerPort ?? 0) : (p.hostPort ?? p.containerPort ?? 0),
      })),
    };
  }
}

/** No node could take a pod but nodes holding one of its host ports (or matching none of its nodeSelector). */
const PORTS_TAKEN = 'ports-taken';

/** The smallest name in a set of nodes that fits (deterministic, whatever the insertion order). */
function firstOf(nodes: Set<string> | undefined, fits: (node: string) => boolean): string | undefined {
  let first: string | undefined;
  for (const node of nodes ?? []) if ((first === undefined || compareNodeNames(node, first) < 0) && fits(node)) first = node;
  return first;
}

/** node-2 before node-10. */
function compareNodeNames(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function isDynamic(port: GameServerPort): boolean {
  return port.portPolicy === 'Dynamic' || port.portPolicy === 'Passthrough';
}


