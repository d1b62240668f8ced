import type { NewEvent } from '../log/event-log.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import type { KubeObject } from './kube-client.js';

/**
 * What `fleetsim record` watches, and how a change it sees becomes fleetsim events: a
 * GameServer's as `GameServerObserved` (the whole object, with the allocation's labels and
 * annotations when it turns Allocated) and `GameServerDeleted`; every other kind's as the events
 * that store kinds whole (`ResourceCreated`, `ResourceUpdated`, `ResourceDeleted`).
 */

export interface WatchedKind {
  kind: string;
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/**
 * Agones's kinds, the Nodes they run on and the Events the cluster records. Events are watched at
 * core v1 only: events.k8s.io/v1 serves the same objects, and watching both would record each twice.
 */
export const WATCHED_KINDS: readonly WatchedKind[] = [
  { kind: 'Node', group: '', version: 'v1', plural: 'nodes', namespaced: false },
  { kind: 'Fleet', group: 'agones.dev', version: 'v1', plural: 'fleets', namespaced: true },
  { kind: 'GameServerSet', group: 'agones.dev', version: 'v1', plural: 'gameserversets', namespaced: true },
  { kind: 'GameServer', group: 'agones.dev', version: 'v1', plural: 'gameservers', namespaced: true },
  { kind: 'FleetAutoscaler', group: 'autoscaling.agones.dev', version: 'v1', plural: 'fleetautoscalers', namespaced: true },
  { kind: 'GameServerAllocationPolicy', group: 'multicluster.agones.dev', version: 'v1', plural: 'gameserverallocationpolicies', namespaced: true },
  { kind: 'Event', group: '', version: 'v1', plural: 'events', namespaced: true },
];

/** The collection's path: across namespaces, or in one. */
export function collectionPath(kind: WatchedKind, namespace?: string): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return namespace !== undefined && kind.namespaced ? `${base}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}` : `${base}/${kind.plural}`;
}

export function recordKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** The object's name, namespace ('' when cluster-scoped) and resourceVersion, or undefined when it lacks a name. */
export function identityOf(object: KubeObject, kind: WatchedKind): { namespace: string; name: string; resourceVersion: string } | undefined {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const namespace = kind.namespaced ? String(object.metadata?.namespace ?? '') : '';
  return { namespace, name, resourceVersion: String(object.metadata?.resourceVersion ?? '') };
}

/** The object as it is stored: managedFields left out (the bulk of an object, of use to no reader of the log). */
function stored(object: KubeObject, kind: WatchedKind): Resource {
  const { managedFields: _managedFields, ...metadata } = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    ...object,
    apiVersion: object.apiVersion ?? (kind.group ? `${kind.group}/${kind.version}` : kind.version),
    kind: kind.kind,
    metadata: {
      ...metadata,
      namespace: kind.namespaced ? String(metadata.namespace ?? '') : '',
      labels: (metadata.labels as Record<string, string> | null | undefined) ?? {},
      annotations: (metadata.annotations as Record<string, string> | null | undefined) ?? {},
    },
  } as Resource;
}

/** A GameServer with the fields fleetsim's projections read always present (Agones leaves some null until set). */
function storedGameServer(object: KubeObject, kind: WatchedKind): GameServer {
  const base = stored(object, kind) as unknown as GameServer;
  const status = (base.status ?? {}) as Partial<GameServer['status']>;
  const spec = (base.spec ?? {}) as Partial<GameServer['spec']>;
  return {
    ...base,
    spec: { ...spec, ports: spec.ports ?? [] } as GameServer['spec'],
    status: {
      ...status,
      state: status.state ?? ('' as GameServer['status']['state']),
      ports: status.ports ?? [],
      address: status.address ?? '',
      addresses: status.addresses ?? [],
      nodeName: status.nodeName ?? '',
      reservedUntil: status.reservedUntil ?? null,
    },
  };
}

/** Keys whose value `after` adds or changes against `before`. */
function added(before: Record<string, string> | undefined, after: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(after)) if (before?.[key] !== value) out[key] = value;
  return out;
}

function mapText(map: Record<string, string>): string {
  const entries = Object.entries(map);
  return entries.length === 0 ? '{}' : `{${entries.map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
}

export interface Observed {
  events: NewEvent[];
  /** What the cluster said beyond the object (an allocation's labels and annotations), for the cause. */
  said?: string;
}

/**
 * The events that record `observed` (undefined: the object is gone) of a kind, given the object
 * as last recorded (undefined: never seen, or deleted). `appeared` says an object never seen came
 * up while recording (not in the first list): if it is Allocated already, that allocation was
 * made during the recording.
 */
export function observationEvents(kind: WatchedKind, previous: Resource | undefined, observed: KubeObject | undefined, appeared: boolean): Observed {
  if (observed === undefined) {
    if (previous === undefined) return { events: [] };
    const { namespace, name } = previous.metadata;
    const gone = kind.kind === GAMESERVER_KIND ? gameServerEvent('GameServerDeleted', namespace, name, {}) : resourceEvent('ResourceDeleted', kind.kind, namespace, name, {});
    return { events: [gone] };
  }
  if (kind.kind !== GAMESERVER_KIND) {
    const object = stored(observed, kind);
    const { namespace, name } = object.metadata;
    return { events: [resourceEvent(previous === undefined ? 'ResourceCreated' : 'ResourceUpdated', kind.kind, namespace, name, { object })] };
  }
  const object = storedGameServer(observed, kind);
  const { namespace, name } = object.metadata;
  const before = previous as unknown as GameServer | undefined;
  const turnedAllocated = object.status.state === 'Allocated' && (before === undefined ? appeared : before.status.state !== 'Allocated');
  if (!turnedAllocated) return { events: [gameServerEvent('GameServerObserved', namespace, name, { object })] };
  const allocation = { labels: added(before?.metadata.labels, object.metadata.labels), annotations: added(before?.metadata.annotations, object.metadata.annotations) };
  return {
    events: [gameServerEvent('GameServerObserved', namespace, name, { object, allocation })],
    said: `allocated, the allocation setting labels ${mapText(allocation.labels)} and annotations ${mapText(allocation.annotations)}`,
  };
}
