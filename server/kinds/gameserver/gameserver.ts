import type { StoredEvent } from '../../log/event-log.js';
import type { FeatureGates } from '../../features.js';
import { type ObjectMeta, patchMap } from '../meta.js';
import type { Int64 } from '../../int64.js';

/** The GameServer kind: its types, events, reducer and wire encodings, in one place (DESIGN §6). */

export const GAMESERVER_KIND = 'GameServer';
export const GAMESERVER_API_VERSION = 'agones.dev/v1';

export const GAMESERVER_STATES = [
  'PortAllocation',
  'Creating',
  'Starting',
  'Scheduled',
  'RequestReady',
  'Ready',
  'Shutdown',
  'Error',
  'Unhealthy',
  'Reserved',
  'Allocated',
] as const;
export type GameServerState = (typeof GAMESERVER_STATES)[number];

/** States in which the pod, and so the sidecar, is running. */
export const SIDECAR_RUNNING_STATES: ReadonlySet<GameServerState> = new Set([
  'Scheduled',
  'RequestReady',
  'Ready',
  'Reserved',
  'Allocated',
]);
/** States nothing recovers from. */
export const TERMINAL_STATES: ReadonlySet<GameServerState> = new Set(['Shutdown', 'Error', 'Unhealthy']);

/** Prefix of every label and annotation written through the SDK. */
export const SDK_METADATA_PREFIX = 'agones.dev/sdk-';
export const LAST_ALLOCATED_ANNOTATION = 'agones.dev/last-allocated';
/** Agones's hard limit on a list: its capacity and the values it holds (SDK, CRD, allocation actions). */
export const LIST_MAX_CAPACITY = 1000;

export type PortPolicy = 'Dynamic' | 'Static' | 'Passthrough' | 'None';
export type Protocol = 'UDP' | 'TCP' | 'TCPUDP';
export type SchedulingStrategy = 'Packed' | 'Distributed';

export interface GameServerPort {
  name: string;
  portPolicy: PortPolicy;
  range?: string;
  container?: string;
  containerPort?: number;
  hostPort?: number;
  protocol: Protocol;
}

/**
 * With health checking on, the defaults fill every number. With it off Agones defaults nothing,
 * and a number left unset is absent (Go's zero value, which the schema's bounds would refuse).
 */
export interface Health {
  disabled: boolean;
  periodSeconds?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}

export interface CounterStatus {
  count: Int64;
  capacity: Int64;
}

export interface ListStatus {
  capacity: number;
  values: string[];
}

export interface PlayerStatus {
  count: Int64;
  capacity: Int64;
  ids: string[];
}

export interface SdkServer {
  logLevel: string;
  grpcPort: number;
  httpPort: number;
}

export interface GameServerSpec {
  container?: string;
  ports: GameServerPort[];
  health: Health;
  scheduling: SchedulingStrategy;
  sdkServer: SdkServer;
  /** The pod template, kept as given: fleetsim simulates the pod rather than running it. */
  template: Record<string, unknown>;
  players?: { initialCapacity: Int64 };
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  eviction?: { safe: string };
}

export interface NodeAddress {
  type: string;
  address: string;
}

export interface GameServerStatusPort {
  name: string;
  port: number;
}

export interface GameServerStatus {
  state: GameServerState;
  ports: GameServerStatusPort[];
  address: string;
  addresses: NodeAddress[];
  nodeName: string;
  reservedUntil: string | null;
  players?: PlayerStatus;
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  eviction?: { safe: string };
}

export interface GameServer {
  apiVersion: typeof GAMESERVER_API_VERSION;
  kind: typeof GAMESERVER_KIND;
  metadata: ObjectMeta;
  spec: GameServerSpec;
  status: GameServerStatus;
}

// ---------------------------------------------------------------------------------------------
// Events

export interface GameServerCreated {
  object: GameServer;
}

/** A lifecycle step. `reason`/`message`/`eventType` are the Kubernetes Event Agones records. */
export interface GameServerStateChanged {
  state: GameServerState;
  reservedUntil?: string | null;
  address?: string;
  addresses?: NodeAddress[];
  nodeName?: string;
  ports?: GameServerStatusPort[];
  /**
   * Host ports the controller allocated, in order, for the Dynamic and Passthrough ports
   * (a Passthrough port's container port is its host port).
   */
  hostPorts?: number[];
  annotations?: Record<string, string | null>;
  /** Who decided: `sdk`, `controller`, `timer`, `health`, `allocator`. */
  cause: string;
  reason: string;
  message: string;
  eventType: 'Normal' | 'Warning';
}

export interface GameServerMetadataPatched {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

export interface GameServerCounterSet {
  counter: string;
  count: Int64;
  capacity: Int64;
}

export interface GameServerListSet {
  list: string;
  capacity: number;
  values: string[];
}

export interface GameServerPlayersSet {
  count: Int64;
  capacity: Int64;
  ids: string[];
}

/**
 * A set's batch of new GameServers, which share one spec: the spec is written once, and the
 * objects share it in memory too. When they differ only in name and uid (a set's copies of its
 * template), the first is written once as `template` and the rest as `members`; otherwise (and
 * in logs written before `members`) each object is in `objects`.
 */
export interface GameServersCreated {
  spec: GameServerSpec;
  objects?: Array<Omit<GameServer, 'spec'>>;
  template?: Omit<GameServer, 'spec'>;
  members?: Array<{ name: string; uid: string }>;
}

/** An API update: metadata and spec replaced, status left to the lifecycle. */
export interface GameServerSpecUpdated {
  metadata: ObjectMeta;
  spec: GameServerSpec;
}

/**
 * One allocation, as one atomic event: the state, the metadata patch, the last-allocated
 * annotation and the counters and lists after the allocation's actions.
 */
export interface GameServerAllocated {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  /** Action errors, recorded as Warning events (CounterActionError / ListActionError). */
  counterErrors?: string[];
  listErrors?: string[];
  /** Where the request came from: `local`, or the remote endpoint that answered. */
  source: string;
}

export interface GameServerEventPayloads {
  GameServerCreated: GameServerCreated;
  /** The standalone sidecar's manifest was rewritten: the whole GameServer is replaced. */
  GameServerReloaded: GameServerCreated;
  GameServersCreated: GameServersCreated;
  GameServerSpecUpdated: GameServerSpecUpdated;
  GameServerAllocated: GameServerAllocated;
  GameServerStateChanged: GameServerStateChanged;
  GameServerMetadataPatched: GameServerMetadataPatched;
  GameServerCounterSet: GameServerCounterSet;
  GameServerListSet: GameServerListSet;
  GameServerPlayersSet: GameServerPlayersSet;
  GameServerDeleted: Record<string, never>;
}
export type GameServerEventType = keyof GameServerEventPayloads;

export function gameServerEvent<T extends GameServerEventType>(
  type: T,
  namespace: string,
  name: string,
  payload: GameServerEventPayloads[T],
) {
  return { type, kind: GAMESERVER_KIND, namespace, name, payload };
}

// ---------------------------------------------------------------------------------------------
// Reducer: pure, (object, event) -> object. `undefined` means the object does not exist.

/** Fills the allocated host ports into the Dynamic and Passthrough ports, in order. */
export function withHostPorts(ports: GameServerPort[], hostPorts: readonly number[]): GameServerPort[] {
  let next = 0;
  return ports.map((port) => {
    if (port.portPolicy !== 'Dynamic' && port.portPolicy !== 'Passthrough') return port;
    const hostPort = hostPorts[next++];
    if (hostPort === undefined) return port;
    return port.portPolicy === 'Passthrough' ? { ...port, hostPort, containerPort: hostPort } : { ...port, hostPort };
  });
}

/** A status with some fields changed: fields listed, not spread, so every version has one shape. */
function withStatus(status: GameServerStatus, change: Partial<GameServerStatus>): GameServerStatus {
  const next: GameServerStatus = {
    state: change.state ?? status.state,
    ports: change.ports ?? status.ports,
    address: change.address ?? status.address,
    addresses: change.addresses ?? status.addresses,
    nodeName: change.nodeName ?? status.nodeName,
    reservedUntil: change.reservedUntil !== undefined ? change.reservedUntil : status.reservedUntil,
  };
  const players = change.players ?? status.players;
  const counters = change.counters ?? status.counters;
  const lists = change.lists ?? status.lists;
  const eviction = change.eviction ?? status.eviction;
  if (players !== undefined) next.players = players;
  if (counters !== undefined) next.counters = counters;
  if (lists !== undefined) next.lists = lists;
  if (eviction !== undefined) next.eviction = eviction;
  return next;
}

function withMetadata(metadata: ObjectMeta, labels: Record<string, string>, annotations: Record<string, string>): ObjectMeta {
  return labels === metadata.labels && annotations === metadata.annotations ? metadata : { ...metadata, labels, annotations };
}

/** The next version of a GameServer: fields listed, not spread, so every version has one shape. */
function touched(gs: GameServer, seq: number, status: GameServerStatus, metadata = gs.metadata): GameServer {
  return {
    apiVersion: gs.apiVersion,
    kind: gs.kind,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: String(seq),
      generation: metadata.generation,
      creationTimestamp: metadata.creationTimestamp,
      ...(metadata.deletionTimestamp !== undefined && { deletionTimestamp: metadata.deletionTimestamp }),
      ...(metadata.generateName !== undefined && { generateName: metadata.generateName }),
      labels: metadata.labels,
      annotations: metadata.annotations,
      ...(metadata.ownerReferences !== undefined && { ownerReferences: metadata.ownerReferences }),
      ...(metadata.finalizers !== undefined && { finalizers: metadata.finalizers }),
    },
    spec: gs.spec,
    status,
  };
}

/** The objects a batch creation makes, each as its own GameServer sharing the batch's spec. */
export function gameServersOfBatch(event: StoredEvent): GameServer[] {
  const { spec, objects, template, members } = event.payload as GameServersCreated;
  const resourceVersion = String(event.seq);
  if (template && members) {
    return members.map(({ name, uid }) => ({ ...template, metadata: { ...template.metadata, name, uid, resourceVersion }, spec }) as GameServer);
  }
  return (objects ?? []).map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion }, spec }) as GameServer);
}

/** True when `a` and `b` share everything (by reference) but their name and uid. */
export function differOnlyInIdentity(a: GameServer, b: GameServer): boolean {
  const sameKeys = <T extends object>(x: T, y: T, except: ReadonlySet<string>) => {
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    return keys.every((k) => except.has(k) || x[k as keyof T] === y[k as keyof T]);
  };
  return sameKeys(a, b, METADATA_ONLY) && sameKeys(a.metadata, b.metadata, IDENTITY);
}

const METADATA_ONLY: ReadonlySet<string> = new Set(['metadata']);
const IDENTITY: ReadonlySet<string> = new Set(['name', 'uid']);

export function evolveGameServer(gs: GameServer | undefined, event: StoredEvent): GameServer | undefined {
  switch (event.type as GameServerEventType) {
    case 'GameServerCreated':
    case 'GameServerReloaded': {
      const { object } = event.payload as GameServerCreated;
      return { ...object, metadata: { ...object.metadata, resourceVersion: String(event.seq) } };
    }
    case 'GameServerDeleted':
      return undefined;
  }
  if (!gs) return gs;
  switch (event.type as GameServerEventType) {
    case 'GameServerStateChanged': {
      const p = event.payload as GameServerStateChanged;
      const status = withStatus(gs.status, {
        state: p.state,
        reservedUntil: p.reservedUntil ?? null,
        address: p.address,
        addresses: p.addresses,
        nodeName: p.nodeName,
        ports: p.ports,
      });
      const metadata = withMetadata(gs.metadata, gs.metadata.labels, patchMap(gs.metadata.annotations, p.annotations));
      const next = touched(gs, event.seq, status, metadata);
      return p.hostPorts ? { ...next, spec: { ...next.spec, ports: withHostPorts(next.spec.ports, p.hostPorts) } } : next;
    }
    case 'GameServerSpecUpdated': {
      const p = event.payload as GameServerSpecUpdated;
      return { ...gs, metadata: { ...p.metadata, resourceVersion: String(event.seq) }, spec: p.spec };
    }
    case 'GameServerAllocated': {
      const p = event.payload as GameServerAllocated;
      const status = withStatus(gs.status, { state: 'Allocated', reservedUntil: null, counters: p.counters, lists: p.lists });
      const metadata = withMetadata(gs.metadata, patchMap(gs.metadata.labels, p.labels), patchMap(gs.metadata.annotations, p.annotations));
      return touched(gs, event.seq, status, metadata);
    }
    case 'GameServerMetadataPatched': {
      const p = event.payload as GameServerMetadataPatched;
      const metadata = withMetadata(gs.metadata, patchMap(gs.metadata.labels, p.labels), patchMap(gs.metadata.annotations, p.annotations));
      return touched(gs, event.seq, gs.status, metadata);
    }
    case 'GameServerCounterSet': {
      const p = event.payload as GameServerCounterSet;
      const counters = { ...gs.status.counters, [p.counter]: { count: p.count, capacity: p.capacity } };
      return touched(gs, event.seq, withStatus(gs.status, { counters }));
    }
    case 'GameServerListSet': {
      const p = event.payload as GameServerListSet;
      const lists = { ...gs.status.lists, [p.list]: { capacity: p.capacity, values: p.values } };
      return touched(gs, event.seq, withStatus(gs.status, { lists }));
    }
    case 'GameServerPlayersSet': {
      const p = event.payload as GameServerPlayersSet;
      return touched(gs, event.seq, withStatus(gs.status, { players: { count: p.count, capacity: p.capacity, ids: p.ids } }));
    }
    default:
      return gs;
  }
}

// ---------------------------------------------------------------------------------------------
// Sidecar wire encoding: `sdk.GameServer` as Agones's gateway emits it (proto names, every field
// present, int64 as strings, map keys sorted).

function sortedMap<V, W>(map: Record<string, V> | undefined, encode: (v: V) => W): Record<string, W> {
  const out: Record<string, W> = {};
  if (!map) return out;
  for (const key of Object.keys(map).sort()) out[key] = encode(map[key]!);
  return out;
}

function epochSeconds(rfc3339: string | undefined): string {
  if (!rfc3339) return '0';
  return String(Math.floor(Date.parse(rfc3339) / 1000));
}

export interface SdkGameServer {
  object_meta: {
    name: string;
    namespace: string;
    uid: string;
    resource_version: string;
    generation: string;
    creation_timestamp: string;
    deletion_timestamp: string;
    annotations: Record<string, string>;
    labels: Record<string, string>;
  };
  spec: { health: { disabled: boolean; period_seconds: number; failure_threshold: number; initial_delay_seconds: number } };
  status: {
    state: string;
    address: string;
    addresses: NodeAddress[];
    ports: GameServerStatusPort[];
    players: { count: string; capacity: string; ids: string[] } | null;
    counters: Record<string, { count: string; capacity: string }>;
    lists: Record<string, { capacity: string; values: string[] }>;
  };
}

export function toSdkGameServer(gs: GameServer, gates: FeatureGates): SdkGameServer {
  const { metadata, spec, status } = gs;
  const players = gates.PlayerTracking && status.players ? status.players : undefined;
  return {
    object_meta: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resource_version: metadata.resourceVersion,
      generation: String(metadata.generation),
      creation_timestamp: epochSeconds(metadata.creationTimestamp),
      deletion_timestamp: epochSeconds(metadata.deletionTimestamp),
      annotations: sortedMap(metadata.annotations, (v) => v),
      labels: sortedMap(metadata.labels, (v) => v),
    },
    spec: {
      health: {
        disabled: spec.health.disabled,
        period_seconds: spec.health.periodSeconds ?? 0,
        failure_threshold: spec.health.failureThreshold ?? 0,
        initial_delay_seconds: spec.health.initialDelaySeconds ?? 0,
      },
    },
    status: {
      state: status.state,
      address: status.address,
      addresses: status.addresses.map((a) => ({ type: a.type, address: a.address })),
      ports: status.ports.map((p) => ({ name: p.name, port: p.port })),
      players: players
        ? { count: String(players.count), capacity: String(players.capacity), ids: [...players.ids] }
        : null,
      counters: gates.CountsAndLists
        ? sortedMap(status.counters, (c) => ({ count: String(c.count), capacity: String(c.capacity) }))
        : {},
      lists: gates.CountsAndLists
        ? sortedMap(status.lists, (l) => ({ capacity: String(l.capacity), values: [...l.values] }))
        : {},
    },
  };
}
