import { isIP } from 'node:net';
import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, invalid, required } from '../../k8s/validation.js';
import { GAMESERVER_FINALIZER } from './gameserver.js';
import { GAMESERVER_STATES, type GameServer } from '../gameserver-types.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import { type FieldPath, type Json, arrayAt, fixedAnnotationErrors, int64, objectAt, pathsUnder, stringAt, unsetZeroValues, validateName } from '../common.js';
import { FLEETSIM_AGONES_VERSION, SDK_VERSION_ANNOTATION } from '../agones.js';
import {
  COUNTER_STATUS_SCHEMA,
  EVICTION_SCHEMA,
  GAMESERVER_SPEC_SCHEMA,
  GAMESERVER_SPEC_ZERO_UNSET,
  LIST_STATUS_SCHEMA,
  defaultGameServerSpec,
  featureGateErrors,
  podTemplateMetadataErrors,
  validateGameServerSpec,
} from '../gameserver-spec.js';
import { commandIn } from '../gameserver-template.js';

/**
 * GameServer rules: the body's schema, the defaults Agones's mutating webhook applies on create
 * (§3.2 of the controllers reference) and the validation of its validating webhook (§3.3). The
 * spec's own rules are in ../gameserver-spec.ts, shared with the templates of sets and fleets.
 */

/** Marks a development GameServer: no pod, the address is given. */
export const DEV_ADDRESS_ANNOTATION = 'agones.dev/dev-address';
/** A pod template annotated so forces `status.eviction.safe` to Always. */
export const SAFE_TO_EVICT_ANNOTATION = 'cluster-autoscaler.kubernetes.io/safe-to-evict';

const ADDRESS_SCHEMA: Schema = {
  type: 'object',
  properties: { type: { type: 'string' }, address: { type: 'string' } },
};

export const GAMESERVER_STATUS_SCHEMA: Schema = {
  type: 'object',
  description: 'The observed game server: state, address and ports, counters and lists.',
  properties: {
    state: { type: 'string', enum: [...GAMESERVER_STATES], description: 'Lifecycle state.' },
    ports: {
      type: 'array',
      description: 'Ports as allocated on the node.',
      items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer', format: 'int32' } } },
    },
    address: { type: 'string', description: 'Address of the node.' },
    addresses: { type: 'array', items: ADDRESS_SCHEMA, description: 'Addresses of the node and pod.' },
    nodeName: { type: 'string', description: 'Node running the game server.' },
    reservedUntil: { type: 'string', format: 'date-time', nullable: true, description: 'End of a reservation.' },
    players: {
      type: 'object',
      description: 'PlayerTracking (alpha): connected players.',
      properties: { count: int64(0), capacity: int64(0), ids: { type: 'array', items: { type: 'string' } } },
    },
    counters: { type: 'object', additionalProperties: COUNTER_STATUS_SCHEMA, description: 'CountsAndLists (alpha): current counters.' },
    lists: { type: 'object', additionalProperties: LIST_STATUS_SCHEMA, description: 'CountsAndLists (alpha): current lists.' },
    eviction: EVICTION_SCHEMA,
  },
};

/** The GameServer body. The status travels with the object: it is no subresource. */
export const gameServerSchema: Schema = bodySchema({ spec: GAMESERVER_SPEC_SCHEMA, status: GAMESERVER_STATUS_SCHEMA });

/** A GameServer's own zero values: its spec's and the state Agones defaults from the ports. */
const GAMESERVER_ZERO_UNSET: readonly FieldPath[] = [
  ...pathsUnder(['spec'], GAMESERVER_SPEC_ZERO_UNSET),
  ['status', 'state'],
  ['status', 'eviction', 'safe'],
];
export function defaultGameServer(input: Resource, context: KindContext, old?: Resource): Resource {
  const object = unsetZeroValues(input, GAMESERVER_ZERO_UNSET, old) as Resource;
  // Agones defaults a GameServer on create only.
  if (old) return object;
  const spec = defaultGameServerSpec(objectAt(object.spec) ?? {}, context);
  const dynamic = spec.ports.some((p) => p.portPolicy === 'Dynamic' || p.portPolicy === 'Passthrough');
  const status = (objectAt(object.status) ?? {}) as Partial<GameServer['status']>;
  const podAnnotations = objectAt(objectAt(spec.template.metadata)?.annotations);
  const evictionSafe = podAnnotations?.[SAFE_TO_EVICT_ANNOTATION] === 'true' ? 'Always' : (spec.eviction?.safe ?? 'Never');
  const gs: GameServer = {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: {
      ...object.metadata,
      annotations: { ...object.metadata.annotations, [SDK_VERSION_ANNOTATION]: FLEETSIM_AGONES_VERSION },
      finalizers: [...new Set([...(object.metadata.finalizers ?? []), GAMESERVER_FINALIZER])],
    },
    spec,
    status: {
      state: status.state || (dynamic ? 'PortAllocation' : 'Creating'),
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
      eviction: { safe: evictionSafe },
    },
  };
  return gs as unknown as Resource;
}

/** A development GameServer (annotated with its address) has no pod: only its ports are checked. */
function devGameServerErrors(devAddress: string, spec: Json, context: KindContext): FieldError[] {
  const errs = featureGateErrors(spec, 'spec', context);
  if (isIP(devAddress) === 0) {
    errs.push(invalid(`metadata.annotations.${DEV_ADDRESS_ANNOTATION}`, devAddress, 'must be a valid IP address'));
  }
  (arrayAt(spec.ports) ?? []).forEach((item, i) => {
    const port = objectAt(item) ?? {};
    if (!(typeof port.hostPort === 'number' && port.hostPort !== 0)) {
      errs.push(required(`spec.ports[${i}].hostPort`, DEV_ADDRESS_ANNOTATION));
    }
    if (port.portPolicy !== 'Static') errs.push(required(`spec.ports[${i}].portPolicy`, 'PortPolicy must be Static'));
  });
  errs.push(...podTemplateMetadataErrors(spec, 'spec'));
  return errs;
}

/** A GameServer's command: its own annotation. */
export function gameServerCommand(object: Resource): { field: string; command: string } | undefined {
  return commandIn(object.metadata.annotations, 'metadata.annotations');
}

/**
 * Agones validates a GameServer on create only; an update is checked by the schema alone, and by
 * fleetsim's own rule that its annotations stay as they were created.
 */
export function validateGameServer(object: Resource, context: KindContext, old?: Resource): FieldError[] {
  if (old) return fixedAnnotationErrors(object.metadata.annotations, old.metadata.annotations, 'metadata.annotations');
  const errs = validateName(object.metadata);
  const spec = objectAt(object.spec) ?? {};
  const annotations = objectAt(object.metadata.annotations) ?? {};
  if (DEV_ADDRESS_ANNOTATION in annotations) {
    errs.push(...devGameServerErrors(stringAt(annotations[DEV_ADDRESS_ANNOTATION]), spec, context));
    return errs;
  }
  errs.push(...validateGameServerSpec(spec, 'spec', context));
  return errs;
}
