import type { CapacityKind, CapacityTotals, DeletionRun } from '../../machines/autoscaler.js';
import { type ScaleDownOrderOptions, scaleDownComparator } from '../../machines/scale-down-order.js';
import { FLEET_LABEL } from '../kinds/fleet/fleet.js';
import type { CounterStatus, GameServer, ListStatus } from '../kinds/gameserver-types.js';
import { objectKey } from '../kinds/meta.js';
import type { NodeCounter } from '../runtime/node-counter.js';
import type { ObjectChange, ObjectStore } from '../runtime/object-store.js';
import type { Projection, ProjectionDefinition } from '../runtime/projection.js';
import type { Store } from '../runtime/store.js';

/** A key's running totals over one node's members of a fleet. */
interface Totals {
  count: number;
  capacity: number;
  /** Members whose count is below 0 or above their capacity (impossible by the API's rules, but counted, not assumed). */
  unbounded: number;
}

/** A fleet's members on one node, and their counters' and lists' totals. */
interface NodeMembers {
  node: string;
  keys: Set<string>;
  counters: Map<string, Totals>;
  lists: Map<string, Totals>;
}

function totalsOf(totals: Map<string, Totals>, name: string): Totals {
  let t = totals.get(name);
  if (!t) {
    t = { count: 0, capacity: 0, unbounded: 0 };
    totals.set(name, t);
  }
  return t;
}

function add(t: Totals, count: number, capacity: number, sign: 1 | -1): void {
  t.count += sign * count;
  t.capacity += sign * capacity;
  if (count < 0 || count > capacity || capacity < 0) t.unbounded += sign;
}

type Values<V> = Record<string, V> | undefined;
const counterCount = (c: CounterStatus) => Number(c.count);
const counterCapacity = (c: CounterStatus) => Number(c.capacity);
const listCount = (l: ListStatus) => l.values.length;
const listCapacity = (l: ListStatus) => l.capacity;

/**
 * Moves the totals from one version's counters (or lists) to the next's: only the keys whose
 * values changed; `before` undefined adds a server, `after` undefined takes one out. Loops with
 * `in`: this runs on every change.
 */
function moveTotals<V>(totals: Map<string, Totals>, before: Values<V>, after: Values<V>, count: (v: V) => number, capacity: (v: V) => number): void {
  if (before === after) return;
  for (const name in before) {
    const old = before[name]!;
    const now = after?.[name];
    if (old === now) continue;
    const t = totalsOf(totals, name);
    add(t, count(old), capacity(old), -1);
    if (now !== undefined) add(t, count(now), capacity(now), 1);
  }
  for (const name in after) {
    if (before?.[name] !== undefined) continue;
    const now = after[name]!;
    add(totalsOf(totals, name), count(now), capacity(now), 1);
  }
}

/** Moves a node's totals from one version of a GameServer to the next (either may be undefined: it came or went). */
function moveValues(members: NodeMembers, previous: GameServer | undefined, next: GameServer | undefined): void {
  moveTotals(members.counters, previous?.status.counters, next?.status.counters, counterCount, counterCapacity);
  moveTotals(members.lists, previous?.status.lists, next?.status.lists, listCount, listCapacity);
}

function fleetOf(gs: GameServer): string | undefined {
  const fleet = gs.metadata.labels[FLEET_LABEL];
  return fleet === undefined ? undefined : objectKey(gs.metadata.namespace, fleet);
}

/**
 * Each fleet's GameServers by node, with their counters' and lists' totals, kept in step with
 * every change: a Counter or List scale-down walks the deletion order node by node (Packed, by
 * the node counter's cluster-wide counts) and passes a node whole on its totals, so a sync costs
 * the fleet's nodes, not its servers. Membership is Agones's: the `agones.dev/fleet` label.
 */
export class FleetDeletionIndex implements Projection {
  readonly name = FLEET_DELETION_INDEX.name;
  private readonly fleets = new Map<string, Map<string, NodeMembers>>();
  /** Where each GameServer is counted (by the store's key). */
  private readonly placed = new Map<string, NodeMembers>();

  constructor(
    private readonly store: ObjectStore<GameServer>,
    private readonly nodes: NodeCounter,
  ) {}

  rebuild(): void {
    this.fleets.clear();
    this.placed.clear();
    for (const [key, gs] of this.store.entries()) this.apply(key, undefined, gs);
  }

  gameServerApplied({ key, previous, object }: ObjectChange<GameServer>): void {
    this.apply(key, previous, object);
  }

  /** Each fleet's nodes: their members and totals. */
  snapshot(): unknown {
    const byName = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);
    const totals = (map: Map<string, Totals>) => Object.fromEntries([...map].sort(byName).map(([name, t]) => [name, { ...t }]));
    return [...this.fleets].sort(byName).map(([fleet, nodes]) => ({
      fleet,
      nodes: [...nodes].sort(byName).map(([node, m]) => ({ node, keys: [...m.keys].sort(), counters: totals(m.counters), lists: totals(m.lists) })),
    }));
  }

  apply(key: string, previous: GameServer | undefined, next: GameServer | undefined): void {
    if (previous === next) return;
    if (previous && next && previous.metadata.labels === next.metadata.labels && previous.status.nodeName === next.status.nodeName) {
      if (previous.status.counters === next.status.counters && previous.status.lists === next.status.lists) return;
      const members = this.placed.get(key);
      if (members) moveValues(members, previous, next);
      return;
    }
    const was = this.placed.get(key);
    if (was && previous) {
      was.keys.delete(key);
      moveValues(was, previous, undefined);
      this.placed.delete(key);
      if (was.keys.size === 0) this.forget(previous, was);
    }
    const fleet = next && fleetOf(next);
    if (!next || fleet === undefined) return;
    let nodes = this.fleets.get(fleet);
    if (!nodes) {
      nodes = new Map();
      this.fleets.set(fleet, nodes);
    }
    const node = next.status.nodeName;
    let members = nodes.get(node);
    if (!members) {
      members = { node, keys: new Set(), counters: new Map(), lists: new Map() };
      nodes.set(node, members);
    }
    members.keys.add(key);
    moveValues(members, undefined, next);
    this.placed.set(key, members);
  }

  /**
   * The fleet's deletion order under Packed, node by node as `scaleDownComparator` orders them
   * (two servers on different nodes compare by their nodes alone, so any member stands for its
   * node); within a node, the comparator's order, worked out only when a walk enters the node.
   */
  *packedRuns(namespace: string, fleetName: string, options: Omit<ScaleDownOrderOptions, 'nodeCounts' | 'scheduling'>): Generator<DeletionRun> {
    const nodes = this.fleets.get(objectKey(namespace, fleetName));
    if (!nodes) return;
    const compare = scaleDownComparator({ ...options, scheduling: 'Packed' }, this.nodes.counts);
    const order = [...nodes.values()].map((members) => ({ members, first: this.store.getByKey(members.keys.values().next().value!)! }));
    order.sort((a, b) => compare(a.first, b.first));
    for (const { members } of order) {
      yield {
        size: members.keys.size,
        totals: (kind: CapacityKind, key: string): CapacityTotals => {
          const t = (kind === 'Counter' ? members.counters : members.lists).get(key);
          return t ? { count: t.count, capacity: t.capacity, bounded: t.unbounded === 0 } : { count: 0, capacity: 0, bounded: true };
        },
        ordered: () => {
          const servers: GameServer[] = [];
          for (const key of members.keys) {
            const gs = this.store.getByKey(key);
            if (gs) servers.push(gs);
          }
          return servers.sort(compare);
        },
      };
    }
  }

  private forget(gs: GameServer, members: NodeMembers): void {
    const fleet = fleetOf(gs);
    const nodes = fleet === undefined ? undefined : this.fleets.get(fleet);
    if (!nodes || nodes.get(members.node) !== members) return;
    nodes.delete(members.node);
    if (nodes.size === 0) this.fleets.delete(fleet!);
  }
}

/** The fleets' deletion index of a store: registered the first time a Counter or List scale-down asks. */
export const FLEET_DELETION_INDEX: ProjectionDefinition<FleetDeletionIndex, Store> = {
  name: 'fleet-deletion-index',
  create: (store) => new FleetDeletionIndex(store.gameServers, store.nodes),
};
