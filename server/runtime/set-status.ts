import type { FeatureGates } from '../features.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVERSET_KIND, GAMESERVERSET_LABEL } from '../kinds/gameserverset/gameserverset.js';
import { FLEET_KIND, FLEET_LABEL } from '../kinds/fleet/fleet.js';
import { INT64_MAX, type Int64, addInt64, minInt64, mulInt64, toInt64 } from '../int64.js';

export interface AggregatedCount {
  count: Int64;
  capacity: Int64;
  allocatedCount: Int64;
  allocatedCapacity: Int64;
}

interface Totals {
  replicas: number;
  readyReplicas: number;
  reservedReplicas: number;
  allocatedReplicas: number;
  shutdownReplicas: number;
  /** Exact sums (beyond int64 if need be): a sum Agones saturates is clamped when rendered. */
  playerCount: Int64;
  playerCapacity: Int64;
  counters: Map<string, AggregatedCount>;
  lists: Map<string, AggregatedCount>;
  /** Sequence number of the last event that changed these totals. */
  seq: number;
  /** `Kind/namespace/name`, built once: it names the object's status changes in a batch. */
  key: string;
}

export interface SetStatus {
  replicas: number;
  readyReplicas: number;
  reservedReplicas: number;
  allocatedReplicas: number;
  shutdownReplicas?: number;
  players?: { count: Int64; capacity: Int64 };
  counters?: Record<string, AggregatedCount>;
  lists?: Record<string, AggregatedCount>;
}

function emptyTotals(key = ''): Totals {
  return {
    key,
    replicas: 0,
    readyReplicas: 0,
    reservedReplicas: 0,
    allocatedReplicas: 0,
    shutdownReplicas: 0,
    playerCount: 0,
    playerCapacity: 0,
    counters: new Map(),
    lists: new Map(),
    seq: 0,
  };
}

function isBeingDeleted(gs: GameServer): boolean {
  return gs.status.state === 'Shutdown' || gs.metadata.deletionTimestamp !== undefined;
}

function addCount(map: Map<string, AggregatedCount>, key: string, count: Int64, capacity: Int64, allocated: boolean, sign: number): void {
  let entry = map.get(key);
  if (!entry) {
    entry = { count: 0, capacity: 0, allocatedCount: 0, allocatedCapacity: 0 };
    map.set(key, entry);
  }
  const countDelta = mulInt64(sign, count);
  const capacityDelta = mulInt64(sign, capacity);
  entry.count = addInt64(entry.count, countDelta);
  entry.capacity = addInt64(entry.capacity, capacityDelta);
  if (allocated) {
    entry.allocatedCount = addInt64(entry.allocatedCount, countDelta);
    entry.allocatedCapacity = addInt64(entry.allocatedCapacity, capacityDelta);
  }
}

/** Agones adds counters with SafeAdd, which stops at the int64 maximum (all terms are non-negative). */
function saturated(sum: Int64): Int64 {
  return typeof sum === 'number' ? sum : toInt64(minInt64(sum, INT64_MAX) as bigint);
}

/** Adds (sign 1) or removes (sign -1) one GameServer's contribution, as Agones's computeStatus counts it. */
function contribute(totals: Totals, gs: GameServer, sign: number): void {
  if (isBeingDeleted(gs)) {
    totals.shutdownReplicas += sign;
    return;
  }
  const state = gs.status.state;
  totals.replicas += sign;
  if (state === 'Ready') totals.readyReplicas += sign;
  else if (state === 'Allocated') totals.allocatedReplicas += sign;
  else if (state === 'Reserved') totals.reservedReplicas += sign;
  const allocated = state === 'Allocated';
  // for-in, not Object.entries: this runs twice per GameServer event, mostly with no counters.
  const { counters, lists } = gs.status;
  if (counters) for (const key in counters) addCount(totals.counters, key, counters[key]!.count, counters[key]!.capacity, allocated, sign);
  if (lists) for (const key in lists) addCount(totals.lists, key, lists[key]!.values.length, lists[key]!.capacity, allocated, sign);
  // Players are counted over active servers only.
  if (gs.status.players && (state === 'Ready' || state === 'Reserved' || allocated)) {
    totals.playerCount = addInt64(totals.playerCount, mulInt64(sign, gs.status.players.count));
    totals.playerCapacity = addInt64(totals.playerCapacity, mulInt64(sign, gs.status.players.capacity));
  }
}

/**
 * The status of every GameServerSet and Fleet, folded incrementally from GameServer changes:
 * each change removes the old contribution and adds the new one, so the cost per event does not
 * grow with the fleet.
 */
interface Touched {
  namespace?: string;
  set?: string;
  fleet?: string;
  setKey?: string;
  fleetKey?: string;
}

export class SetStatusProjection {
  private readonly touched: Touched = {};
  /** namespace -> name -> totals: nested, so no key is built per event. */
  private readonly sets = new Map<string, Map<string, Totals>>();
  private readonly fleets = new Map<string, Map<string, Totals>>();
  /** The totals kept for each kind whose status is folded here. */
  private readonly owners = new Map([
    [GAMESERVERSET_KIND, { totals: this.sets, withShutdown: true }],
    [FLEET_KIND, { totals: this.fleets, withShutdown: false }],
  ]);

  /** Applies one GameServer change; returns the names of the set and fleet whose status moved. */
  apply(
    previous: GameServer | undefined,
    next: GameServer | undefined,
    seq: number,
  ): Touched {
    // One object, reused: callers read it before the next call.
    const touched = this.touched;
    touched.namespace = touched.set = touched.fleet = touched.setKey = touched.fleetKey = undefined;
    // The same labels in the same namespace (most changes): the same totals, found once.
    if (previous && next && previous.metadata.labels === next.metadata.labels && previous.metadata.namespace === next.metadata.namespace) {
      this.count(previous, -1, seq, next);
      return touched;
    }
    if (previous) this.count(previous, -1, seq);
    if (next) this.count(next, 1, seq);
    return touched;
  }

  /** `then`: the next version of `gs`, with the same labels and namespace, added after `gs` is counted with `sign`. */
  private count(gs: GameServer, sign: 1 | -1, seq: number, then?: GameServer): void {
    const touched = this.touched;
    touched.namespace = gs.metadata.namespace;
    const set = gs.metadata.labels[GAMESERVERSET_LABEL];
    if (set) {
      touched.set = set;
      touched.setKey = this.fold(this.sets, GAMESERVERSET_KIND, set, gs, sign, seq, then);
    }
    const fleet = gs.metadata.labels[FLEET_LABEL];
    if (fleet) {
      touched.fleet = fleet;
      touched.fleetKey = this.fold(this.fleets, FLEET_KIND, fleet, gs, sign, seq, then);
    }
  }

  /** Adds or removes one GameServer in the totals of its set or fleet (then adds `then`); returns their key. */
  private fold(map: Map<string, Map<string, Totals>>, kind: string, name: string, gs: GameServer, sign: 1 | -1, seq: number, then: GameServer | undefined): string {
    const totals = this.totals(map, gs.metadata.namespace, name, kind);
    contribute(totals, gs, sign);
    if (then) contribute(totals, then, 1);
    totals.seq = seq;
    return totals.key;
  }

  /**
   * The status of a set or fleet (`kind`), folded from its GameServers; a set's counts those
   * shutting down apart, a fleet's does not.
   */
  status(kind: string, namespace: string, name: string, templateKeys: TemplateKeys, gates: FeatureGates): SetStatus {
    const owners = this.owners.get(kind);
    return render(owners?.totals.get(namespace)?.get(name), templateKeys, gates, owners?.withShutdown ?? false);
  }

  /** The sequence number of the last GameServer change that moved this set's or fleet's status. */
  seq(kind: string, namespace: string, name: string): number {
    return this.owners.get(kind)?.totals.get(namespace)?.get(name)?.seq ?? 0;
  }

  /** Makes this projection hold what `other` holds (its totals change in place, so they are copied). */
  copyFrom(other: SetStatusProjection): void {
    copyTotals(other.sets, this.sets);
    copyTotals(other.fleets, this.fleets);
  }

  private totals(map: Map<string, Map<string, Totals>>, namespace: string, name: string, kind: string): Totals {
    let names = map.get(namespace);
    if (!names) {
      names = new Map();
      map.set(namespace, names);
    }
    let totals = names.get(name);
    if (!totals) {
      totals = emptyTotals(`${kind}/${namespace}/${name}`);
      names.set(name, totals);
    }
    return totals;
  }
}

function copyTotals(from: Map<string, Map<string, Totals>>, to: Map<string, Map<string, Totals>>): void {
  to.clear();
  for (const [namespace, names] of from) {
    const copies = new Map<string, Totals>();
    for (const [name, t] of names) {
      const counters = new Map([...t.counters].map(([key, count]) => [key, { ...count }]));
      const lists = new Map([...t.lists].map(([key, count]) => [key, { ...count }]));
      copies.set(name, { ...t, counters, lists });
    }
    to.set(namespace, copies);
  }
}

export interface TemplateKeys {
  counters: string[];
  lists: string[];
}

function aggregate(map: Map<string, AggregatedCount>, templateKeys: string[]): Record<string, AggregatedCount> {
  const out: Record<string, AggregatedCount> = {};
  for (const key of templateKeys) out[key] = { allocatedCount: 0, allocatedCapacity: 0, count: 0, capacity: 0 };
  for (const [key, value] of map) {
    out[key] = {
      allocatedCount: saturated(value.allocatedCount),
      allocatedCapacity: saturated(value.allocatedCapacity),
      count: saturated(value.count),
      capacity: saturated(value.capacity),
    };
  }
  return out;
}

function render(totals: Totals | undefined, templateKeys: TemplateKeys, gates: FeatureGates, withShutdown: boolean): SetStatus {
  const t = totals ?? emptyTotals();
  return {
    replicas: t.replicas,
    readyReplicas: t.readyReplicas,
    reservedReplicas: t.reservedReplicas,
    allocatedReplicas: t.allocatedReplicas,
    ...(withShutdown && { shutdownReplicas: t.shutdownReplicas }),
    ...(gates.PlayerTracking && { players: { count: saturated(t.playerCount), capacity: saturated(t.playerCapacity) } }),
    ...(gates.CountsAndLists && {
      counters: aggregate(t.counters, templateKeys.counters),
      lists: aggregate(t.lists, templateKeys.lists),
    }),
  };
}
