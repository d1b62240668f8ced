import type { FeatureGates } from '../../features.js';
import type { GameServer, GameServerStatusPort, NodeAddress } from '../gameserver-types.js';

/**
 * Sidecar wire encoding: `sdk.GameServer` as Agones's gateway emits it (proto names, every field
 * present, int64 as strings, map keys sorted).
 */

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

/**
 * One SDK view per GameServer version: every sidecar reader of that version (a GET, each of the
 * watchers a change fans out to) shares it, so it must be treated as read-only.
 */
const sdkViews = new WeakMap<GameServer, { gates: FeatureGates; view: SdkGameServer }>();

export function toSdkGameServer(gs: GameServer, gates: FeatureGates): SdkGameServer {
  const known = sdkViews.get(gs);
  if (known?.gates === gates) return known.view;
  const view = buildSdkGameServer(gs, gates);
  sdkViews.set(gs, { gates, view });
  return view;
}

function buildSdkGameServer(gs: GameServer, gates: FeatureGates): SdkGameServer {
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
