import { stringifyJsonExact } from '../log/json.js';
import { type Int64, toInt64 } from '../int64.js';
import {
  type GameServerAllocation,
  type GameServerAllocationStatus,
  type GameServerSelector,
  toSelectors,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { type Json, isJsonObject } from '../kinds/common.js';

/**
 * The JSON a remote allocator speaks: a GameServerAllocation as the AllocationRequest sent, the
 * AllocationResponse received as an Allocated status.
 */

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
