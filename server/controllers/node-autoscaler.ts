import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import type { NodeAutoscalerPort } from './ports.js';
import type { NewEvent, StoredEvent } from '../log/event-log.js';
import type { TimerCause } from '../log/cause.js';
import type { Resource } from '../kinds/resource.js';
import { resourceEvent } from '../kinds/resource.js';
import { podReference } from '../kinds/pod/pod.js';
import { NODE_KIND, nodeCreation } from '../sim/nodes.js';
import { type NodePool, poolNodeOrdinal, poolNodeShape, poolOf } from '../sim/node-pools.js';
import { EventRecorder } from './k8s-events.js';

/** What the node autoscaler reads of the scheduler (the GameServer controller is one). */
export interface SchedulingView {
  /** Pods that fit on no node now. */
  readonly unschedulableCount: number;
  /** The first `limit` of them (`namespace/name` of their GameServers), longest waiting first. */
  unschedulableKeys(limit: number): string[];
  /** Pods running on a node now. */
  podsOn(node: string): number;
}

/** Pods a scale-up names in its TriggeredScaleUp Events at most (a scale-up for thousands of pods is not thousands of Events). */
const PODS_NAMED_PER_DECISION = 10;

/** Timer names, as causes give them. */
const SCAN_TIMER = 'cluster-autoscaler.scan';
const PROVISION_TIMER = 'cluster-autoscaler.provision';

/** One pool as the autoscaler keeps it. */
interface PoolState {
  pool: NodePool;
  /** Place in the declared order: scale-up tries pools in it; it gives the nodes their network. */
  index: number;
  /** The pool's nodes that exist. */
  nodes: Set<string>;
  /** Nodes decided on and not created yet, by their provisioning timer. */
  provisioning: Map<TimerHandle, string>;
  /** The number of the pool's next node (names are not reused while the server runs). */
  nextOrdinal: number;
  /** When the pool last grew (a scale-up decision), if it has since the start. */
  lastGrowth: number | undefined;
  /** Since when each node was seen empty by every scan. */
  unneededSince: Map<string, number>;
}

/** A pool's size as a simulation runner reads it. */
export interface NodePoolStatus {
  pool: string;
  /** Nodes that exist (Ready). */
  nodes: number;
  /** Nodes decided on and still provisioning. */
  provisioning: number;
  minNodes: number;
  maxNodes: number;
}

/**
 * The node autoscaler, as the Kubernetes cluster autoscaler runs it against a cloud's node
 * groups. Every scanInterval (the shortest of the pools') on the cluster's clock it:
 *
 * - scales up when pods are unschedulable: the pods not covered by nodes already provisioning,
 *   divided by the pool's podsPerNode and rounded up, on the first pool in declared order that
 *   can grow, capped at its maxNodes. The new nodes are created scaleUpDelay later. Each
 *   decision records `TriggeredScaleUp` on (up to ten of) the pods; pods left over when every
 *   pool is at its maximum get `NotTriggerScaleUp`, once until the next scale-up.
 * - scales down a node that every scan for scaleDownUnneededTime found empty (game-server pods
 *   are not evictable — Agones marks them safe-to-evict false — so only empty nodes go), never
 *   below minNodes, and not within scaleDownDelayAfterAdd of the pool's last growth (as the
 *   cluster autoscaler does, emptiness seen during that cooldown is forgotten). Emptiness is
 *   checked again in the same turn as the deletion is committed, so no pod lands on a node that
 *   is going away. Each deletion records `ScaleDown` on the node.
 *
 * Every commit carries a timer cause (`cluster-autoscaler.scan` with the figures decided from;
 * a node's creation `cluster-autoscaler.provision`, after the decision's events), so `fleetsim
 * explain node/<name>` tells why a node came or went. Nodes being provisioned when the server
 * stops are not created at the next start (their timers are not in the log).
 */
export class NodeAutoscaler {
  private readonly pools: PoolState[];
  private readonly poolOfNode = new Map<string, PoolState>();
  private readonly events: EventRecorder;
  private readonly intervalMs: number;
  private scanTimer: TimerHandle | undefined;
  private subscription: Subscription | undefined;
  /** NotTriggerScaleUp was recorded for the pods left over since the last scale-up. */
  private notTriggeredRecorded = false;

  constructor(
    private readonly cluster: NodeAutoscalerPort,
    pools: readonly NodePool[],
    private readonly scheduler: SchedulingView,
  ) {
    this.pools = pools.map((pool, index) => ({
      pool,
      index,
      nodes: new Set(),
      provisioning: new Map(),
      nextOrdinal: 1,
      lastGrowth: undefined,
      unneededSince: new Map(),
    }));
    this.intervalMs = Math.min(...pools.map((pool) => pool.scanIntervalMs));
    this.events = new EventRecorder(cluster, 'cluster-autoscaler');
  }

  start(): void {
    for (const node of this.cluster.readModel.list(NODE_KIND)) this.nodeAdded(node);
    this.subscription = this.cluster.resourceApplied$.subscribe((event) => {
      if (event.kind === NODE_KIND) this.nodeChanged(event);
    });
    if (this.pools.length > 0) this.scheduleScan();
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.cluster.clock.clearTimeout(this.scanTimer);
    this.scanTimer = undefined;
    for (const state of this.pools) {
      for (const timer of state.provisioning.keys()) this.cluster.clock.clearTimeout(timer);
      state.provisioning.clear();
    }
  }

  /** Each pool's nodes and nodes provisioning now, in declared order. */
  status(): NodePoolStatus[] {
    return this.pools.map(({ pool, nodes, provisioning }) => ({
      pool: pool.name,
      nodes: nodes.size,
      provisioning: provisioning.size,
      minNodes: pool.minNodes,
      maxNodes: pool.maxNodes,
    }));
  }

  private nodeChanged(event: StoredEvent): void {
    if (event.type === 'ResourceCreated') this.nodeAdded((event.payload as { object: Resource }).object);
    else if (event.type === 'ResourceDeleted') {
      const state = this.poolOfNode.get(event.name);
      state?.nodes.delete(event.name);
      state?.unneededSince.delete(event.name);
      this.poolOfNode.delete(event.name);
    }
  }

  private nodeAdded(node: Resource): void {
    const name = node.metadata.name;
    const state = this.pools.find((s) => s.pool.name === poolOf(node));
    if (!state) return;
    state.nodes.add(name);
    this.poolOfNode.set(name, state);
    state.nextOrdinal = Math.max(state.nextOrdinal, poolNodeOrdinal(state.pool.name, name) + 1);
  }

  private scheduleScan(): void {
    this.scanTimer = this.cluster.clock.setTimeout(() => {
      this.scan();
      this.scheduleScan();
    }, this.intervalMs);
  }

  private scan(): void {
    const now = this.cluster.clock.now();
    this.scaleUp();
    for (const state of this.pools) this.scaleDown(state, now);
  }

  private scaleUp(): void {
    const unschedulable = this.scheduler.unschedulableCount;
    if (unschedulable === 0) {
      this.notTriggeredRecorded = false;
      return;
    }
    // Pods that the nodes already provisioning will take are not counted twice.
    let coming = 0;
    for (const { pool, provisioning } of this.pools) coming += provisioning.size * pool.podsPerNode;
    const uncovered = unschedulable - coming;
    if (uncovered <= 0) return;
    const state = this.pools.find((s) => s.nodes.size + s.provisioning.size < s.pool.maxNodes);
    if (!state) {
      this.recordNotTriggered(unschedulable, coming);
      return;
    }
    const { pool } = state;
    const from = state.nodes.size + state.provisioning.size;
    const to = Math.min(pool.maxNodes, from + Math.ceil(uncovered / pool.podsPerNode));
    const cause: TimerCause = {
      type: 'timer',
      timer: SCAN_TIMER,
      inputs: { unschedulablePods: unschedulable, podsOnProvisioningNodes: coming, pool: pool.name, podsPerNode: pool.podsPerNode, from, to, maxNodes: pool.maxNodes },
    };
    const message = `pod triggered scale-up: [{${pool.name} ${from}->${to} (max: ${pool.maxNodes})}]`;
    const events = this.podEvents('TriggeredScaleUp', message);
    this.commit(events, cause);
    // The nodes' creations follow from the decision's events (what explain walks back to).
    const decided = events.length > 0 ? this.cluster.log.lastSeq : undefined;
    state.lastGrowth = this.cluster.clock.now();
    this.notTriggeredRecorded = false;
    for (let i = from; i < to; i++) this.provision(state, decided);
  }

  /** A node of `state`'s pool, created when its provisioning is over. */
  private provision(state: PoolState, decided: number | undefined): void {
    const ordinal = state.nextOrdinal++;
    const shape = poolNodeShape(state.pool, state.index, ordinal);
    const timer = this.cluster.clock.setTimeout(() => {
      state.provisioning.delete(timer);
      const cause: TimerCause = {
        type: 'timer',
        timer: PROVISION_TIMER,
        ...(decided !== undefined && { after: decided }),
        inputs: { pool: state.pool.name, node: shape.name, scaleUpDelaySeconds: state.pool.scaleUpDelayMs / 1000 },
      };
      this.commit([nodeCreation(this.cluster, shape)], cause);
    }, state.pool.scaleUpDelayMs);
    state.provisioning.set(timer, shape.name);
  }

  /** Every pool is at its maximum: the pods that no node provisioning will take are told so. */
  private recordNotTriggered(unschedulable: number, coming: number): void {
    if (this.notTriggeredRecorded) return;
    this.notTriggeredRecorded = true;
    const atMax = this.pools.length;
    const cause: TimerCause = { type: 'timer', timer: SCAN_TIMER, inputs: { unschedulablePods: unschedulable, podsOnProvisioningNodes: coming, poolsAtMaxNodes: atMax } };
    // Waiting pods are placed longest waiting first: the first `coming` will fit on the nodes on their way.
    this.commit(this.podEvents('NotTriggerScaleUp', `pod didn't trigger scale-up: ${atMax} max node group size reached`, coming), cause);
  }

  /** An Event on each of the first unschedulable pods, after the first `skip`. */
  private podEvents(reason: string, message: string, skip = 0): NewEvent[] {
    const events: NewEvent[] = [];
    for (const key of this.scheduler.unschedulableKeys(skip + PODS_NAMED_PER_DECISION).slice(skip)) {
      const gs = this.cluster.gameServers.getByKey(key);
      if (gs) events.push(this.events.event(podReference(gs), { type: 'Normal', reason, message }));
    }
    return events;
  }

  private scaleDown(state: PoolState, now: number): void {
    const { pool, nodes, unneededSince } = state;
    if (state.lastGrowth !== undefined && now - state.lastGrowth < pool.scaleDownDelayAfterAddMs) {
      unneededSince.clear();
      return;
    }
    for (const node of nodes) {
      if (this.scheduler.podsOn(node) === 0) {
        if (!unneededSince.has(node)) unneededSince.set(node, now);
      } else unneededSince.delete(node);
    }
    // Longest empty first; of those, the newest node (highest number) first.
    const due = [...unneededSince]
      .filter(([, since]) => now - since >= pool.scaleDownUnneededTimeMs)
      .sort(([a, sinceA], [b, sinceB]) => sinceA - sinceB || poolNodeOrdinal(pool.name, b) - poolNodeOrdinal(pool.name, a));
    for (const [node, since] of due) {
      if (nodes.size <= pool.minNodes) return;
      // Checked again here, in the turn that commits the deletion: no pod can be placed in between.
      if (this.scheduler.podsOn(node) !== 0) continue;
      const object = this.cluster.get(NODE_KIND, '', node);
      if (!object) continue;
      const cause: TimerCause = {
        type: 'timer',
        timer: SCAN_TIMER,
        inputs: { pool: pool.name, node, emptySeconds: (now - since) / 1000, nodes: nodes.size, minNodes: pool.minNodes },
      };
      this.commit(
        [
          this.events.event(object, { type: 'Normal', reason: 'ScaleDown', message: 'marked the node as toBeDeleted/unschedulable' }),
          resourceEvent('ResourceDeleted', NODE_KIND, '', node, {}),
        ],
        cause,
      );
    }
  }

  private commit(events: NewEvent[], cause: TimerCause): void {
    if (events.length === 0) return;
    // The cluster may be closing: a timer that fires then has nothing left to write to.
    this.cluster.commit(events, cause).catch(() => undefined);
  }
}
