import type { FeatureGates } from '../server/features.js';
import { LAST_ALLOCATED_ANNOTATION } from '../server/kinds/gameserver/gameserver.js';
import { type CounterStatus, type GameServer, LIST_MAX_CAPACITY, type ListStatus } from '../server/kinds/gameserver-types.js';
import { type GameServerAllocated, gameServerEvent } from '../server/kinds/gameserver/events.js';
import { rfc3339Nano } from '../server/kinds/meta.js';
import { type Priority, comparePriorities } from '../server/kinds/priorities.js';
import { type Int64, addInt64, maxInt64, minInt64, subInt64 } from '../server/int64.js';
import {
  type CounterAction,
  type CounterSelector,
  type GameServerAllocation,
  type GameServerAllocationSpec,
  type GameServerSelector,
  type ListAction,
  type ListSelector,
  LOCAL_ALLOCATION_SOURCE,
  toSelectors,
} from '../server/kinds/gameserverallocation/gameserverallocation.js';
import { type Requirement, convertLabelSelector, matchesSelector as matchesRequirements } from '../server/kinds/label-selector.js';
import type { NodeCounts } from './scale-down-order.js';

/**
 * The allocator's decisions as pure functions (reference §6.6-6.8): which GameServer matches a
 * selector, the order candidates are tried in, and what an allocation does to the chosen one.
 * No clock and no randomness inside: `now` and a random source are passed in.
 */

// ---------------------------------------------------------------------------------------------
// Matching (§6.7)
// ---------------------------------------------------------------------------------------------

/**
 * Parsed label requirements per selector object. Agones re-parses on every test; caching keeps
 * the O(servers x selectors) scan of a request free of that work. Selectors are never mutated.
 * `null` marks a selector whose labels do not convert (it matches nothing).
 */
const requirementsCache = new WeakMap<GameServerSelector, Requirement[] | null>();

function requirementsOf(selector: GameServerSelector): Requirement[] | null {
  let requirements = requirementsCache.get(selector);
  if (requirements === undefined) {
    const conversion = convertLabelSelector(selector);
    requirements = conversion.ok ? conversion.requirements : null;
    requirementsCache.set(selector, requirements);
  }
  return requirements;
}

function within(value: Int64, min: Int64 | null | undefined, max: Int64 | null | undefined): boolean {
  // 0 (or nothing) on a max field means no upper bound.
  return value >= (min ?? 0) && (!max || value <= max);
}

function matchesCounters(gs: GameServer, selectors: Record<string, CounterSelector>): boolean {
  const counters = gs.status.counters;
  if (!counters) return false;
  for (const key in selectors) {
    const counter = counters[key];
    if (!counter) return false;
    const wanted = selectors[key] ?? {};
    if (!within(subInt64(counter.capacity, counter.count), wanted.minAvailable, wanted.maxAvailable)) return false;
    if (!within(counter.count, wanted.minCount, wanted.maxCount)) return false;
  }
  return true;
}

function matchesLists(gs: GameServer, selectors: Record<string, ListSelector>): boolean {
  const lists = gs.status.lists;
  if (!lists) return false;
  for (const key in selectors) {
    const list = lists[key];
    if (!list) return false;
    const wanted = selectors[key] ?? {};
    if (!within(list.capacity - list.values.length, wanted.minAvailable, wanted.maxAvailable)) return false;
    if (wanted.containsValue && !list.values.includes(wanted.containsValue)) return false;
  }
  return true;
}

function isEmpty(map: object | null | undefined): boolean {
  if (!map) return true;
  for (const _key in map) return false;
  return true;
}

/**
 * Whether a GameServer satisfies a selector: labels (matchLabels and matchExpressions; never
 * annotations), state (Ready unless the selector says Allocated), players when
 * PlayerAllocationFilter is on (a maxAvailable of 0 disables that filter), counters and lists
 * when CountsAndLists is on (0 on a max field is unbounded; a missing key never matches).
 * A selector whose labels do not convert matches nothing (Agones validates before matching).
 */
export function matchesSelector(gs: GameServer, selector: GameServerSelector, gates: FeatureGates): boolean {
  if (selector.matchLabels || selector.matchExpressions) {
    const requirements = requirementsOf(selector);
    if (!requirements || !matchesRequirements(requirements, gs.metadata.labels ?? {})) return false;
  }
  if ((selector.gameServerState ?? 'Ready') !== gs.status.state) return false;
  if (gates.PlayerAllocationFilter) {
    const wanted = selector.players;
    const players = gs.status.players;
    if (wanted && players && wanted.maxAvailable) {
      if (!within(subInt64(players.capacity, players.count), wanted.minAvailable, wanted.maxAvailable)) return false;
    }
  }
  if (gates.CountsAndLists) {
    if (!isEmpty(selector.counters) && !matchesCounters(gs, selector.counters!)) return false;
    if (!isEmpty(selector.lists) && !matchesLists(gs, selector.lists!)) return false;
  }
  return true;
}

/**
 * Whether `matchesSelector` tests more than matchLabels and state (expressions, players,
 * counters, lists): then most servers with the labels may fail it, and scanning for a match
 * costs more than keeping the matches.
 */
export function testsBeyondLabels(selector: GameServerSelector, gates: FeatureGates): boolean {
  if (selector.matchExpressions && selector.matchExpressions.length > 0) return true;
  if (gates.PlayerAllocationFilter && selector.players?.maxAvailable) return true;
  return gates.CountsAndLists && (!isEmpty(selector.counters) || !isEmpty(selector.lists));
}

/**
 * How one selector of a (defaulted) request is served from the allocation index: which pool, which
 * labels, the test of each candidate, and the order (Packed by node with `better` breaking ties;
 * Distributed with priorities by `compare`; Distributed without them at random). Worked out once
 * per selector object: the functions are the index's to call, and requests are reused.
 */
export interface SelectorPick {
  pool: 'Ready' | 'Allocated';
  labels: Record<string, string>;
  accept: (gs: GameServer) => boolean;
  /**
   * Whether the pool's bucket of `labels` holds exactly the servers `accept` takes (at most one
   * label, nothing tested beyond labels and state): the index then runs no test per candidate.
   */
  exact: boolean;
  /** The object `accept` depends on alone, when it tests more than labels (the index keeps a view of its matches). */
  viewKey: object | undefined;
  order: 'packed' | 'best' | 'random';
  /** packed: tie-breaks within a node rank beyond the name; best: the whole order. */
  compare?: (a: GameServer, b: GameServer) => number;
}

const NO_NODE_COUNTS: NodeCounts = new Map();

/**
 * The same rule as `orderForAllocation` followed by `findGameServerForAllocation`, for the index
 * that keeps the candidates sorted instead of sorting the fleet (a property test holds the two
 * equal): Packed ranks nodes itself, so `compare` only breaks ties by player room and priorities.
 */
export function selectorPick(selector: GameServerSelector, gsa: GameServerAllocation, gates: FeatureGates): SelectorPick {
  const spec = gsa.spec ?? {};
  const priorities = gates.CountsAndLists && spec.priorities && spec.priorities.length > 0 ? spec.priorities : undefined;
  const labels = selector.matchLabels ?? {};
  const beyondLabels = testsBeyondLabels(selector, gates);
  const state = selector.gameServerState ?? 'Ready';
  const pick = {
    pool: state === 'Allocated' ? ('Allocated' as const) : ('Ready' as const),
    labels,
    accept: (gs: GameServer) => matchesSelector(gs, selector, gates),
    // A bucket is one label's (or all) servers of one pool: a selector of more labels, or of labels that do not convert, is tested.
    exact: !beyondLabels && (state === 'Ready' || state === 'Allocated') && Object.keys(labels).length <= 1 && requirementsOf(selector) !== null,
    viewKey: beyondLabels ? selector : undefined,
  };
  if (spec.scheduling !== 'Distributed') {
    const tieBreaks = gates.PlayerAllocationFilter || priorities;
    return { ...pick, order: 'packed', ...(tieBreaks && { compare: (a: GameServer, b: GameServer) => comparePacked(a, b, NO_NODE_COUNTS, priorities, gates) }) };
  }
  if (priorities) return { ...pick, order: 'best', compare: (a, b) => compareDistributed(a, b, priorities) };
  return { ...pick, order: 'random' };
}

// ---------------------------------------------------------------------------------------------
// Ordering (§6.6)
// ---------------------------------------------------------------------------------------------

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Name, then namespace: the list spans namespaces, and the order must be total. */
function compareIdentity(a: GameServer, b: GameServer): number {
  return compareText(a.metadata.name, b.metadata.name) || compareText(a.metadata.namespace, b.metadata.namespace);
}

/**
 * The Packed order (Agones's ListSortedGameServers), negative when `a` is tried first: Allocated
 * before Ready; a server whose node has no count last; node Allocated count descending; node
 * Ready count descending; with PlayerAllocationFilter on and players on both, less player room
 * first; with CountsAndLists on, the priorities; then name. Agones's comparator leaves some
 * pairs unordered (two unknown nodes); here those fall through to the later keys, so the order
 * is total and a sort gives the same result every time.
 */
export function comparePacked(
  a: GameServer,
  b: GameServer,
  nodeCounts: NodeCounts,
  priorities: readonly Priority[] | undefined,
  gates: FeatureGates,
): number {
  const allocatedA = a.status.state === 'Allocated';
  const allocatedB = b.status.state === 'Allocated';
  if (allocatedA !== allocatedB) return allocatedA ? -1 : 1;

  const nodeA = nodeCounts.get(a.status.nodeName);
  const nodeB = nodeCounts.get(b.status.nodeName);
  if ((nodeA === undefined) !== (nodeB === undefined)) return nodeA === undefined ? 1 : -1;
  if (nodeA && nodeB) {
    if (nodeA.allocated !== nodeB.allocated) return nodeB.allocated - nodeA.allocated;
    if (nodeA.ready !== nodeB.ready) return nodeB.ready - nodeA.ready;
  }

  if (gates.PlayerAllocationFilter && a.status.players && b.status.players) {
    const roomA = subInt64(a.status.players.capacity, a.status.players.count);
    const roomB = subInt64(b.status.players.capacity, b.status.players.count);
    if (roomA !== roomB) return roomA < roomB ? -1 : 1;
  }

  if (gates.CountsAndLists && priorities && priorities.length > 0) {
    const byPriority = comparePriorities(a, b, priorities);
    if (byPriority !== 0) return byPriority;
  }
  return compareIdentity(a, b);
}

/** Distributed with priorities (Agones's ListSortedGameServersPriorities): priorities, then name. */
export function compareDistributed(a: GameServer, b: GameServer, priorities: readonly Priority[] | undefined): number {
  return comparePriorities(a, b, priorities) || compareIdentity(a, b);
}

/** A source of uniform integers in [0, bound): `SeededRandom` fits. */
export interface RandomSource {
  int(bound: number): number;
}

/**
 * The list Agones's allocation cache sorts for a batch: Packed order, or (CountsAndLists on,
 * Distributed) priorities then name (ListSortedGameServers / ListSortedGameServersPriorities).
 */
export function sortForAllocation(
  candidates: readonly GameServer[],
  gsa: GameServerAllocation,
  nodeCounts: NodeCounts,
  gates: FeatureGates,
): GameServer[] {
  const spec = gsa.spec ?? {};
  const priorities = gates.CountsAndLists ? spec.priorities ?? undefined : undefined;
  const sorted = [...candidates];
  if (!gates.CountsAndLists || spec.scheduling !== 'Distributed') {
    sorted.sort((a, b) => comparePacked(a, b, nodeCounts, priorities, gates));
  } else {
    sorted.sort((a, b) => compareDistributed(a, b, priorities));
  }
  return sorted;
}

/** Distributed without priorities searches the sorted list in a random order. */
export function searchesAtRandom(gsa: GameServerAllocation, gates: FeatureGates): boolean {
  const spec = gsa.spec ?? {};
  const priorities = gates.CountsAndLists ? spec.priorities ?? undefined : undefined;
  return spec.scheduling === 'Distributed' && !(priorities && priorities.length > 0);
}

/** A uniformly random permutation of `list`, in place (Fisher-Yates from the last position down, as Go's rand.Shuffle). */
export function shuffleInPlace<T>(list: T[], random: RandomSource): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    const t = list[i]!;
    list[i] = list[j]!;
    list[j] = t;
  }
  return list;
}

/**
 * Every candidate in the order an allocation tries them (§6.5-6.6): `sortForAllocation`, then
 * for Distributed without priorities a uniformly random permutation, drawn from `random`, of
 * the list Agones would have sorted.
 */
export function orderForAllocation(
  candidates: readonly GameServer[],
  gsa: GameServerAllocation,
  nodeCounts: NodeCounts,
  gates: FeatureGates,
  random: RandomSource,
): GameServer[] {
  const sorted = sortForAllocation(candidates, gsa, nodeCounts, gates);
  return searchesAtRandom(gsa, gates) ? shuffleInPlace(sorted, random) : sorted;
}

export interface AllocationMatch {
  gameServer: GameServer;
  /** Position of the server in the ordered list. */
  index: number;
  /** Which selector matched (into `toSelectors(gsa)`). */
  selectorIndex: number;
}

/**
 * Agones's findGameServerForAllocation over an ordered candidate list: for each selector, the
 * first candidate in the allocation's namespace that matches it; the answer is the match of the
 * earliest selector that has one. undefined means UnAllocated.
 */
export function findGameServerForAllocation(
  ordered: readonly GameServer[],
  gsa: GameServerAllocation,
  gates: FeatureGates,
): AllocationMatch | undefined {
  const selectors = toSelectors(gsa);
  const namespace = gsa.metadata?.namespace ?? '';
  const found: Array<AllocationMatch | undefined> = new Array(selectors.length);
  for (let index = 0; index < ordered.length; index++) {
    const gs = ordered[index]!;
    if (gs.metadata.namespace !== namespace) continue;
    for (let j = 0; j < selectors.length; j++) {
      if (found[j] === undefined && matchesSelector(gs, selectors[j]!, gates)) found[j] = { gameServer: gs, index, selectorIndex: j };
    }
    // Nothing found later can beat a match of the first selector.
    if (found[0] !== undefined) break;
  }
  return found.find((m) => m !== undefined);
}

// ---------------------------------------------------------------------------------------------
// Applying an allocation (§6.5 update worker, §6.8 actions)
// ---------------------------------------------------------------------------------------------

/** Go's %s of a []string: `[a b c]`. */
function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

/** Counters and lists after an allocation's actions, and one text per failed operation. */
interface ActionsOutcome {
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  /** Agones joins these into a CounterActionError event. */
  counterErrors: string[];
  /** A ListActionError event. */
  listErrors: string[];
}

function applyCounterAction(
  counters: Record<string, CounterStatus>,
  key: string,
  action: CounterAction,
  gsName: string,
  errors: string[],
): void {
  if (action.capacity !== undefined && action.capacity !== null) {
    const capacity = action.capacity;
    const counter = counters[key];
    if (capacity < 0) {
      errors.push(`unable to UpdateCounterCapacity: Name ${key}, Capacity ${capacity}. Capacity must be greater than or equal to 0`);
    } else if (!counter) {
      errors.push(`unable to UpdateCounterCapacity: Name ${key}, Capacity ${capacity}. Counter not found in GameServer ${gsName}`);
    } else {
      counters[key] = { count: minInt64(counter.count, capacity), capacity };
    }
  }
  if (action.action !== undefined && action.action !== null && action.amount !== undefined && action.amount !== null) {
    const { action: verb, amount } = action;
    const prefix = `unable to UpdateCount with Name ${key}, Action ${verb}, Amount ${amount}.`;
    const counter = counters[key];
    if (verb !== 'Increment' && verb !== 'Decrement') {
      errors.push(`${prefix} Allocation action must be one of Increment or Decrement`);
    } else if (amount < 0) {
      errors.push(`${prefix} Amount must be greater than 0`);
    } else if (!counter) {
      errors.push(`${prefix} Counter not found in GameServer ${gsName}`);
    } else {
      // Saturates at both ends instead of failing (reference §13.3).
      const next = verb === 'Increment' ? addInt64(counter.count, amount) : subInt64(counter.count, amount);
      counters[key] = { count: maxInt64(0, minInt64(next, counter.capacity)), capacity: counter.capacity };
    }
  }
}

function applyListAction(
  lists: Record<string, ListStatus>,
  key: string,
  action: ListAction,
  gsName: string,
  errors: string[],
): void {
  if (action.capacity !== undefined && action.capacity !== null) {
    const capacity = action.capacity;
    const list = lists[key];
    if (capacity < 0 || capacity > LIST_MAX_CAPACITY) {
      errors.push(`unable to UpdateListCapacity: Name ${key}, Capacity ${capacity}. Capacity must be between 0 and ${LIST_MAX_CAPACITY}, inclusive`);
    } else if (!list) {
      errors.push(`unable to UpdateListCapacity: Name ${key}, Capacity ${capacity}. List not found in GameServer ${gsName}`);
    } else {
      // Within [0, LIST_MAX_CAPACITY] here, so a plain number.
      lists[key] = { capacity: Number(capacity), values: list.values.slice(0, Number(capacity)) };
    }
  }
  const add = action.addValues ?? [];
  if (add.length > 0) {
    const list = lists[key];
    if (!list) {
      errors.push(`unable to AppendListValues: Name ${key}, Values ${goList(add)}. List not found in GameServer ${gsName}`);
    } else {
      // Keep the order, drop duplicates (old and new), then cut at capacity: extra values vanish.
      const merged = [...new Set([...list.values, ...add])];
      lists[key] = { capacity: list.capacity, values: merged.slice(0, Math.max(0, list.capacity)) };
    }
  }
  const remove = action.deleteValues ?? [];
  if (remove.length > 0) {
    const list = lists[key];
    if (!list) {
      errors.push(`unable to DeleteListValues: Name ${key}, Values ${goList(remove)}. List not found in GameServer ${gsName}`);
    } else {
      const gone = new Set(remove);
      lists[key] = { capacity: list.capacity, values: list.values.filter((v) => !gone.has(v)) };
    }
  }
}

/**
 * Counter actions, then list actions, each key in name order (Go's map order is random). An
 * action that cannot be done is reported, never fatal: the allocation stands with whatever
 * succeeded. A GameServer without counters (lists) keeps none.
 */
function applyActions(gs: GameServer, spec: GameServerAllocationSpec): ActionsOutcome {
  const outcome: ActionsOutcome = { counterErrors: [], listErrors: [] };
  const name = gs.metadata.name;
  if (spec.counters && Object.keys(spec.counters).length > 0) {
    const counters = { ...(gs.status.counters ?? {}) };
    for (const key of Object.keys(spec.counters).sort(compareText)) {
      applyCounterAction(counters, key, spec.counters[key] ?? {}, name, outcome.counterErrors);
    }
    if (gs.status.counters) outcome.counters = counters;
  }
  if (spec.lists && Object.keys(spec.lists).length > 0) {
    const lists = { ...(gs.status.lists ?? {}) };
    for (const key of Object.keys(spec.lists).sort(compareText)) {
      applyListAction(lists, key, spec.lists[key] ?? {}, name, outcome.listErrors);
    }
    if (gs.status.lists) outcome.lists = lists;
  }
  return outcome;
}

/** A request's parts every allocation of it shares (events are never mutated, so sharing is safe). */
interface RequestParts {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  hasActions: boolean;
  /**
   * The annotations of the last instant allocated at, with last-allocated set, and the payload of
   * a plain allocation then (from `payload.source`): the log writes a payload shared by one
   * transaction's events as JSON once.
   */
  stamp?: { at: number; annotations: Record<string, string>; payload?: GameServerAllocated };
}

/** Worked out once per request object: a benchmark, k6 or a remembered request reuses one. */
const requestParts = new WeakMap<GameServerAllocation, RequestParts>();

export type GameServerAllocatedEvent = ReturnType<typeof gameServerEvent<'GameServerAllocated'>>;

/**
 * What allocating `gs` for `gsa` does, as the one atomic GameServerAllocated event (Agones's
 * applyAllocationToGameServer): the `spec.metadata` labels and annotations (the request wins on a
 * shared key), `agones.dev/last-allocated` stamped with `now` (epoch ms) in RFC3339Nano, state
 * Allocated, and with CountsAndLists on the counters and lists after the actions with the errors
 * of those that failed. Re-allocating an Allocated server works the same way. Pure: `gs` and
 * `gsa` are not modified; whether the GameServer may be allocated is its machine's call.
 */
export function decideAllocation(
  gs: GameServer,
  gsa: GameServerAllocation,
  now: number,
  gates: FeatureGates,
  source: string = LOCAL_ALLOCATION_SOURCE,
): GameServerAllocatedEvent {
  const spec = gsa.spec ?? {};
  let parts = requestParts.get(gsa);
  if (!parts) {
    parts = {
      labels: { ...(spec.metadata?.labels ?? {}) },
      annotations: { ...(spec.metadata?.annotations ?? {}) },
      hasActions: Object.keys(spec.counters ?? {}).length > 0 || Object.keys(spec.lists ?? {}).length > 0,
    };
    requestParts.set(gsa, parts);
  }
  // The request's annotations plus last-allocated: allocations at the same instant share one map.
  if (parts.stamp?.at !== now) {
    parts.stamp = { at: now, annotations: { ...parts.annotations, [LAST_ALLOCATED_ANNOTATION]: rfc3339Nano(now) } };
  }
  // A plain allocation needs only its stamp; counter and list actions the whole transformation.
  const outcome = gates.CountsAndLists && parts.hasActions ? applyActions(gs, spec) : undefined;
  if (!outcome) {
    const stamp = parts.stamp;
    if (stamp.payload?.source !== source) stamp.payload = { labels: parts.labels, annotations: stamp.annotations, source };
    return gameServerEvent('GameServerAllocated', gs.metadata.namespace, gs.metadata.name, stamp.payload);
  }
  return gameServerEvent('GameServerAllocated', gs.metadata.namespace, gs.metadata.name, {
    labels: parts.labels,
    annotations: parts.stamp.annotations,
    ...(outcome.counters && { counters: outcome.counters }),
    ...(outcome.lists && { lists: outcome.lists }),
    ...(outcome.counterErrors.length && { counterErrors: outcome.counterErrors }),
    ...(outcome.listErrors.length && { listErrors: outcome.listErrors }),
    source,
  });
}
