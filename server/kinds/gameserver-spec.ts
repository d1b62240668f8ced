import { type Schema } from '../k8s/schema.js';
import { podSpecSchema } from '../k8s/pod-spec-schema.js';
import { type FieldError, forbidden, invalid, required } from '../k8s/validation.js';
import { type GameServerPort, type GameServerSpec, type Health, LIST_MAX_CAPACITY } from './gameserver-types.js';
import type { KindContext } from './registry.js';
import {
  type FieldPath,
  type Json,
  SCHEDULING_SCHEMA,
  TEMPLATE_METADATA_SCHEMA,
  arrayAt,
  gateForbidden,
  int32,
  int64,
  isJsonObject,
  isSet,
  objectAt,
  stringAt,
  validateObjectMeta,
} from './common.js';
import { quantityValue } from './quantity.js';

/**
 * The GameServer spec: its schema, the defaults Agones's mutating webhook gives it (§3.2 of the
 * controllers reference) and the validation of its validating webhook (§3.3). A GameServer holds
 * one, and so does the template of every GameServerSet and Fleet.
 */

/** CRD defaults of counters and lists. */
export const DEFAULT_COUNTER_CAPACITY = 1000;
export const DEFAULT_LIST_CAPACITY = 1000;
/** Most keys of the counters and of the lists maps. */
export const MAX_COUNTERS_OR_LISTS = 1000;

// ---------------------------------------------------------------------------------------------
// Schema

const PORT_NUMBER = (description: string): Schema => int32(1, 65535, description);

const PORT_SCHEMA: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Descriptive name of the port.' },
    range: { type: 'string', description: 'PortRanges (beta): the named port range Dynamic ports come from; default "default".' },
    portPolicy: {
      type: 'string',
      enum: ['Dynamic', 'Static', 'Passthrough', 'None'],
      description: 'How the host port is chosen; default Dynamic.',
    },
    container: { type: 'string', description: 'Container that opens the port; default the game server container.' },
    containerPort: PORT_NUMBER('Port the game server process listens on.'),
    hostPort: PORT_NUMBER('Port exposed on the node (Static, or set by the controller).'),
    protocol: { type: 'string', enum: ['UDP', 'TCP', 'TCPUDP'], description: 'Default UDP.' },
  },
};

/**
 * The pod template, a Kubernetes PodTemplateSpec: its spec carries the full PodSpec schema, as
 * Agones's CRDs do, so a mistyped or unknown pod field is refused when the object is written
 * instead of when the pod is made.
 */
export const POD_TEMPLATE_SCHEMA: Schema = {
  type: 'object',
  description: 'The pod template (a Kubernetes PodTemplateSpec) of the game server.',
  properties: {
    metadata: TEMPLATE_METADATA_SCHEMA,
    spec: podSpecSchema(),
  },
};

export const COUNTER_STATUS_SCHEMA: Schema = {
  type: 'object',
  properties: {
    count: { ...int64(0, 'Current value.'), default: 0 },
    capacity: { ...int64(0, 'Maximum value.'), default: DEFAULT_COUNTER_CAPACITY },
  },
};

export const LIST_STATUS_SCHEMA: Schema = {
  type: 'object',
  properties: {
    capacity: { type: 'integer', format: 'int64', minimum: 0, maximum: LIST_MAX_CAPACITY, default: DEFAULT_LIST_CAPACITY, description: 'Most values the list may hold.' },
    values: {
      type: 'array',
      items: { type: 'string' },
      maxItems: LIST_MAX_CAPACITY,
      'x-kubernetes-list-type': 'set',
      default: [],
      description: 'Current values, unique.',
    },
  },
};

export const EVICTION_SCHEMA: Schema = {
  type: 'object',
  description: 'Whether the game server may be evicted: Always, OnUpgrade or Never (default).',
  properties: { safe: { type: 'string', enum: ['Always', 'OnUpgrade', 'Never'] } },
};

export const GAMESERVER_SPEC_SCHEMA: Schema = {
  type: 'object',
  description: 'The desired game server: its pod, ports, health checking and sidecar settings.',
  properties: {
    container: { type: 'string', description: 'The game server container; required only when the pod has several.' },
    ports: { type: 'array', items: PORT_SCHEMA, description: 'Ports the game server exposes.' },
    health: {
      type: 'object',
      description: 'Health checking: pings expected from the SDK every periodSeconds.',
      properties: {
        disabled: { type: 'boolean' },
        periodSeconds: int32(0),
        failureThreshold: int32(1),
        initialDelaySeconds: int32(0),
      },
    },
    scheduling: SCHEDULING_SCHEMA,
    sdkServer: {
      type: 'object',
      description: 'Settings of the SDK sidecar.',
      properties: {
        logLevel: { type: 'string', enum: ['Info', 'Debug', 'Error', 'Trace'] },
        grpcPort: PORT_NUMBER('Port of the sidecar gRPC server; default 9357.'),
        httpPort: PORT_NUMBER('Port of the sidecar HTTP gateway; default 9358.'),
      },
    },
    template: POD_TEMPLATE_SCHEMA,
    players: {
      type: 'object',
      description: 'PlayerTracking (alpha): initial player capacity.',
      properties: { initialCapacity: int64(0) },
    },
    counters: {
      type: 'object',
      description: 'CountsAndLists (alpha): counters, declared at creation.',
      additionalProperties: COUNTER_STATUS_SCHEMA,
      maxProperties: MAX_COUNTERS_OR_LISTS,
    },
    lists: {
      type: 'object',
      description: 'CountsAndLists (alpha): lists, declared at creation.',
      additionalProperties: LIST_STATUS_SCHEMA,
      maxProperties: MAX_COUNTERS_OR_LISTS,
    },
    eviction: EVICTION_SCHEMA,
    immutableReplicas: { type: 'integer', minimum: 1, maximum: 1, description: 'Always 1: the scale subresource for disruption budgets.' },
  },
};

// ---------------------------------------------------------------------------------------------
// Defaults

function containersOf(spec: Json, field: 'containers' | 'initContainers' = 'containers'): Json[] {
  const podSpec = objectAt(objectAt(spec.template)?.spec);
  return (arrayAt(podSpec?.[field]) ?? []).filter(isJsonObject);
}

const HEALTH_NUMBERS = ['periodSeconds', 'failureThreshold', 'initialDelaySeconds'] as const;

function defaultHealth(health: Partial<Health> | undefined | null): Health {
  const h = health ?? {};
  if (h.disabled) {
    // Agones defaults nothing when health checking is off: what was given is kept, zeros left out
    // (a stored zero failureThreshold would fail the schema's minimum of 1).
    const disabled: Health = { disabled: true };
    for (const key of HEALTH_NUMBERS) if (isSet(h[key]) && h[key] !== 0) disabled[key] = h[key];
    return disabled;
  }
  return {
    disabled: false,
    periodSeconds: h.periodSeconds && h.periodSeconds > 0 ? h.periodSeconds : 5,
    failureThreshold: h.failureThreshold && h.failureThreshold > 0 ? h.failureThreshold : 3,
    initialDelaySeconds: h.initialDelaySeconds && h.initialDelaySeconds > 0 ? h.initialDelaySeconds : 5,
  };
}

/**
 * The fields of a GameServer spec whose Go zero value (sent by clients built on Agones's Go types)
 * means unset: the enums Agones defaults, and numbers the schema bounds at 1 or that are defaulted.
 */
export const GAMESERVER_SPEC_ZERO_UNSET: readonly FieldPath[] = [
  ['container'],
  ['scheduling'],
  ['ports', '*', 'portPolicy'],
  ['ports', '*', 'protocol'],
  ['ports', '*', 'range'],
  ['ports', '*', 'container'],
  ['ports', '*', 'containerPort'],
  ['ports', '*', 'hostPort'],
  ...HEALTH_NUMBERS.map((key) => ['health', key]),
  ['sdkServer', 'logLevel'],
  ['sdkServer', 'grpcPort'],
  ['sdkServer', 'httpPort'],
  ['eviction', 'safe'],
];

/**
 * The CRD defaults of counters and lists (count 0, capacity 1000; list capacity 1000, no values).
 * A null is pruned before defaulting, as the API server does.
 */
export function defaultCountersAndLists(spec: Json): Json {
  const out: Json = { ...spec };
  const counters = objectAt(spec.counters);
  if (counters) {
    out.counters = Object.fromEntries(
      Object.entries(counters).map(([key, value]) => {
        const c = objectAt(value) ?? {};
        return [key, { ...c, count: isSet(c.count) ? c.count : 0, capacity: isSet(c.capacity) ? c.capacity : DEFAULT_COUNTER_CAPACITY }];
      }),
    );
  }
  const lists = objectAt(spec.lists);
  if (lists) {
    out.lists = Object.fromEntries(
      Object.entries(lists).map(([key, value]) => {
        const l = objectAt(value) ?? {};
        return [key, { ...l, capacity: isSet(l.capacity) ? l.capacity : DEFAULT_LIST_CAPACITY, values: isSet(l.values) ? l.values : [] }];
      }),
    );
  }
  return out;
}

/** The spec part of the defaults: shared by GameServers and by the templates of sets and fleets. */
export function defaultGameServerSpec(raw: Json, context: KindContext): GameServerSpec {
  const containers = containersOf(raw);
  // One container: it is the game server, whatever `container` said.
  const container = containers.length === 1 ? stringAt(containers[0]!.name) : typeof raw.container === 'string' ? raw.container : undefined;
  const ports = (arrayAt(raw.ports) ?? []).map((item): GameServerPort => {
    const p = (objectAt(item) ?? {}) as Partial<GameServerPort>;
    const portContainer = p.container || container;
    const port: GameServerPort = {
      ...p,
      name: p.name ?? '',
      portPolicy: p.portPolicy || 'Dynamic',
      ...(context.gates.PortRanges && { range: p.range || 'default' }),
      protocol: p.protocol || 'UDP',
    };
    if (portContainer !== undefined) port.container = portContainer;
    else delete port.container;
    return port;
  });
  const sdkServer = (objectAt(raw.sdkServer) ?? {}) as Partial<GameServerSpec['sdkServer']>;
  const eviction = objectAt(raw.eviction) ?? {};
  const spec: GameServerSpec = {
    ...(defaultCountersAndLists(raw) as Partial<GameServerSpec>),
    ...(container !== undefined && { container }),
    ports,
    health: defaultHealth(objectAt(raw.health) as Partial<Health> | undefined),
    scheduling: (raw.scheduling as GameServerSpec['scheduling'] | undefined) || 'Packed',
    sdkServer: {
      logLevel: sdkServer.logLevel || 'Info',
      grpcPort: sdkServer.grpcPort || 9357,
      httpPort: sdkServer.httpPort || 9358,
    },
    template: objectAt(raw.template) ?? {},
    eviction: { ...eviction, safe: stringAt(eviction.safe) || 'Never' },
  };
  if (container === undefined) delete spec.container;
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Validation

/** Fields of a GameServer spec that need a feature gate (rule 2 of §3.3). */
export function featureGateErrors(spec: Json, path: string, context: KindContext): FieldError[] {
  const { gates } = context;
  const errs: FieldError[] = [];
  if (!gates.PlayerTracking && isSet(spec.players)) errs.push(gateForbidden(`${path}.players`, 'PlayerTracking'));
  if (!gates.CountsAndLists) {
    if (isSet(spec.counters)) errs.push(gateForbidden(`${path}.counters`, 'CountsAndLists'));
    if (isSet(spec.lists)) errs.push(gateForbidden(`${path}.lists`, 'CountsAndLists'));
  }
  (arrayAt(spec.ports) ?? []).forEach((item, i) => {
    const port = objectAt(item) ?? {};
    if (!gates.PortPolicyNone && port.portPolicy === 'None') {
      errs.push(forbidden(`${path}.ports[${i}].portPolicy`, 'Value cannot be set to None unless feature flag PortPolicyNone is enabled'));
    }
    // A named range other than the default one is what the PortRanges gate adds.
    if (!gates.PortRanges && isSet(port.range) && port.range !== 'default') {
      errs.push(gateForbidden(`${path}.ports[${i}].range`, 'PortRanges'));
    }
  });
  return errs;
}

export function podTemplateMetadataErrors(spec: Json, path: string): FieldError[] {
  return validateObjectMeta(objectAt(spec.template)?.metadata, `${path}.template.metadata`);
}

/** Kubernetes resource requirements: no negative quantity, no request above its limit. */
function resourceErrors(container: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const resources = objectAt(container.resources);
  if (!resources) return errs;
  const limits = objectAt(resources.limits) ?? {};
  const requests = objectAt(resources.requests) ?? {};
  const check = (kind: 'limits' | 'requests', name: string, raw: unknown): number | undefined => {
    const fieldPath = `${path}.resources.${kind}[${name}]`;
    const value = quantityValue(raw);
    if (value === undefined) {
      errs.push(invalid(fieldPath, raw, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
      return undefined;
    }
    if (value < 0) errs.push(invalid(fieldPath, String(raw).trim(), 'must be greater than or equal to 0'));
    return value;
  };
  for (const name of Object.keys(limits).sort()) check('limits', name, limits[name]);
  for (const name of Object.keys(requests).sort()) {
    const request = check('requests', name, requests[name]);
    if (request === undefined || !(name in limits)) continue;
    const limit = quantityValue(limits[name]);
    if (limit !== undefined && request > limit) {
      errs.push(
        invalid(`${path}.resources.requests`, String(requests[name]).trim(), `must be less than or equal to ${name} limit of ${String(limits[name]).trim()}`),
      );
    }
  }
  return errs;
}

/**
 * Validates a GameServer spec as Agones does once the spec defaults are applied (rules 2 and 4–9
 * of §3.3): pass a defaulted spec, as `defaultGameServerSpec` returns it. `path` is where the spec
 * sits (`spec`, `spec.template.spec`).
 */
export function validateGameServerSpec(spec: unknown, path: string, context: KindContext): FieldError[] {
  const s = objectAt(spec) ?? {};
  const errs = featureGateErrors(s, path, context);
  const containers = containersOf(s);
  const names = new Set(containers.map((c) => stringAt(c.name)));
  // Sidecars (init containers that keep running) may open ports too.
  const sidecars = new Set(containersOf(s, 'initContainers').filter((c) => c.restartPolicy === 'Always').map((c) => stringAt(c.name)));
  const container = stringAt(s.container);

  if (container === '' && containers.length > 1) {
    errs.push(required(`${path}.container`, 'Container is required when using multiple containers in the pod template'));
  }
  if (!names.has(container)) errs.push(invalid(`${path}.container`, container, `Could not find a container named ${container}`));

  (arrayAt(s.ports) ?? []).forEach((item, i) => {
    const port = objectAt(item) ?? {};
    const portPath = `${path}.ports[${i}]`;
    const policy = port.portPolicy;
    const containerPort = typeof port.containerPort === 'number' ? port.containerPort : 0;
    const hostPort = typeof port.hostPort === 'number' ? port.hostPort : 0;
    if ((policy === 'Dynamic' || policy === 'Static') && containerPort <= 0) {
      errs.push(required(`${portPath}.containerPort`, 'ContainerPort must be defined for Dynamic and Static PortPolicies'));
    }
    if (policy === 'Passthrough' && containerPort > 0) {
      errs.push(required(`${portPath}.containerPort`, 'ContainerPort cannot be specified with Passthrough PortPolicy'));
    }
    if (hostPort > 0 && (policy === 'Dynamic' || policy === 'Passthrough')) {
      errs.push(forbidden(`${portPath}.hostPort`, 'HostPort cannot be specified with a Dynamic or Passthrough PortPolicy'));
    }
    const portContainer = stringAt(port.container);
    if (portContainer !== '' && container !== '' && !names.has(portContainer) && !sidecars.has(portContainer)) {
      errs.push(invalid(`${portPath}.container`, portContainer, 'Container must be empty or the name of a container in the pod template'));
    }
  });

  containers.forEach((c, i) => errs.push(...resourceErrors(c, `${path}.template.spec.containers[${i}]`)));
  containersOf(s, 'initContainers').forEach((c, i) => errs.push(...resourceErrors(c, `${path}.template.spec.initContainers[${i}]`)));
  errs.push(...podTemplateMetadataErrors(s, path));
  return errs;
}
