import type { ProcessCause } from '../../log/cause.js';
import type { NewEvent, StoredEvent } from '../../log/event-log.js';
import { stringifyJsonExact } from '../../log/json.js';
import { jsonEqual } from '../common.js';
import type { KindWrites } from '../registry.js';
import { type ObjectMeta, patchMap } from '../meta.js';
import type { Int64 } from '../../int64.js';
import { type CounterStatus, type GameServer, type GameServerPort, type GameServerSpec, type GameServerState, type GameServerStatus, type GameServerStatusPort, type ListStatus, type NodeAddress } from '../gameserver-types.js';
import { COMMAND_ANNOTATION, GAMESERVER_KIND } from '../agones.js';

/** The GameServer's events: their payloads, how one is built, and the reducer that applies them. */

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

/**
 * An API update: metadata and spec replaced, and the status when the update changed it (a
 * GameServer's status is not a subresource: a client may set its state, as Agones allows).
 */
export interface GameServerSpecUpdated {
  metadata: ObjectMeta;
  spec: GameServerSpec;
  status?: GameServerStatus;
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

/**
 * A GameServer as `fleetsim record` saw it on a live cluster: the whole object, replacing what
 * was known. `allocation` is set when it turned Allocated: the labels and annotations the
 * allocation added or changed.
 */
export interface GameServerObserved {
  object: GameServer;
  allocation?: { labels: Record<string, string>; annotations: Record<string, string> };
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
  /** Deleted while a process runs in its pod: it stays, with a deletionTimestamp, until the process has exited. */
  GameServerTerminating: { deletionTimestamp: string };
  GameServerDeleted: Record<string, never>;
  GameServerObserved: GameServerObserved;
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

/**
 * The events the resource API writes a GameServer with: created and deleted by its own events, and
 * updated by one that carries its metadata and spec (and its status when that changed).
 */
export const GAMESERVER_WRITES: KindWrites = {
  created: (object) => gameServerEvent('GameServerCreated', object.metadata.namespace, object.metadata.name, { object: object as unknown as GameServer }),
  updated: (current, next) =>
    gameServerEvent('GameServerSpecUpdated', current.metadata.namespace, current.metadata.name, {
      metadata: next.metadata,
      spec: next.spec as GameServer['spec'],
      ...(!jsonEqual(next.status, current.status) && { status: next.status as GameServer['status'] }),
    }),
  deleted: (namespace, name) => gameServerEvent('GameServerDeleted', namespace, name, {}),
};

/**
 * The events creating a batch of GameServers (a set's): one that holds their shared spec once, and
 * — when they are copies of one template — that copy once with the names and uids of all.
 */
export function gameServersCreated(namespace: string, objects: GameServer[]): NewEvent[] {
  if (objects.length === 0) return [];
  const spec = objects[0]!.spec;
  // Copies of one template share their spec object: its JSON is needed only when one does not.
  let specJson: string | undefined;
  if (objects.some((o) => o.spec !== spec && stringifyJsonExact(o.spec) !== (specJson ??= stringifyJsonExact(spec)))) {
    return objects.map((o) => gameServerEvent('GameServerCreated', namespace, o.metadata.name, { object: o }));
  }
  const withoutSpec = ({ spec: _spec, ...rest }: GameServer) => rest;
  const payload = objects.every((o) => differOnlyInIdentity(o, objects[0]!))
    ? { spec, template: withoutSpec(objects[0]!), members: objects.map((o) => ({ name: o.metadata.name, uid: o.metadata.uid })) }
    : { spec, objects: objects.map(withoutSpec) };
  return [gameServerEvent('GameServersCreated', namespace, '', payload)];
}

/** What a GameServer's process (simulated or real) did, as the cause of what it changes. */
export function processCause(gs: GameServer, detail: string): ProcessCause {
  return { type: 'process', object: { kind: 'GameServer', namespace: gs.metadata.namespace, name: gs.metadata.name }, detail };
}

// Reducer: pure, (object, event) -> object. `undefined` means the object does not exist.

const isAllocated = (port: GameServerPort) => port.portPolicy === 'Dynamic' || port.portPolicy === 'Passthrough';

/** Fills the allocated host ports into the Dynamic and Passthrough ports, in order, and splits those that are TCPUDP. */
export function withHostPorts(ports: GameServerPort[], hostPorts: readonly number[]): GameServerPort[] {
  let next = 0;
  const filled = ports.map((port) => {
    if (!isAllocated(port)) return port;
    const hostPort = hostPorts[next++];
    if (hostPort === undefined) return port;
    // Not `{ ...port, hostPort }`: V8 gives every object spread and then extended a hidden class of
    // its own (~300 bytes of heap per GameServer); Object.assign shares one.
    return Object.assign({}, port, port.portPolicy === 'Passthrough' ? { hostPort, containerPort: hostPort } : { hostPort });
  });
  return splitTcpUdp(filled, isAllocated);
}

/**
 * Agones splits a TCPUDP port in two, `<name>-tcp` in its place and `<name>-udp` at the end, with
 * the same host port: the allocated ports when they get their host port, the others (Static) when
 * the pod is created.
 */
export function splitTcpUdp(ports: GameServerPort[], which: (port: GameServerPort) => boolean = () => true): GameServerPort[] {
  if (!ports.some((p) => p.protocol === 'TCPUDP' && which(p))) return ports;
  const udp: GameServerPort[] = [];
  const split = ports.map((p): GameServerPort => {
    if (p.protocol !== 'TCPUDP' || !which(p)) return p;
    udp.push({ ...p, name: `${p.name}-udp`, protocol: 'UDP' });
    return { ...p, name: `${p.name}-tcp`, protocol: 'TCP' };
  });
  return [...split, ...udp];
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

/**
 * When a GameServer entered its current state (ms since the epoch: the time of the event that set
 * it). The read model keeps it on each version of the object under a symbol, so it is never on
 * the wire; the state-duration metric reads it without a map of its own.
 */
export const STATE_ENTERED_AT: unique symbol = Symbol('stateEnteredAt');

/**
 * The command line a GameServer was created with (its `fleetsim.dev/command` then), kept on each
 * version under a symbol as a pod keeps its command: what runs is what the GameServer was created
 * with, whatever its annotations say later (the API refuses to change them; this holds for a log
 * written before it did, too).
 */
export const CREATION_COMMAND: unique symbol = Symbol('creationCommand');

type Stamped = GameServer & { [STATE_ENTERED_AT]?: number; [CREATION_COMMAND]?: string };

export function stateEnteredAt(gs: GameServer): number | undefined {
  return (gs as Stamped)[STATE_ENTERED_AT];
}

/** The command line the GameServer runs as its game process, if any: the one it was created with. */
export function creationCommand(gs: GameServer): string | undefined {
  return (gs as Stamped)[CREATION_COMMAND] || undefined;
}

/** '' for none: every version carries the symbol, with a string (one shape, and equal when compared). */
const commandOf = (metadata: ObjectMeta): string => metadata.annotations?.[COMMAND_ANNOTATION] ?? '';

/** The stamp of a new version: the old one's while the state stays, the event's time when it moves. */
function enteredAt(gs: GameServer, state: GameServer['status']['state'], event: StoredEvent): number | undefined {
  return gs.status.state === state ? (gs as Stamped)[STATE_ENTERED_AT] : event.time;
}

/** The next version of a GameServer: fields listed, not spread, so every version has one shape. */
function touched(gs: GameServer, event: StoredEvent, status: GameServerStatus, metadata = gs.metadata): GameServer {
  return {
    apiVersion: gs.apiVersion,
    kind: gs.kind,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: String(event.seq),
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
    [STATE_ENTERED_AT]: enteredAt(gs, status.state, event),
    [CREATION_COMMAND]: (gs as Stamped)[CREATION_COMMAND],
  } as GameServer;
}

/** The objects a batch creation makes, each as its own GameServer sharing the batch's spec. */
export function gameServersOfBatch(event: StoredEvent): GameServer[] {
  const { spec, objects, template, members } = event.payload as GameServersCreated;
  const resourceVersion = String(event.seq);
  const at = event.time;
  if (template && members) {
    const command = commandOf(template.metadata);
    return members.map(
      ({ name, uid }) =>
        ({ ...template, metadata: { ...template.metadata, name, uid, resourceVersion }, spec, [STATE_ENTERED_AT]: at, [CREATION_COMMAND]: command }) as GameServer,
    );
  }
  return (objects ?? []).map(
    (o) => ({ ...o, metadata: { ...o.metadata, resourceVersion }, spec, [STATE_ENTERED_AT]: at, [CREATION_COMMAND]: commandOf(o.metadata) }) as GameServer,
  );
}

/**
 * The names of the GameServers a batch creation makes, without building them: what the log's
 * index by object needs (server/log/object-index.ts). Undefined for any other event.
 */
export function batchMemberNames(event: { type: string; kind: string; payload: unknown }): string[] | undefined {
  if (event.type !== 'GameServersCreated' || event.kind !== GAMESERVER_KIND) return undefined;
  const { objects, template, members } = event.payload as GameServersCreated;
  if (template && members) return members.map((member) => member.name);
  return (objects ?? []).map((o) => o.metadata.name);
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
      return {
        ...object,
        metadata: { ...object.metadata, resourceVersion: String(event.seq) },
        [STATE_ENTERED_AT]: event.time,
        [CREATION_COMMAND]: commandOf(object.metadata),
      } as GameServer;
    }
    case 'GameServerDeleted':
      return undefined;
    case 'GameServerObserved': {
      const { object } = event.payload as GameServerObserved;
      const stamp = gs && gs.status.state === object.status.state ? stateEnteredAt(gs) : event.time;
      return { ...object, metadata: { ...object.metadata, resourceVersion: String(event.seq) }, [STATE_ENTERED_AT]: stamp } as GameServer;
    }
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
      const next = touched(gs, event, status, metadata);
      if (p.hostPorts) return { ...next, spec: { ...next.spec, ports: withHostPorts(next.spec.ports, p.hostPorts) } };
      // The pod is created: what is left of TCPUDP (Static ports) is split for it.
      if (p.state === 'Starting' && gs.status.state === 'Creating') return { ...next, spec: { ...next.spec, ports: splitTcpUdp(next.spec.ports) } };
      return next;
    }
    case 'GameServerSpecUpdated': {
      const p = event.payload as GameServerSpecUpdated;
      const status = p.status ?? gs.status;
      const stamp = enteredAt(gs, status.state, event);
      return { ...gs, metadata: { ...p.metadata, resourceVersion: String(event.seq) }, spec: p.spec, status, [STATE_ENTERED_AT]: stamp } as GameServer;
    }
    case 'GameServerAllocated': {
      const p = event.payload as GameServerAllocated;
      const status = withStatus(gs.status, { state: 'Allocated', reservedUntil: null, counters: p.counters, lists: p.lists });
      const metadata = withMetadata(gs.metadata, patchMap(gs.metadata.labels, p.labels), patchMap(gs.metadata.annotations, p.annotations));
      return touched(gs, event, status, metadata);
    }
    case 'GameServerTerminating': {
      const p = event.payload as { deletionTimestamp: string };
      return touched(gs, event, gs.status, { ...gs.metadata, deletionTimestamp: p.deletionTimestamp });
    }
    case 'GameServerMetadataPatched': {
      const p = event.payload as GameServerMetadataPatched;
      const metadata = withMetadata(gs.metadata, patchMap(gs.metadata.labels, p.labels), patchMap(gs.metadata.annotations, p.annotations));
      return touched(gs, event, gs.status, metadata);
    }
    case 'GameServerCounterSet': {
      const p = event.payload as GameServerCounterSet;
      const counters = { ...gs.status.counters, [p.counter]: { count: p.count, capacity: p.capacity } };
      return touched(gs, event, withStatus(gs.status, { counters }));
    }
    case 'GameServerListSet': {
      const p = event.payload as GameServerListSet;
      const lists = { ...gs.status.lists, [p.list]: { capacity: p.capacity, values: p.values } };
      return touched(gs, event, withStatus(gs.status, { lists }));
    }
    case 'GameServerPlayersSet': {
      const p = event.payload as GameServerPlayersSet;
      return touched(gs, event, withStatus(gs.status, { players: { count: p.count, capacity: p.capacity, ids: p.ids } }));
    }
    default:
      return gs;
  }
}
