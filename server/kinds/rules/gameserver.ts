import type { GameServer, GameServerPort, GameServerSpec, Health } from '../gameserver.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';

/**
 * GameServer defaults, as Agones's mutating webhook applies them on create (§3.2 of the
 * controllers reference): ports, health, scheduling, sdkServer, eviction, and the initial status.
 */
export const SDK_VERSION_ANNOTATION = 'agones.dev/sdk-version';
export const FLEETSIM_AGONES_VERSION = '1.57.0';

type Json = Record<string, unknown>;

function containersOf(spec: Json): Json[] {
  const template = (spec.template ?? {}) as Json;
  const podSpec = (template.spec ?? {}) as Json;
  return Array.isArray(podSpec.containers) ? (podSpec.containers as Json[]) : [];
}

function defaultHealth(health: Partial<Health> | undefined): Health {
  const h = health ?? {};
  if (h.disabled) {
    return { disabled: true, periodSeconds: h.periodSeconds ?? 0, failureThreshold: h.failureThreshold ?? 0, initialDelaySeconds: h.initialDelaySeconds ?? 0 };
  }
  return {
    disabled: false,
    periodSeconds: h.periodSeconds && h.periodSeconds > 0 ? h.periodSeconds : 5,
    failureThreshold: h.failureThreshold && h.failureThreshold > 0 ? h.failureThreshold : 3,
    initialDelaySeconds: h.initialDelaySeconds && h.initialDelaySeconds > 0 ? h.initialDelaySeconds : 5,
  };
}

/** The spec part of the defaults: shared by GameServers and by the templates of sets and fleets. */
export function defaultGameServerSpec(raw: Json, context: KindContext): GameServerSpec {
  const containers = containersOf(raw);
  const container = containers.length === 1 ? String(containers[0]!.name ?? '') : ((raw.container as string | undefined) ?? undefined);
  const ports = (Array.isArray(raw.ports) ? (raw.ports as Array<Partial<GameServerPort>>) : []).map(
    (p): GameServerPort => ({
      ...p,
      name: p.name ?? '',
      portPolicy: p.portPolicy ?? 'Dynamic',
      ...(context.gates.PortRanges && { range: p.range ?? 'default' }),
      protocol: p.protocol ?? 'UDP',
      ...((p.container ?? container) !== undefined && { container: p.container || container }),
    }),
  );
  const sdkServer = (raw.sdkServer ?? {}) as Partial<GameServerSpec['sdkServer']>;
  const spec: GameServerSpec = {
    ...(raw as Partial<GameServerSpec>),
    ...(container !== undefined && { container }),
    ports,
    health: defaultHealth(raw.health as Partial<Health> | undefined),
    scheduling: (raw.scheduling as GameServerSpec['scheduling'] | undefined) ?? 'Packed',
    sdkServer: {
      logLevel: sdkServer.logLevel ?? 'Info',
      grpcPort: sdkServer.grpcPort ?? 9357,
      httpPort: sdkServer.httpPort ?? 9358,
    },
    template: (raw.template as Json | undefined) ?? {},
    eviction: { safe: ((raw.eviction as Json | undefined)?.safe as string | undefined) ?? 'Never' },
  };
  return spec;
}

export function defaultGameServer(object: Resource, context: KindContext, old?: Resource): Resource {
  // Agones defaults a GameServer on create only.
  if (old) return object;
  const spec = defaultGameServerSpec((object.spec ?? {}) as Json, context);
  const dynamic = spec.ports.some((p) => p.portPolicy === 'Dynamic' || p.portPolicy === 'Passthrough');
  const status = (object.status ?? {}) as Partial<GameServer['status']>;
  const gs: GameServer = {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: {
      ...object.metadata,
      annotations: { ...object.metadata.annotations, [SDK_VERSION_ANNOTATION]: FLEETSIM_AGONES_VERSION },
      finalizers: [...new Set([...(object.metadata.finalizers ?? []), 'agones.dev/controller'])],
    },
    spec,
    status: {
      state: status.state ?? (dynamic ? 'PortAllocation' : 'Creating'),
      ports: status.ports ?? [],
      address: status.address ?? '',
      addresses: status.addresses ?? [],
      nodeName: status.nodeName ?? '',
      reservedUntil: status.reservedUntil ?? null,
      ...(context.gates.PlayerTracking && { players: { count: 0, capacity: spec.players?.initialCapacity ?? 0, ids: [] } }),
      ...(context.gates.CountsAndLists && {
        counters: structuredClone(spec.counters ?? {}),
        lists: structuredClone(spec.lists ?? {}),
      }),
      eviction: { safe: spec.eviction?.safe ?? 'Never' },
    },
  };
  return gs as unknown as Resource;
}
