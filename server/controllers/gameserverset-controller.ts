import {
  type CountedReconciliation,
  type ReconcileCounts,
  type ReconcileLimits,
  type Reconciliation,
  DEFAULT_RECONCILE_LIMITS,
  addToReconcileCounts,
  computeAllocationOverflow,
  computeReconciliation,
  emptyReconcileCounts,
  hasOverflowMetadata,
  isScaleDownCandidate,
  reconcileFromCounts,
} from '../../machines/gameserverset-reconcile.js';
import { type NodeCounts, type ScaleDownOrderOptions, firstForScaleDown } from '../../machines/scale-down-order.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { GAMESERVERSET_KIND, GAMESERVERSET_LABEL, gameServerOfSet, gameServerSetSpecOf } from '../kinds/gameserverset/gameserverset.js';
import { type OwnerReference, objectKey } from '../kinds/meta.js';
import type { Resource } from '../kinds/resource.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import { ResourceService } from '../resources/service.js';
import type { GameServerSetControllerPort } from './ports.js';
import type { NodeCounter } from '../runtime/node-counter.js';
import type { ObjectChange, ObjectStore } from '../runtime/object-store.js';
import type { Projection, ProjectionDefinition } from '../runtime/projection.js';
import type { Store } from '../runtime/store.js';
import { EventRecorder } from './k8s-events.js';
import { KeyedController } from './keyed-controller.js';
import type { Trigger } from './work-queue.js';

/** The uid a GameServer's set owner reference names (the controller reference when marked). */
function ownerSetUid(gs: GameServer): string | undefined {
  let found: OwnerReference | undefined;
  for (const ref of gs.metadata.ownerReferences ?? []) {
    if (ref.kind !== GAMESERVERSET_KIND) continue;
    if (ref.controller) return ref.uid;
    found ??= ref;
  }
  return found?.uid;
}

function groupKey(namespace: string, setName: string, setUid: string): string {
  return `${namespace}/${setName}/${setUid}`;
}

interface Group {
  keys: Set<string>;
  /**
   * The keys of its scale-down candidates (`isScaleDownCandidate`), in no particular order: the
   * scale-down order is total, so a scale-down reads these few rather than the whole set.
   */
  candidates: Set<string>;
  counts: ReconcileCounts;
  /** Moves whenever a scale-down candidate of the set changes (see `candidatesVersion`). */
  version: number;
}

function groupOf(gs: GameServer): string | undefined {
  const setName = gs.metadata.labels[GAMESERVERSET_LABEL];
  if (!setName) return undefined;
  const uid = ownerSetUid(gs);
  return uid ? groupKey(gs.metadata.namespace, setName, uid) : undefined;
}

/**
 * `groupOf`, remembered per labels object: every version of a GameServer, and every copy a set
 * creates in one batch, shares its labels and owner references, so the key is built (and hashed
 * by the groups map) once rather than on every event.
 */
const groupKeys = new WeakMap<Record<string, string>, { namespace: string; owners: GameServer['metadata']['ownerReferences']; key: string | undefined }>();

function cachedGroupOf(gs: GameServer): string | undefined {
  const { labels, namespace, ownerReferences } = gs.metadata;
  const known = groupKeys.get(labels);
  if (known && known.namespace === namespace && known.owners === ownerReferences) return known.key;
  const key = groupOf(gs);
  groupKeys.set(labels, { namespace, owners: ownerReferences, key });
  return key;
}

/** Whether two versions of a GameServer sit in the same set, node, state and deletion: every count the index keeps is then the same. */
function sameSetStanding(a: GameServer, b: GameServer): boolean {
  return (
    a.status.state === b.status.state &&
    a.status.nodeName === b.status.nodeName &&
    a.metadata.labels === b.metadata.labels &&
    a.metadata.ownerReferences === b.metadata.ownerReferences &&
    a.metadata.namespace === b.metadata.namespace &&
    a.metadata.deletionTimestamp === b.metadata.deletionTimestamp
  );
}

/**
 * The GameServers of every set, kept current as each change is applied (so it never lags the
 * read model a decision reads), with the node counter's Ready/Allocated per node. A GameServer
 * belongs to a set when its `agones.dev/gameserverset` label names the set and an owner reference
 * carries the set's uid. Each change costs O(1): a reconcile lists one set, never the whole cluster.
 */
export class GameServerSetIndex implements Projection {
  readonly name = GAMESERVERSET_INDEX.name;
  private readonly groups = new Map<string, Group>();
  /** Source of versions: one counter, so a version never repeats, even for a re-made group. */
  private stamp = 0;

  constructor(
    private readonly store: ObjectStore<GameServer>,
    private readonly nodes: NodeCounter,
  ) {}

  /** Ready and Allocated per node, cluster-wide (every node a GameServer names has an entry). */
  get nodeCounts(): NodeCounts {
    return this.nodes.counts;
  }

  rebuild(): void {
    this.groups.clear();
    for (const [key, gs] of this.store.entries()) this.apply(key, undefined, gs);
  }

  gameServerApplied({ key, previous, object }: ObjectChange<GameServer>): void {
    this.apply(key, previous, object);
  }

  /** Each set's members (in creation order) and counts. */
  snapshot(): unknown {
    return [...this.groups]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([group, { keys, candidates, counts }]) => ({ group, keys: [...keys], candidates: [...candidates].sort(), counts: { ...counts } }));
  }

  /** Follows one applied change of a GameServer. */
  apply(key: string, previous: GameServer | undefined, next: GameServer | undefined): void {
    if (previous === next) return;
    if (previous && next && sameSetStanding(previous, next)) {
      // Most changes (a counter, a label of an Allocated server) move no count: only a candidate's order may change.
      // Being a candidate rests on the state and the deletion alone, the same in both versions.
      if (isScaleDownCandidate(next)) {
        const group = this.groups.get(cachedGroupOf(next) ?? '');
        if (group) group.version = ++this.stamp;
      }
      return;
    }
    const before = previous && cachedGroupOf(previous);
    const after = next && cachedGroupOf(next);
    const wasCandidate = previous !== undefined && isScaleDownCandidate(previous);
    const isCandidate = next !== undefined && isScaleDownCandidate(next);
    const candidate = wasCandidate || isCandidate;
    // A candidate that stays one in the same set keeps its entry: most changes are of servers starting.
    const staysCandidate = wasCandidate && isCandidate && before === after;
    if (previous) {
      if (before) {
        const group = this.groups.get(before);
        if (group) {
          addToReconcileCounts(group.counts, previous, -1);
          if (wasCandidate && !staysCandidate) group.candidates.delete(key);
          if (candidate) group.version = ++this.stamp;
          // A GameServer that stays in its set keeps its place in the creation order.
          if (before !== after) {
            group.keys.delete(key);
            if (group.keys.size === 0) this.groups.delete(before);
          }
        }
      }
    }
    if (next) {
      if (after) {
        let group = this.groups.get(after);
        const stays = group !== undefined && before === after;
        if (!group) {
          group = { keys: new Set(), candidates: new Set(), counts: emptyReconcileCounts(), version: ++this.stamp };
          this.groups.set(after, group);
        }
        if (!stays) group.keys.add(key);
        if (isCandidate && !(stays && staysCandidate)) group.candidates.add(key);
        addToReconcileCounts(group.counts, next, 1);
        if (candidate) group.version = ++this.stamp;
      }
    }
  }

  /**
   * Changes whenever one of the set's scale-down candidates is added, removed or changed, so a
   * scale-down order computed earlier is still exact while this and `nodesVersion` hold.
   */
  candidatesVersion(namespace: string, setName: string, setUid: string): number {
    return this.groups.get(groupKey(namespace, setName, setUid))?.version ?? 0;
  }

  /** Changes whenever a node's Ready or Allocated count does. */
  get nodesVersion(): number {
    return this.nodes.version;
  }

  /** The set's GameServers, in the order they were created. */
  members(namespace: string, setName: string, setUid: string): GameServer[] {
    const group = this.groups.get(groupKey(namespace, setName, setUid));
    const out: GameServer[] = [];
    if (!group) return out;
    for (const key of group.keys) {
      const gs = this.store.getByKey(key);
      if (gs) out.push(gs);
    }
    return out;
  }

  /** The set's scale-down candidates, in no particular order. */
  candidates(namespace: string, setName: string, setUid: string): GameServer[] {
    const group = this.groups.get(groupKey(namespace, setName, setUid));
    const out: GameServer[] = [];
    if (!group) return out;
    for (const key of group.candidates) out.push(this.store.getByKey(key)!);
    return out;
  }

  counts(namespace: string, setName: string, setUid: string): ReconcileCounts {
    return this.groups.get(groupKey(namespace, setName, setUid))?.counts ?? emptyReconcileCounts();
  }

}

/** The GameServerSet index of a store: registered once, shared by its set controllers. */
export const GAMESERVERSET_INDEX: ProjectionDefinition<GameServerSetIndex, Store> = {
  name: 'gameserverset-index',
  create: (store) => new GameServerSetIndex(store.gameServers, store.nodes),
};

interface VictimOrder {
  order: GameServer[];
  next: number;
  /** What the order was computed against. */
  setVersion: string;
  candidatesVersion: number;
  nodesVersion: number;
}

export interface GameServerSetControllerOptions {
  limits?: Partial<ReconcileLimits>;
}

/**
 * The GameServerSet controller (Agones's pkg/gameserversets, reference §4): keeps each set at
 * `spec.replicas` GameServers, replaces Unhealthy and long-Errored ones, shuts the right ones
 * down on scale-down, and labels overflowing Allocated servers. It reads the read model, asks
 * the pure reconcile functions in machines/, and commits: creations in one commit per batch,
 * shutdowns through each GameServer's machine, Kubernetes Events alongside.
 */
export class GameServerSetController extends KeyedController<GameServerSetControllerPort> {
  readonly index: GameServerSetIndex;
  private readonly recorder: EventRecorder;
  private readonly service: ResourceService;
  private readonly limits: ReconcileLimits;
  /** What the overflow check last saw per set, so it runs again only when that changes. */
  private readonly overflowSeen = new Map<string, string>();
  /** Per set, the rest of a scale-down order being worked through batch by batch. */
  private readonly victimOrders = new Map<string, VictimOrder>();
  /** Each set object's GameServer body (objects are replaced, never changed, on a write). */
  private readonly templates = new WeakMap<Resource, Record<string, unknown>>();

  /** `service` builds GameServers with the GameServer kind's defaults and validation. */
  constructor(cluster: GameServerSetControllerPort, service: ResourceService, options: GameServerSetControllerOptions = {}) {
    super(cluster);
    this.index = cluster.use(GAMESERVERSET_INDEX);
    this.service = service;
    this.limits = { ...DEFAULT_RECONCILE_LIMITS, ...options.limits };
    this.recorder = new EventRecorder(cluster, 'gameserverset-controller');
  }

  start(): void {
    this.renewQueue();
    this.subscriptions.push(
      this.cluster.gameServerChanges$.subscribe(({ event, previous, object }) => {
        const before = previous?.metadata.labels[GAMESERVERSET_LABEL];
        const after = object?.metadata.labels[GAMESERVERSET_LABEL];
        if (before) this.queue.add(objectKey(previous!.metadata.namespace, before), event.seq);
        if (after && (after !== before || object!.metadata.namespace !== previous?.metadata.namespace)) {
          this.queue.add(objectKey(object!.metadata.namespace, after), event.seq);
        }
      }),
      // A deletion too: the sync then forgets what it kept for the set.
      this.cluster.changesOf(GAMESERVERSET_KIND).subscribe((change) => this.queue.add(objectKey(change.namespace, change.name), change.seq, !change.derived)),
    );
    for (const [key] of this.cluster.readModel.store(GAMESERVERSET_KIND)?.entries() ?? []) this.queue.add(key);
  }

  protected async sync(key: string, trigger: Trigger | undefined): Promise<void> {
    const set = this.cluster.readModel.store(GAMESERVERSET_KIND)?.getByKey(key);
    if (!set) {
      this.overflowSeen.delete(key);
      this.victimOrders.delete(key);
      return;
    }
    const { namespace, name, uid } = set.metadata;
    const spec = gameServerSetSpecOf(set);
    const target = Math.max(0, spec.replicas ?? 0);
    const beingDeleted = set.metadata.deletionTimestamp !== undefined;
    const counts = this.index.counts(namespace, name, uid);
    let members: GameServer[] | undefined;
    const listMembers = () => (members ??= this.index.members(namespace, name, uid));
    const order: ScaleDownOrderOptions = {
      scheduling: spec.scheduling ?? 'Packed',
      ...(spec.priorities && { priorities: spec.priorities }),
      countsAndLists: this.cluster.gates.CountsAndLists,
      nodeCounts: this.index.nodeCounts,
    };

    // The totals decide most syncs without listing the set; victims then come from a
    // scale-down order kept across the batches of one large scale-down.
    let plan: Reconciliation;
    const counted = reconcileFromCounts(counts, target, this.limits, beingDeleted);
    if (counted) {
      const toDelete = counted.victimsInBatch > 0 ? this.victims(key, set, counted, order) : [];
      plan = { toAdd: counted.toAdd, toDelete, partial: counted.partial };
    } else {
      this.victimOrders.delete(key);
      plan = computeReconciliation(listMembers(), target, this.cluster.clock.now(), this.limits, { ...order, setBeingDeleted: beingDeleted });
    }

    const commits: Promise<void>[] = [];
    const cause = this.syncCause(GAMESERVERSET_KIND, namespace, name, trigger, { replicas: target, had: counts.live, allocated: counts.allocated });
    if (plan.toAdd > 0) commits.push(this.create(set, plan.toAdd, cause));
    if (plan.toDelete.length > 0) commits.push(this.shutDown(set, plan.toDelete, cause));
    const overflow = this.overflow(key, set, counts, target, listMembers, order, cause);
    if (overflow) commits.push(overflow);
    // Our own shutdowns are already in the read model: the kept order stays exact past them.
    const kept = this.victimOrders.get(key);
    if (kept) {
      kept.candidatesVersion = this.index.candidatesVersion(namespace, name, uid);
      kept.nodesVersion = this.index.nodesVersion;
    }
    await Promise.all(commits);

    if (plan.partial) this.queue.add(key);
    if (plan.recheckAfterMs !== undefined) this.queue.addAfter(key, plan.recheckAfterMs);
  }

  /**
   * The next `victimsInBatch` servers in scale-down order. When more batches will follow, the
   * whole order is computed once and worked through: shutting down the first servers in the
   * order never reorders the rest (their node only gets emptier), so it stays exact as long as
   * nothing else changed the set's candidates or the node counts.
   */
  private victims(
    key: string,
    set: Resource,
    counted: CountedReconciliation,
    order: ScaleDownOrderOptions,
  ): GameServer[] {
    const { namespace, name, uid } = set.metadata;
    let kept = this.victimOrders.get(key);
    if (
      kept &&
      (kept.setVersion !== set.metadata.resourceVersion ||
        kept.candidatesVersion !== this.index.candidatesVersion(namespace, name, uid) ||
        (order.scheduling !== 'Distributed' && kept.nodesVersion !== this.index.nodesVersion))
    ) {
      kept = undefined;
    }
    if (!kept) {
      this.victimOrders.delete(key);
      const candidates = this.index.candidates(namespace, name, uid);
      if (counted.victims <= counted.victimsInBatch) return firstForScaleDown(candidates, counted.victimsInBatch, order);
      kept = {
        order: firstForScaleDown(candidates, counted.victims, order),
        next: 0,
        setVersion: set.metadata.resourceVersion,
        candidatesVersion: 0,
        nodesVersion: 0,
      };
      this.victimOrders.set(key, kept);
    }
    const out: GameServer[] = [];
    const store = this.cluster.gameServers;
    while (out.length < counted.victimsInBatch && kept.next < kept.order.length) {
      const gs = kept.order[kept.next++]!;
      // Defensive: the versions say nothing moved, so each is the very object in the store.
      if (store.get(gs.metadata.namespace, gs.metadata.name) !== gs) {
        this.victimOrders.delete(key);
        return this.victims(key, set, counted, order);
      }
      out.push(gs);
    }
    if (kept.next >= kept.order.length) this.victimOrders.delete(key);
    return out;
  }

  /**
   * Creates `count` GameServers from the set's template in one commit (one batch event; the
   * read model derives each SuccessfulCreate Event from it).
   */
  private create(set: Resource, count: number, cause: Cause): Promise<void> {
    // One body per set revision, so the service prepares (defaults, validates) its template once.
    let body = this.templates.get(set);
    if (!body) this.templates.set(set, (body = gameServerOfSet(set)));
    const bodies: unknown[] = [];
    for (let i = 0; i < count; i++) bodies.push(body);
    const { events } = this.service.prepareGameServerBatch(set.metadata.namespace, bodies);
    return this.cluster.commit(events, cause);
  }

  /** Moves each victim to Shutdown through its machine (the GameServer controller deletes it). */
  private async shutDown(set: Resource, victims: readonly GameServer[], cause: Cause): Promise<void> {
    const commits: Promise<void>[] = [];
    const events: NewEvent[] = [];
    for (const gs of victims) {
      const { namespace, name } = gs.metadata;
      const state = gs.status.state;
      const commit = this.cluster.actors.send(
        namespace,
        name,
        { type: 'controller.shutdown', message: `Deleted by GameServerSet ${set.metadata.name}` },
        cause,
      );
      if (!commit) {
        // The machine refused (already shutting down, say): order afresh next time.
        this.victimOrders.delete(objectKey(set.metadata.namespace, set.metadata.name));
        continue;
      }
      commits.push(commit);
      events.push(this.recorder.event(set, { type: 'Normal', reason: 'SuccessfulDelete', message: `Deleted gameserver in state ${state}: ${name}` }));
    }
    commits.push(this.cluster.commit(events, cause));
    await Promise.all(commits);
  }

  /** §4.6: labels the Allocated servers beyond spec.replicas (FleetAllocationOverflow gate). */
  private overflow(
    key: string,
    set: Resource,
    counts: ReconcileCounts,
    target: number,
    listMembers: () => GameServer[],
    order: ScaleDownOrderOptions,
    cause: Cause,
  ): Promise<void> | undefined {
    const spec = gameServerSetSpecOf(set);
    if (!this.cluster.gates.FleetAllocationOverflow || !hasOverflowMetadata(spec.allocationOverflow) || counts.allocated <= target) {
      this.overflowSeen.delete(key);
      return undefined;
    }
    // Agones checks on every update of the set, i.e. when its spec or its counts move.
    const seen = `${set.metadata.resourceVersion}|${counts.allocated}|${counts.live}`;
    if (this.overflowSeen.get(key) === seen) return undefined;
    this.overflowSeen.set(key, seen);
    const overflow = spec.allocationOverflow;
    const marked = computeAllocationOverflow(listMembers(), target, overflow, order);
    if (marked.length === 0) return undefined;
    const events = marked.map((gs) =>
      gameServerEvent('GameServerMetadataPatched', gs.metadata.namespace, gs.metadata.name, {
        ...(overflow.labels && { labels: { ...overflow.labels } }),
        ...(overflow.annotations && { annotations: { ...overflow.annotations } }),
      }),
    );
    return this.cluster.commit(events, cause);
  }
}
