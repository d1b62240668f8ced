import type { FeatureGates } from '../../features.js';
import {
  type CounterStatus,
  type GameServer,
  type GameServerStatusPort,
  LIST_MAX_CAPACITY,
  type ListStatus,
  type NodeAddress,
  type SchedulingStrategy,
} from '../gameserver-types.js';
import type { ObjectMeta } from '../meta.js';
import type { Int64 } from '../../int64.js';
import {
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  validateAnnotations,
  validateLabels,
} from '../../k8s/validation.js';
import { fixedAnnotationErrors } from '../common.js';
import { type MetaLabelSelector, convertLabelSelector } from '../label-selector.js';
import type { Priority } from '../priorities.js';

/**
 * The GameServerAllocation kind (allocation.agones.dev/v1): its shape as fleetsim's resource API
 * receives it (camelCase Kubernetes JSON, int64 as numbers), its defaults and its validation
 * (reference §6.1-6.3), the deprecated-field conversion (§6.4) and the status of an allocation.
 *
 * Enumerated fields are typed with the values Agones accepts, but the objects come from JSON, so
 * every check here looks at the value actually present rather than trusting the type.
 */

export const GAMESERVERALLOCATION_KIND = 'GameServerAllocation';
export const ALLOCATION_GROUP = 'allocation.agones.dev';
export const GAMESERVERALLOCATION_API_VERSION = 'allocation.agones.dev/v1';
/** `status.source` of an allocation served by this cluster. */
export const LOCAL_ALLOCATION_SOURCE = 'local';

export type SelectorGameServerState = 'Ready' | 'Allocated';
export type AllocationState = 'Allocated' | 'UnAllocated' | 'Contention';
/** Alpha, PlayerAllocationFilter. A `maxAvailable` of 0 turns the filter off. */
export interface PlayerSelector {
  minAvailable?: Int64;
  maxAvailable?: Int64;
}

/** Alpha, CountsAndLists. 0 on a max field means no bound. */
export interface CounterSelector {
  minCount?: Int64;
  maxCount?: Int64;
  minAvailable?: Int64;
  maxAvailable?: Int64;
}

/** Alpha, CountsAndLists. 0 on maxAvailable means no bound; "" on containsValue means any. */
export interface ListSelector {
  containsValue?: string;
  minAvailable?: Int64;
  maxAvailable?: Int64;
}

export interface GameServerSelector extends MetaLabelSelector {
  /** Defaults to Ready. */
  gameServerState?: SelectorGameServerState;
  players?: PlayerSelector;
  counters?: Record<string, CounterSelector>;
  lists?: Record<string, ListSelector>;
}

/**
 * Alpha, CountsAndLists. `action` is any string on the wire: Agones only checks it when the
 * action is applied (`Increment` or `Decrement`).
 */
export interface CounterAction {
  action?: string;
  amount?: Int64;
  capacity?: Int64;
}

/** Alpha, CountsAndLists. */
export interface ListAction {
  addValues?: string[];
  deleteValues?: string[];
  capacity?: Int64;
}

/** Labels and annotations written onto the allocated GameServer. */
export interface MetaPatch {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface MultiClusterSetting {
  enabled?: boolean;
  policySelector?: MetaLabelSelector;
}

export interface GameServerAllocationSpec {
  multiClusterSetting?: MultiClusterSetting;
  /** Deprecated: use `selectors`. Ignored when `selectors` is set. */
  required?: GameServerSelector;
  /** Deprecated: use `selectors`. Ignored when `selectors` is set. */
  preferred?: GameServerSelector[];
  selectors?: GameServerSelector[];
  /** Defaults to Packed. */
  scheduling?: SchedulingStrategy;
  priorities?: Priority[];
  metadata?: MetaPatch;
  counters?: Record<string, CounterAction>;
  lists?: Record<string, ListAction>;
}

export interface GameServerMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Optional members are the ones Agones leaves out of the JSON when empty. */
export interface GameServerAllocationStatus {
  state: AllocationState;
  gameServerName: string;
  ports?: GameServerStatusPort[];
  address?: string;
  addresses?: NodeAddress[];
  nodeName?: string;
  /** `local`, or the endpoint of the remote allocator that served the request. */
  source: string;
  metadata?: GameServerMetadata;
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
}

export interface GameServerAllocation {
  apiVersion: typeof GAMESERVERALLOCATION_API_VERSION;
  kind: typeof GAMESERVERALLOCATION_KIND;
  /** An allocation is never stored, so its metadata is whatever the request carried. */
  metadata: Partial<ObjectMeta>;
  spec: GameServerAllocationSpec;
  status?: GameServerAllocationStatus;
}

/** JSON may carry `null` wherever a field is optional; it means the same as leaving it out. */
function isSet<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

function sortedKeys(map: Record<string, unknown>): string[] {
  return Object.keys(map).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Defaults (§6.2)
// ---------------------------------------------------------------------------------------------

function defaultSelector(selector: GameServerSelector, gates: FeatureGates): GameServerSelector {
  const out: GameServerSelector = { ...selector, gameServerState: selector.gameServerState ?? 'Ready' };
  // Gated members are only defaulted when their gate is on, so that a request with the gate
  // off carries nothing validation would have to refuse.
  if (gates.PlayerAllocationFilter) out.players = selector.players ?? {};
  if (gates.CountsAndLists) {
    out.counters = selector.counters ?? {};
    out.lists = selector.lists ?? {};
  }
  return out;
}

/**
 * Agones's ApplyDefaults, run on every request before validation. Returns a new object.
 * `required` is a value in Agones, never absent, so it is created when `selectors` is empty.
 */
export function defaultAllocation(gsa: GameServerAllocation, gates: FeatureGates): GameServerAllocation {
  const spec: GameServerAllocationSpec = { ...(gsa.spec ?? {}) };
  if (!spec.scheduling) spec.scheduling = 'Packed';
  if (isSet(spec.priorities)) {
    spec.priorities = spec.priorities.map((p) => ({ ...p, order: p?.order || 'Ascending' }));
  }
  if (isSet(spec.selectors) && spec.selectors.length > 0) {
    spec.selectors = spec.selectors.map((s) => defaultSelector(s ?? {}, gates));
  } else {
    spec.required = defaultSelector(spec.required ?? {}, gates);
    if (isSet(spec.preferred)) spec.preferred = spec.preferred.map((s) => defaultSelector(s ?? {}, gates));
  }
  return { ...gsa, spec };
}

// ---------------------------------------------------------------------------------------------
// Validation (§6.3, with the spec's Limits 1 and 2 and feature gates)
// ---------------------------------------------------------------------------------------------

/** apimachinery's IsNegativeErrorMsg. */
const NEGATIVE = 'must be greater than or equal to 0';
const COUNTS_AND_LISTS_OFF = 'Feature CountsAndLists must be enabled';
const PLAYER_FILTER_OFF = 'Feature PlayerAllocationFilter must be enabled';

function num(value: Int64 | null | undefined): Int64 {
  return value ?? 0;
}

function validateCounterSelectors(counters: Record<string, CounterSelector>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of sortedKeys(counters)) {
    const c = counters[key] ?? {};
    const keyPath = `${path}[${key}]`;
    const [minCount, maxCount, minAvailable, maxAvailable] = [num(c.minCount), num(c.maxCount), num(c.minAvailable), num(c.maxAvailable)];
    if (minCount < 0) errs.push(invalid(`${keyPath}.minCount`, minCount, NEGATIVE));
    if (maxCount < 0) errs.push(invalid(`${keyPath}.maxCount`, maxCount, NEGATIVE));
    if (maxCount < minCount && maxCount !== 0) {
      errs.push(invalid(keyPath, maxCount, `maxCount must zero or greater than minCount ${minCount}`));
    }
    if (minAvailable < 0) errs.push(invalid(`${keyPath}.minAvailable`, minAvailable, NEGATIVE));
    if (maxAvailable < 0) errs.push(invalid(`${keyPath}.maxAvailable`, maxAvailable, NEGATIVE));
    if (maxAvailable < minAvailable && maxAvailable !== 0) {
      errs.push(invalid(keyPath, maxAvailable, `maxAvailable must zero or greater than minAvailable ${minAvailable}`));
    }
  }
  return errs;
}

function validateListSelectors(lists: Record<string, ListSelector>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of sortedKeys(lists)) {
    const l = lists[key] ?? {};
    const keyPath = `${path}[${key}]`;
    const [minAvailable, maxAvailable] = [num(l.minAvailable), num(l.maxAvailable)];
    if (minAvailable < 0) errs.push(invalid(`${keyPath}.minAvailable`, minAvailable, NEGATIVE));
    if (maxAvailable < 0) errs.push(invalid(`${keyPath}.maxAvailable`, maxAvailable, NEGATIVE));
    if (maxAvailable < minAvailable && maxAvailable !== 0) {
      errs.push(invalid(keyPath, maxAvailable, `maxAvailable must zero or greater than minAvailable ${minAvailable}`));
    }
  }
  return errs;
}

/** The label-selector part of a selector, as the bad value of a conversion error. */
function labelSelectorValue(selector: GameServerSelector): MetaLabelSelector {
  const value: MetaLabelSelector = {};
  if (isSet(selector.matchLabels)) value.matchLabels = selector.matchLabels;
  if (isSet(selector.matchExpressions)) value.matchExpressions = selector.matchExpressions;
  return value;
}

/** GameServerSelector.Validate at `path` (e.g. `spec.selectors[0]`). */
export function validateSelector(selector: GameServerSelector, path: string, gates: FeatureGates): FieldError[] {
  const errs: FieldError[] = [];
  const conversion = convertLabelSelector(selector);
  if (!conversion.ok) {
    errs.push(invalid(`${path}.labelSelector`, labelSelectorValue(selector), `Error converting label selector: ${conversion.error}`));
  }
  const state: unknown = selector.gameServerState;
  if (isSet(state) && state !== 'Allocated' && state !== 'Ready') {
    errs.push(invalid(`${path}.gameServerState`, state, 'GameServerState must be either Allocated or Ready'));
  }
  if (isSet(selector.players)) {
    if (gates.PlayerAllocationFilter) {
      const min = num(selector.players.minAvailable);
      const max = num(selector.players.maxAvailable);
      if (min < 0) errs.push(invalid(`${path}.players.minAvailable`, min, NEGATIVE));
      if (max < 0) errs.push(invalid(`${path}.players.maxAvailable`, max, NEGATIVE));
      // As in Agones: with maxAvailable 0 (no filter) any positive minAvailable is refused too.
      if (min > max) errs.push(invalid(`${path}.players.minAvailable`, min, 'minAvailable cannot be greater than maxAvailable'));
    } else {
      // The spec refuses an alpha field whose gate is off (Agones would ignore it).
      errs.push(forbidden(`${path}.players`, PLAYER_FILTER_OFF));
    }
  }
  if (gates.CountsAndLists) {
    if (isSet(selector.counters)) errs.push(...validateCounterSelectors(selector.counters, `${path}.counters`));
    if (isSet(selector.lists)) errs.push(...validateListSelectors(selector.lists, `${path}.lists`));
  } else {
    if (isSet(selector.counters)) errs.push(forbidden(`${path}.counters`, COUNTS_AND_LISTS_OFF));
    if (isSet(selector.lists)) errs.push(forbidden(`${path}.lists`, COUNTS_AND_LISTS_OFF));
  }
  return errs;
}

function validatePriorities(priorities: Priority[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  priorities.forEach((priority, i) => {
    const p = priority ?? ({} as Partial<Priority>);
    const itemPath = `${path}[${i}]`;
    const type: unknown = p.type;
    const order: unknown = p.order;
    if (type !== 'Counter' && type !== 'List') errs.push(invalid(itemPath, type ?? '', 'type must be "Counter" or "List"'));
    // Agones reports the type, not the key, as the bad value here.
    if (!p.key) errs.push(invalid(itemPath, type ?? '', 'key must not be nil'));
    if (order !== 'Ascending' && order !== 'Descending') {
      errs.push(invalid(itemPath, order ?? '', 'order must be "Ascending" or "Descending"'));
    }
  });
  return errs;
}

function validateCounterActions(counters: Record<string, CounterAction>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of sortedKeys(counters)) {
    const action = counters[key] ?? {};
    const keyPath = `${path}[${key}]`;
    if (isSet(action.amount)) {
      // Limit 2: the amount is a positive integer (Agones only refuses negatives).
      if (action.amount < 0) errs.push(invalid(`${keyPath}.amount`, action.amount, NEGATIVE));
      else if (action.amount === 0) errs.push(invalid(`${keyPath}.amount`, action.amount, 'must be greater than 0'));
    }
    if (isSet(action.capacity) && action.capacity < 0) errs.push(invalid(`${keyPath}.capacity`, action.capacity, NEGATIVE));
    if (isSet(action.amount) && !isSet(action.action)) {
      errs.push(invalid(keyPath, null, 'action must be "Increment" or "Decrement" if the amount is not nil'));
    }
    if (!isSet(action.amount) && isSet(action.action)) {
      errs.push(invalid(keyPath, null, 'amount must not be nil if action is not nil'));
    }
  }
  return errs;
}

function validateListActions(lists: Record<string, ListAction>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const key of sortedKeys(lists)) {
    const action = lists[key] ?? {};
    if (!isSet(action.capacity)) continue;
    const capacityPath = `${path}[${key}].capacity`;
    if (action.capacity < 0) errs.push(invalid(capacityPath, action.capacity, NEGATIVE));
    // Limit 1: a list holds at most 1000 values (Agones defers this check to apply time).
    else if (action.capacity > LIST_MAX_CAPACITY) {
      errs.push(invalid(capacityPath, action.capacity, `must be between 0 and ${LIST_MAX_CAPACITY}, inclusive`));
    }
  }
  return errs;
}

/**
 * GameServerAllocation.Validate, on a defaulted allocation. Every selector is checked, the
 * deprecated ones too, even when `selectors` makes them irrelevant. Alpha fields whose gate is
 * off are Forbidden.
 */
export function validateAllocation(gsa: GameServerAllocation, gates: FeatureGates): FieldError[] {
  const spec = gsa.spec ?? {};
  const errs: FieldError[] = [];
  const scheduling: unknown = spec.scheduling;
  if (scheduling !== 'Packed' && scheduling !== 'Distributed') {
    errs.push(notSupported('spec.scheduling', scheduling ?? '', ['Packed', 'Distributed']));
  }
  // A policy selector that cannot be converted would only fail once allocation walks the policies.
  const policySelector = spec.multiClusterSetting?.policySelector;
  if (isSet(policySelector)) {
    const conversion = convertLabelSelector(policySelector);
    if (!conversion.ok) {
      errs.push(invalid('spec.multiClusterSetting.policySelector', policySelector, `Error converting label selector: ${conversion.error}`));
    }
  }
  if (isSet(spec.required)) errs.push(...validateSelector(spec.required, 'spec.required', gates));
  (spec.preferred ?? []).forEach((s, i) => errs.push(...validateSelector(s ?? {}, `spec.preferred[${i}]`, gates)));
  (spec.selectors ?? []).forEach((s, i) => errs.push(...validateSelector(s ?? {}, `spec.selectors[${i}]`, gates)));

  if (gates.CountsAndLists) {
    if (isSet(spec.priorities)) errs.push(...validatePriorities(spec.priorities, 'spec.priorities'));
    if (isSet(spec.counters)) errs.push(...validateCounterActions(spec.counters, 'spec.counters'));
    if (isSet(spec.lists)) errs.push(...validateListActions(spec.lists, 'spec.lists'));
  } else {
    if (isSet(spec.priorities)) errs.push(forbidden('spec.priorities', `${COUNTS_AND_LISTS_OFF} if Priorities is specified`));
    if (isSet(spec.counters)) errs.push(forbidden('spec.counters', `${COUNTS_AND_LISTS_OFF} if Counters is specified`));
    if (isSet(spec.lists)) errs.push(forbidden('spec.lists', `${COUNTS_AND_LISTS_OFF} if Lists is specified`));
  }

  const metadata = spec.metadata ?? {};
  errs.push(...validateLabels(metadata.labels ?? {}, 'spec.metadata.labels'));
  errs.push(...validateAnnotations(metadata.annotations ?? {}, 'spec.metadata.annotations'));
  // What a GameServer runs was fixed when it was created: an allocation cannot change it.
  errs.push(...fixedAnnotationErrors(metadata.annotations, undefined, 'spec.metadata.annotations'));
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Deprecated fields (§6.4 step 2) and status (§6.4 step 4)
// ---------------------------------------------------------------------------------------------

/**
 * The selectors an allocation searches, in order: `selectors` when set; otherwise the deprecated
 * `preferred` ones followed by `required` (an absent `required` matches every Ready server).
 */
export function toSelectors(gsa: GameServerAllocation): GameServerSelector[] {
  const spec = gsa.spec ?? {};
  if (isSet(spec.selectors) && spec.selectors.length > 0) return [...spec.selectors];
  return [...(spec.preferred ?? []), spec.required ?? {}];
}

function copyCounters(counters: Record<string, CounterStatus>): Record<string, CounterStatus> {
  const out: Record<string, CounterStatus> = {};
  for (const key of sortedKeys(counters)) out[key] = { count: counters[key]!.count, capacity: counters[key]!.capacity };
  return out;
}

function copyLists(lists: Record<string, ListStatus>): Record<string, ListStatus> {
  const out: Record<string, ListStatus> = {};
  for (const key of sortedKeys(lists)) out[key] = { capacity: lists[key]!.capacity, values: [...lists[key]!.values] };
  return out;
}

/**
 * The status of a successful allocation, from the GameServer as it is after the allocation was
 * applied: its full labels and annotations, and its counters and lists when CountsAndLists is on.
 */
export function allocationStatus(gs: GameServer, source: string, gates: FeatureGates): GameServerAllocationStatus {
  const status: GameServerAllocationStatus = {
    state: 'Allocated',
    gameServerName: gs.metadata.name,
    // Objects are never mutated, so the answer shares the GameServer's ports, addresses and maps.
    ports: gs.status.ports,
    address: gs.status.address,
    addresses: gs.status.addresses,
    nodeName: gs.status.nodeName,
    source,
    metadata: { labels: gs.metadata.labels, annotations: gs.metadata.annotations },
  };
  if (gates.CountsAndLists) {
    if (gs.status.counters) status.counters = copyCounters(gs.status.counters);
    if (gs.status.lists) status.lists = copyLists(gs.status.lists);
  }
  return status;
}

/** The status of an allocation that found nothing (UnAllocated) or lost a race (Contention). */
export function failedAllocationStatus(state: Exclude<AllocationState, 'Allocated'>): GameServerAllocationStatus {
  return { state, gameServerName: '', source: '' };
}
