import { resolve } from 'node:path';
import { InputFileError, readInputFile } from '../input-file.js';
import { parseYamlExact } from '../log/json.js';
import { type Int64, inInt64Range, isInteger, toInt64 } from '../int64.js';
import { GAMESERVER_STATES, type CounterStatus, type GameServer, type GameServerState, type GameServerStatusPort, type Health, type ListStatus, type NodeAddress } from '../kinds/gameserver-types.js';
import { GAMESERVER_API_VERSION, GAMESERVER_KIND } from '../kinds/agones.js';
import { rfc3339 } from '../kinds/meta.js';
import { DEFAULT_COUNTER_CAPACITY, DEFAULT_LIST_CAPACITY } from '../kinds/gameserver-spec.js';
import type { FeatureGates } from '../features.js';

/**
 * The GameServer a standalone sidecar serves: Agones's default local GameServer, or one read
 * from a manifest (`--file`). Its pod is running, so it starts in Scheduled: the game server
 * still has to call Ready, as in a real cluster.
 */

export interface LocalGameServerOptions {
  uid: string;
  now: number;
  gates: FeatureGates;
}

export function defaultLocalGameServer({ uid, now, gates }: LocalGameServerOptions): GameServer {
  return {
    apiVersion: GAMESERVER_API_VERSION,
    kind: GAMESERVER_KIND,
    metadata: {
      name: 'local',
      namespace: 'default',
      uid,
      resourceVersion: '0',
      generation: 1,
      creationTimestamp: rfc3339(now),
      labels: { islocal: 'true' },
      annotations: { annotation: 'true' },
    },
    spec: {
      ports: [{ name: 'default', portPolicy: 'Static', containerPort: 7777, hostPort: 7777, protocol: 'UDP' }],
      health: { disabled: false, periodSeconds: 3, failureThreshold: 5, initialDelaySeconds: 10 },
      scheduling: 'Packed',
      sdkServer: { logLevel: 'Info', grpcPort: 9357, httpPort: 9358 },
      template: {},
      counters: { rooms: { count: 1, capacity: 10 } },
      lists: { players: { capacity: 100, values: ['test0', 'test1', 'test2'] } },
    },
    status: {
      state: 'Scheduled',
      address: '127.0.0.1',
      addresses: [],
      ports: [{ name: 'default', port: 7777 }],
      nodeName: 'local',
      reservedUntil: null,
      ...(gates.PlayerTracking && { players: { count: 0, capacity: 0, ids: [] } }),
      counters: { rooms: { count: 1, capacity: 10 } },
      lists: { players: { capacity: 100, values: ['test0', 'test1', 'test2'] } },
    },
  };
}

type Json = Record<string, unknown>;

function object(value: unknown, field: string): Json {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${field}: must be an object`);
  return value as Json;
}

function stringMap(value: unknown, field: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(object(value, field))) {
    if (typeof v !== 'string') throw new Error(`${field}.${k}: must be a string`);
    out[k] = v;
  }
  return out;
}

function int(value: unknown, field: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new Error(`${field}: must be an integer`);
  return n;
}

/** An int64 of the file, exact (a YAML integer, or a string of digits as in Agones's JSON). */
function int64(value: unknown, field: string, fallback: Int64): Int64 {
  if (value === undefined || value === null) return fallback;
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? BigInt(value.trim()) : value;
  if (!isInteger(n) || !inInt64Range(n)) throw new Error(`${field}: must be an int64 integer`);
  return typeof n === 'bigint' ? toInt64(n) : n;
}

function counters(value: unknown, field: string): Record<string, CounterStatus> {
  const out: Record<string, CounterStatus> = {};
  for (const [k, v] of Object.entries(object(value, field))) {
    const c = object(v, `${field}.${k}`);
    out[k] = { count: int64(c.count, `${field}.${k}.count`, 0), capacity: int64(c.capacity, `${field}.${k}.capacity`, DEFAULT_COUNTER_CAPACITY) };
  }
  return out;
}

function lists(value: unknown, field: string): Record<string, ListStatus> {
  const out: Record<string, ListStatus> = {};
  for (const [k, v] of Object.entries(object(value, field))) {
    const l = object(v, `${field}.${k}`);
    const values = l.values ?? [];
    if (!Array.isArray(values) || values.some((x) => typeof x !== 'string')) {
      throw new Error(`${field}.${k}.values: must be a list of strings`);
    }
    out[k] = { capacity: int(l.capacity, `${field}.${k}.capacity`, DEFAULT_LIST_CAPACITY), values: values as string[] };
  }
  return out;
}

/**
 * Reads a GameServer manifest (YAML or JSON) as Agones's local mode does: metadata, health, and
 * status (state, address, ports, counters, lists, players); counters and lists may also come
 * from spec, as a cluster would copy them.
 */
export function gameServerFromManifest(path: string, options: LocalGameServerOptions): GameServer {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readInputFile(absolute);
  } catch (error) {
    if (error instanceof InputFileError) throw new Error(`${absolute}: ${error.message}`);
    throw new Error(`Could not find file: ${absolute}`);
  }
  const manifest = object(parseYamlExact(text), 'manifest');
  if (manifest.kind !== undefined && manifest.kind !== GAMESERVER_KIND) {
    throw new Error(`${absolute}: kind must be GameServer, got ${String(manifest.kind)}`);
  }
  const metadata = object(manifest.metadata, 'metadata');
  const spec = object(manifest.spec, 'spec');
  const status = object(manifest.status, 'status');
  const healthSpec = object(spec.health, 'spec.health');
  // Defaults as a cluster applies them: only to health checking that is on (a disabled check keeps what was written, 0 if nothing).
  const disabled = healthSpec.disabled === true;
  const setting = (field: 'periodSeconds' | 'failureThreshold' | 'initialDelaySeconds', fallback: number) =>
    int(healthSpec[field], `spec.health.${field}`, 0) || (disabled ? 0 : fallback);
  const health: Health = {
    disabled,
    periodSeconds: setting('periodSeconds', 5),
    failureThreshold: setting('failureThreshold', 3),
    initialDelaySeconds: setting('initialDelaySeconds', 5),
  };
  const state = (status.state ?? 'Scheduled') as GameServerState;
  if (!GAMESERVER_STATES.includes(state)) throw new Error(`status.state: unknown state ${String(status.state)}`);
  const ports = (Array.isArray(status.ports) ? status.ports : []).map((p, i): GameServerStatusPort => {
    const port = object(p, `status.ports[${i}]`);
    return { name: String(port.name ?? ''), port: int(port.port, `status.ports[${i}].port`, 0) };
  });
  const addresses = (Array.isArray(status.addresses) ? status.addresses : []).map((a, i): NodeAddress => {
    const address = object(a, `status.addresses[${i}]`);
    return { type: String(address.type ?? ''), address: String(address.address ?? '') };
  });
  const gsCounters = counters(status.counters ?? spec.counters, 'status.counters');
  const gsLists = lists(status.lists ?? spec.lists, 'status.lists');
  const playersStatus = object(status.players, 'status.players');
  const initialCapacity = int64(object(spec.players, 'spec.players').initialCapacity, 'spec.players.initialCapacity', 0);
  const base = defaultLocalGameServer(options);
  return {
    ...base,
    metadata: {
      ...base.metadata,
      name: typeof metadata.name === 'string' ? metadata.name : 'local',
      namespace: typeof metadata.namespace === 'string' ? metadata.namespace : 'default',
      uid: typeof metadata.uid === 'string' ? metadata.uid : options.uid,
      creationTimestamp:
        typeof metadata.creationTimestamp === 'string' ? metadata.creationTimestamp : base.metadata.creationTimestamp,
      labels: stringMap(metadata.labels, 'metadata.labels'),
      annotations: stringMap(metadata.annotations, 'metadata.annotations'),
    },
    spec: { ...base.spec, health, counters: gsCounters, lists: gsLists, ports: base.spec.ports },
    status: {
      ...base.status,
      state,
      address: typeof status.address === 'string' ? status.address : '',
      addresses,
      ports,
      counters: gsCounters,
      lists: gsLists,
      ...(options.gates.PlayerTracking && {
        players: {
          count: int64(playersStatus.count, 'status.players.count', 0),
          capacity: int64(playersStatus.capacity, 'status.players.capacity', initialCapacity),
          ids: Array.isArray(playersStatus.ids) ? playersStatus.ids.map(String) : [],
        },
      }),
    },
  };
}
