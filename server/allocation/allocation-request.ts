import type { FeatureGates } from '../features.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import {
  bool,
  enumNumber,
  int64,
  isSet,
  map,
  message,
  messageBody,
  optional,
  repeated,
  str,
  uint64AsInt64,
} from '../proto-json.js';
import type { Priority } from '../kinds/priorities.js';
import {
  type CounterAction,
  type CounterSelector,
  GAMESERVERALLOCATION_API_VERSION,
  GAMESERVERALLOCATION_KIND,
  type GameServerAllocation,
  type GameServerAllocationSpec,
  type GameServerAllocationStatus,
  type GameServerSelector,
  type ListAction,
  type ListSelector,
  type MetaPatch,
  toSelectors,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { stringifyJsonExact } from '../log/json.js';
import { type Int64, toInt64 } from '../int64.js';
import { type Json, isJsonObject } from '../kinds/common.js';

/**
 * The allocator service's wire shapes (proto/allocation/allocation.proto, served as JSON by
 * grpc-gateway at `POST /gameserverallocation`; reference §6.9(b)), both ways: an AllocationRequest
 * received becomes a GameServerAllocation and its status the AllocationResponse answered; a
 * GameServerAllocation sent to a remote allocator becomes an AllocationRequest and the response
 * received an Allocated status.
 *
 * Requests are read by the shared protojson decoder (server/proto-json.ts): field names as in
 * the proto (already lowerCamel), wrapper types (StringValue, Int64Value) as their bare value.
 * The conversion then follows Agones's ConvertAllocationRequestToGSA, except that alpha fields
 * are kept whatever the gates: validation refuses them when their gate is off (the spec asks for
 * that), where Agones would drop them silently.
 *
 * Responses are written as the gateway writes them: every field present, map keys sorted,
 * 64-bit integers as strings.
 */

function nonEmpty<T>(record: Record<string, T>): Record<string, T> | undefined {
  return Object.keys(record).length > 0 ? record : undefined;
}

const SCHEDULING = ['Packed', 'Distributed'] as const;
const SELECTOR_STATE = ['READY', 'ALLOCATED'] as const;
const PRIORITY_TYPE = ['Counter', 'List'] as const;
const PRIORITY_ORDER = ['Ascending', 'Descending'] as const;

function counterSelector(value: unknown, path: string): CounterSelector {
  const m = message(value, path, 'CounterSelector');
  return {
    minCount: optional(m.minCount, `${path}.minCount`, int64) ?? 0,
    maxCount: optional(m.maxCount, `${path}.maxCount`, int64) ?? 0,
    minAvailable: optional(m.minAvailable, `${path}.minAvailable`, int64) ?? 0,
    maxAvailable: optional(m.maxAvailable, `${path}.maxAvailable`, int64) ?? 0,
  };
}

function listSelector(value: unknown, path: string): ListSelector {
  const m = message(value, path, 'ListSelector');
  return {
    containsValue: optional(m.containsValue, `${path}.containsValue`, str) ?? '',
    minAvailable: optional(m.minAvailable, `${path}.minAvailable`, int64) ?? 0,
    maxAvailable: optional(m.maxAvailable, `${path}.maxAvailable`, int64) ?? 0,
  };
}

function gameServerSelector(value: unknown, path: string): GameServerSelector {
  const m = message(value, path, 'GameServerSelector');
  const out: GameServerSelector = {};
  const matchLabels = nonEmpty(map(m.matchLabels, `${path}.matchLabels`, 'string', str));
  if (matchLabels) out.matchLabels = matchLabels;
  // READY is the proto default; a number that names no state leaves it to the defaults (Ready).
  const state = optional(m.gameServerState, `${path}.gameServerState`, (v, p) => enumNumber(v, p, 'GameServerState', SELECTOR_STATE)) ?? 0;
  if (state === 0) out.gameServerState = 'Ready';
  else if (state === 1) out.gameServerState = 'Allocated';
  if (isSet(m.players)) {
    const players = message(m.players, `${path}.players`, 'PlayerSelector');
    out.players = {
      minAvailable: optional(players.minAvailable, `${path}.players.minAvailable`, uint64AsInt64) ?? 0,
      maxAvailable: optional(players.maxAvailable, `${path}.players.maxAvailable`, uint64AsInt64) ?? 0,
    };
  }
  // proto3 cannot tell an empty map from an absent one: both are "not set".
  const counters = nonEmpty(map(m.counters, `${path}.counters`, 'CounterSelector', counterSelector));
  if (counters) out.counters = counters;
  const lists = nonEmpty(map(m.lists, `${path}.lists`, 'ListSelector', listSelector));
  if (lists) out.lists = lists;
  return out;
}

function metaPatch(value: unknown, path: string): MetaPatch {
  const m = message(value, path, 'MetaPatch');
  const out: MetaPatch = {};
  const labels = nonEmpty(map(m.labels, `${path}.labels`, 'string', str));
  if (labels) out.labels = labels;
  const annotations = nonEmpty(map(m.annotations, `${path}.annotations`, 'string', str));
  if (annotations) out.annotations = annotations;
  return out;
}

function priority(value: unknown, path: string): Priority {
  const m = message(value, path, 'Priority');
  // Agones maps anything but List to Counter, and anything but Descending to Ascending.
  const type = optional(m.type, `${path}.type`, (v, p) => enumNumber(v, p, 'Priority.Type', PRIORITY_TYPE)) ?? 0;
  const order = optional(m.order, `${path}.order`, (v, p) => enumNumber(v, p, 'Priority.Order', PRIORITY_ORDER)) ?? 0;
  return {
    type: type === 1 ? 'List' : 'Counter',
    key: optional(m.key, `${path}.key`, str) ?? '',
    order: order === 1 ? 'Descending' : 'Ascending',
  };
}

function counterAction(value: unknown, path: string): CounterAction {
  const m = message(value, path, 'CounterAction');
  const out: CounterAction = {};
  const action = optional(m.action, `${path}.action`, str);
  if (action !== undefined) out.action = action;
  const amount = optional(m.amount, `${path}.amount`, int64);
  if (amount !== undefined) out.amount = amount;
  const capacity = optional(m.capacity, `${path}.capacity`, int64);
  if (capacity !== undefined) out.capacity = capacity;
  return out;
}

function listAction(value: unknown, path: string): ListAction {
  const m = message(value, path, 'ListAction');
  const out: ListAction = {};
  if (isSet(m.addValues)) out.addValues = repeated(m.addValues, `${path}.addValues`, 'string', str);
  if (isSet(m.deleteValues)) out.deleteValues = repeated(m.deleteValues, `${path}.deleteValues`, 'string', str);
  const capacity = optional(m.capacity, `${path}.capacity`, int64);
  if (capacity !== undefined) out.capacity = capacity;
  return out;
}

/**
 * An AllocationRequest body (already parsed from JSON) as a GameServerAllocation, ready for
 * `defaultAllocation` and `validateAllocation`. Throws an GrpcError with INVALID_ARGUMENT (3) when
 * a field has the wrong type. `metadata` wins over the deprecated `metaPatch`; an absent
 * namespace stays empty.
 */
export function fromAllocationRequest(body: unknown): GameServerAllocation {
  // An absent body (null) is an empty request.
  const request = messageBody(body ?? {}, 'AllocationRequest');
  const spec: GameServerAllocationSpec = {};

  if (isSet(request.multiClusterSetting)) {
    const setting = message(request.multiClusterSetting, 'multiClusterSetting', 'MultiClusterSetting');
    spec.multiClusterSetting = { enabled: optional(setting.enabled, 'multiClusterSetting.enabled', bool) ?? false };
    if (isSet(setting.policySelector)) {
      const selector = message(setting.policySelector, 'multiClusterSetting.policySelector', 'LabelSelector');
      const matchLabels = map(selector.matchLabels, 'multiClusterSetting.policySelector.matchLabels', 'string', str);
      spec.multiClusterSetting.policySelector = { matchLabels };
    }
  }

  if (isSet(request.requiredGameServerSelector)) {
    spec.required = gameServerSelector(request.requiredGameServerSelector, 'requiredGameServerSelector');
  }
  const preferred = repeated(request.preferredGameServerSelectors, 'preferredGameServerSelectors', 'GameServerSelector', gameServerSelector);
  if (preferred.length > 0) spec.preferred = preferred;
  const selectors = repeated(request.gameServerSelectors, 'gameServerSelectors', 'GameServerSelector', gameServerSelector);
  if (selectors.length > 0) spec.selectors = selectors;

  // Unknown numbers fall back to Packed, as in Agones.
  const scheduling = optional(request.scheduling, 'scheduling', (v, p) => enumNumber(v, p, 'SchedulingStrategy', SCHEDULING)) ?? 0;
  spec.scheduling = scheduling === 1 ? 'Distributed' : 'Packed';

  // Both are decoded (a bad type in either is an error); metadata wins when it is present.
  const metadata = optional(request.metadata, 'metadata', metaPatch);
  const deprecatedPatch = optional(request.metaPatch, 'metaPatch', metaPatch);
  const patch = metadata ?? deprecatedPatch;
  if (patch) spec.metadata = patch;

  const priorities = repeated(request.priorities, 'priorities', 'Priority', priority);
  if (priorities.length > 0) spec.priorities = priorities;
  const counters = nonEmpty(map(request.counters, 'counters', 'CounterAction', counterAction));
  if (counters) spec.counters = counters;
  const lists = nonEmpty(map(request.lists, 'lists', 'ListAction', listAction));
  if (lists) spec.lists = lists;

  const namespace = optional(request.namespace, 'namespace', str) ?? '';
  return {
    apiVersion: GAMESERVERALLOCATION_API_VERSION,
    kind: GAMESERVERALLOCATION_KIND,
    metadata: { namespace },
    spec,
  };
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

/** allocationAllocationResponse of allocation.swagger.json, with every field present. */
export interface AllocationResponseJson {
  gameServerName: string;
  ports: Array<{ name: string; port: number }>;
  address: string;
  addresses: Array<{ type: string; address: string }>;
  nodeName: string;
  source: string;
  metadata: { labels: Record<string, string>; annotations: Record<string, string> } | null;
  counters: Record<string, { count: string; capacity: string }>;
  lists: Record<string, { values: string[]; capacity: string }>;
}

/** A copy with its keys in order, as Go writes a map; each value through `encode` when given. */
function sortedCopy<V, W = V>(record: Record<string, V> | undefined, encode?: (v: V) => W): Record<string, W> {
  const out: Record<string, W> = {};
  if (!record) return out;
  for (const key of Object.keys(record).sort()) out[key] = encode ? encode(record[key]!) : (record[key] as unknown as W);
  return out;
}

/**
 * The gRPC code for an UnAllocated answer, from the allocator's `--http-unallocated-status-code`
 * (default 429). Statuses without a mapping give RESOURCE_EXHAUSTED.
 */
export function unallocatedGrpcCode(httpStatus: number): GrpcCode {
  const codes: Record<number, GrpcCode> = {
    200: GrpcCode.OK,
    499: GrpcCode.CANCELLED,
    500: GrpcCode.INTERNAL,
    400: GrpcCode.INVALID_ARGUMENT,
    504: GrpcCode.DEADLINE_EXCEEDED,
    404: GrpcCode.NOT_FOUND,
    409: GrpcCode.ALREADY_EXISTS,
    403: GrpcCode.PERMISSION_DENIED,
    401: GrpcCode.UNAUTHENTICATED,
    429: GrpcCode.RESOURCE_EXHAUSTED,
    501: GrpcCode.UNIMPLEMENTED,
    503: GrpcCode.UNAVAILABLE,
  };
  return codes[httpStatus] ?? GrpcCode.RESOURCE_EXHAUSTED;
}

/**
 * An allocation's status as the allocator service answers it (Agones's
 * ConvertGSAToAllocationResponse). Only an Allocated status is an answer: UnAllocated throws
 * with `unallocatedCode` (RESOURCE_EXHAUSTED by default), Contention with ABORTED, anything else
 * with UNKNOWN, each with Agones's text. Counters and lists are only sent with CountsAndLists on.
 */
export function toAllocationResponse(
  status: GameServerAllocationStatus,
  gates: FeatureGates,
  unallocatedCode: GrpcCode = GrpcCode.RESOURCE_EXHAUSTED,
): AllocationResponseJson {
  switch (status.state) {
    case 'Allocated':
      break;
    case 'UnAllocated':
      throw new GrpcError(unallocatedCode, 'there is no available GameServer to allocate');
    case 'Contention':
      throw new GrpcError(GrpcCode.ABORTED, 'too many concurrent requests have overwhelmed the system');
    default:
      throw new GrpcError(GrpcCode.UNKNOWN, 'unknown issue');
  }
  // Loops rather than map's callbacks: every allocation's answer is encoded here.
  const ports: AllocationResponseJson['ports'] = [];
  for (const p of status.ports ?? []) ports.push({ name: p.name ?? '', port: p.port ?? 0 });
  const addresses: AllocationResponseJson['addresses'] = [];
  for (const a of status.addresses ?? []) addresses.push({ type: a.type ?? '', address: a.address ?? '' });
  return {
    gameServerName: status.gameServerName ?? '',
    ports,
    address: status.address ?? '',
    addresses,
    nodeName: status.nodeName ?? '',
    source: status.source ?? '',
    metadata: status.metadata ? { labels: sortedCopy(status.metadata.labels), annotations: sortedCopy(status.metadata.annotations) } : null,
    counters: gates.CountsAndLists
      ? sortedCopy(status.counters, (c) => ({ count: String(c.count), capacity: String(c.capacity) }))
      : {},
    lists: gates.CountsAndLists
      ? sortedCopy(status.lists, (l) => ({ values: [...l.values], capacity: String(l.capacity) }))
      : {},
  };
}

// -- to a remote allocator, and its answer back -----------------------------------------------------

function selectorRequest(selector: GameServerSelector): Json {
  // The proto has matchLabels only: matchExpressions cannot be forwarded (Agones drops them too).
  const out: Json = {
    matchLabels: { ...(selector.matchLabels ?? {}) },
    gameServerState: selector.gameServerState === 'Allocated' ? 'ALLOCATED' : 'READY',
  };
  if (selector.players) {
    out.players = { minAvailable: String(selector.players.minAvailable ?? 0), maxAvailable: String(selector.players.maxAvailable ?? 0) };
  }
  if (selector.counters && Object.keys(selector.counters).length > 0) {
    const counters: Json = {};
    for (const [key, c] of Object.entries(selector.counters)) {
      counters[key] = {
        minCount: String(c.minCount ?? 0),
        maxCount: String(c.maxCount ?? 0),
        minAvailable: String(c.minAvailable ?? 0),
        maxAvailable: String(c.maxAvailable ?? 0),
      };
    }
    out.counters = counters;
  }
  if (selector.lists && Object.keys(selector.lists).length > 0) {
    const lists: Json = {};
    for (const [key, l] of Object.entries(selector.lists)) {
      lists[key] = { containsValue: l.containsValue ?? '', minAvailable: String(l.minAvailable ?? 0), maxAvailable: String(l.maxAvailable ?? 0) };
    }
    out.lists = lists;
  }
  return out;
}

/**
 * A (defaulted) GameServerAllocation as the AllocationRequest sent to a remote allocator
 * (Agones's ConvertGSAToAllocationRequest, then `enabled = false` and the policy's namespace).
 * The selectors are sent as `gameServerSelectors`, the deprecated ones already folded in.
 */
export function toAllocationRequest(gsa: GameServerAllocation, namespace: string): Json {
  const spec = gsa.spec ?? {};
  const request: Json = {
    namespace,
    multiClusterSetting: {
      enabled: false,
      policySelector: { matchLabels: { ...(spec.multiClusterSetting?.policySelector?.matchLabels ?? {}) } },
    },
    gameServerSelectors: toSelectors(gsa).map(selectorRequest),
    scheduling: spec.scheduling === 'Distributed' ? 'Distributed' : 'Packed',
    metadata: { labels: { ...(spec.metadata?.labels ?? {}) }, annotations: { ...(spec.metadata?.annotations ?? {}) } },
  };
  if (spec.priorities && spec.priorities.length > 0) {
    request.priorities = spec.priorities.map((p) => ({ type: p.type, key: p.key, order: p.order ?? 'Ascending' }));
  }
  if (spec.counters && Object.keys(spec.counters).length > 0) {
    const counters: Json = {};
    for (const [key, action] of Object.entries(spec.counters)) {
      const out: Json = {};
      if (action.action !== undefined && action.action !== null) out.action = action.action;
      if (action.amount !== undefined && action.amount !== null) out.amount = String(action.amount);
      if (action.capacity !== undefined && action.capacity !== null) out.capacity = String(action.capacity);
      counters[key] = out;
    }
    request.counters = counters;
  }
  if (spec.lists && Object.keys(spec.lists).length > 0) {
    const lists: Json = {};
    for (const [key, action] of Object.entries(spec.lists)) {
      const out: Json = {};
      if (action.addValues) out.addValues = [...action.addValues];
      if (action.deleteValues) out.deleteValues = [...action.deleteValues];
      if (action.capacity !== undefined && action.capacity !== null) out.capacity = String(action.capacity);
      lists[key] = out;
    }
    request.lists = lists;
  }
  return request;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An int64 of the answer (a string, or a number from an older peer), exact. */
function integer(value: unknown): Int64 {
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return toInt64(BigInt(value));
  return 0;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isJsonObject(value)) for (const [key, v] of Object.entries(value)) if (typeof v === 'string') out[key] = v;
  return out;
}

/** A remote AllocationResponse as an Allocated status, with `source` = the endpoint that answered. */
export function fromAllocationResponse(response: unknown, source: string): GameServerAllocationStatus {
  if (!isJsonObject(response) || typeof response.gameServerName !== 'string' || response.gameServerName === '') {
    throw new Error(`the answer is not an AllocationResponse: ${stringifyJsonExact(response).slice(0, 200)}`);
  }
  const status: GameServerAllocationStatus = {
    state: 'Allocated',
    gameServerName: response.gameServerName,
    ports: (Array.isArray(response.ports) ? response.ports : []).filter(isJsonObject).map((p) => ({ name: text(p.name), port: Number(integer(p.port)) })),
    address: text(response.address),
    addresses: (Array.isArray(response.addresses) ? response.addresses : [])
      .filter(isJsonObject)
      .map((a) => ({ type: text(a.type), address: text(a.address) })),
    nodeName: text(response.nodeName),
    source,
  };
  if (isJsonObject(response.metadata)) {
    status.metadata = { labels: stringMap(response.metadata.labels), annotations: stringMap(response.metadata.annotations) };
  }
  if (isJsonObject(response.counters) && Object.keys(response.counters).length > 0) {
    status.counters = {};
    for (const [key, c] of Object.entries(response.counters)) {
      if (isJsonObject(c)) status.counters[key] = { count: integer(c.count), capacity: integer(c.capacity) };
    }
  }
  if (isJsonObject(response.lists) && Object.keys(response.lists).length > 0) {
    status.lists = {};
    for (const [key, l] of Object.entries(response.lists)) {
      if (isJsonObject(l)) {
        status.lists[key] = { capacity: Number(integer(l.capacity)), values: (Array.isArray(l.values) ? l.values : []).filter((v): v is string => typeof v === 'string') };
      }
    }
  }
  return status;
}
