import type { Schema } from '../k8s/schema.js';
import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from './registry.js';
import type { Resource } from './resource.js';
import { GAMESERVERALLOCATION_DEFINITION } from './gameserverallocation/definition.js';
import { defaultFleet, fleetSchema, validateFleet } from './fleet/rules.js';
import { defaultFleetAutoscaler, fleetAutoscalerSchema, validateFleetAutoscaler } from './fleetautoscaler/rules.js';
import { bodySchema, defaultGameServer, gameServerSchema, validateGameServer } from './gameserver/rules.js';
import { gameServerAllocationPolicySchema, validateGameServerAllocationPolicy } from './gameserverallocationpolicy/rules.js';
import { defaultGameServerSet, gameServerSetSchema, validateGameServerSet } from './gameserverset/rules.js';

/**
 * The kinds the resource API serves. Each kind's rules (schema, defaults, validation) live in
 * its own module and are attached here.
 */

/** The body of the kinds fleetsim simulates and serves read-only (Node, Event): any fields. */
export const OPEN_OBJECT: Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };


const SETS_COLUMNS = [
  { name: 'Scheduling', type: 'string', jsonPath: '.spec.scheduling' },
  { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Current', type: 'integer', jsonPath: '.status.replicas' },
  { name: 'Allocated', type: 'integer', jsonPath: '.status.allocatedReplicas' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  AGE_COLUMN,
] as const;

export const GAMESERVER_DEFINITION: KindDefinition = {
  kind: 'GameServer',
  listKind: 'GameServerList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'gameservers',
  singular: 'gameserver',
  shortNames: ['gs'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    { name: 'Port', type: 'string', jsonPath: '.status.ports[0].port' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    AGE_COLUMN,
  ],
  schema: gameServerSchema,
  defaults: defaultGameServer,
  validate: validateGameServer,
};

/** Sets and fleets: status, and scale on spec.replicas (kubectl scale, the HPA's way in). */
const SCALABLE_SUBRESOURCES: KindDefinition['subresources'] = {
  status: true,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
};

export const GAMESERVERSET_DEFINITION: KindDefinition = {
  kind: 'GameServerSet',
  listKind: 'GameServerSetList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'gameserversets',
  singular: 'gameserverset',
  shortNames: ['gss', 'gsset'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: SCALABLE_SUBRESOURCES,
  printerColumns: [...SETS_COLUMNS],
  schema: gameServerSetSchema,
  defaults: defaultGameServerSet,
  validate: validateGameServerSet,
};

export const FLEET_DEFINITION: KindDefinition = {
  kind: 'Fleet',
  listKind: 'FleetList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'fleets',
  singular: 'fleet',
  shortNames: ['flt'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: SCALABLE_SUBRESOURCES,
  printerColumns: [...SETS_COLUMNS],
  schema: fleetSchema,
  defaults: defaultFleet,
  validate: validateFleet,
};

export const FLEETAUTOSCALER_DEFINITION: KindDefinition = {
  kind: 'FleetAutoscaler',
  listKind: 'FleetAutoscalerList',
  group: 'autoscaling.agones.dev',
  version: 'v1',
  plural: 'fleetautoscalers',
  singular: 'fleetautoscaler',
  shortNames: ['fas'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: true },
  printerColumns: [AGE_COLUMN],
  schema: fleetAutoscalerSchema,
  defaults: defaultFleetAutoscaler,
  validate: validateFleetAutoscaler,
};

export const GAMESERVERALLOCATIONPOLICY_DEFINITION: KindDefinition = {
  kind: 'GameServerAllocationPolicy',
  listKind: 'GameServerAllocationPolicyList',
  group: 'multicluster.agones.dev',
  version: 'v1',
  plural: 'gameserverallocationpolicies',
  singular: 'gameserverallocationpolicy',
  shortNames: ['gsap'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [AGE_COLUMN],
  schema: gameServerAllocationPolicySchema,
  validate: validateGameServerAllocationPolicy,
};

export const SECRET_DEFINITION: KindDefinition = {
  kind: 'Secret',
  listKind: 'SecretList',
  group: '',
  version: 'v1',
  plural: 'secrets',
  singular: 'secret',
  shortNames: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.type' },
    AGE_COLUMN,
  ],
  schema: bodySchema({
    type: { type: 'string' },
    data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    stringData: { type: 'object', additionalProperties: { type: 'string' } },
    immutable: { type: 'boolean' },
  }),
  // stringData is write-only: it is merged into data (base64), as the API server does.
  defaults: (object) => {
    const stringData = object.stringData as Record<string, string> | undefined;
    if (!stringData) return object.type ? object : { ...object, type: 'Opaque' };
    const data = { ...((object.data as Record<string, string> | undefined) ?? {}) };
    for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(value, 'utf8').toString('base64');
    const { stringData: _written, ...rest } = object;
    return { ...rest, type: (object.type as string | undefined) ?? 'Opaque', data } as Resource;
  },
};

/** Simulated nodes: read-only through the API. */
export const NODE_DEFINITION: KindDefinition = {
  kind: 'Node',
  listKind: 'NodeList',
  group: '',
  version: 'v1',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  verbs: ['get', 'list', 'watch'],
  subresources: { status: false },
  printerColumns: [
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[0].type' },
    { name: 'Internal-IP', type: 'string', jsonPath: '.status.addresses[0].address' },
    AGE_COLUMN,
  ],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
};

/** Kubernetes Events, recorded with Agones's reasons; read-only through the API. */
export const EVENT_DEFINITION: KindDefinition = {
  kind: 'Event',
  listKind: 'EventList',
  group: '',
  version: 'v1',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
  subresources: { status: false },
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.type' },
    { name: 'Reason', type: 'string', jsonPath: '.reason' },
    { name: 'Object', type: 'string', jsonPath: '.involvedObject.name' },
    { name: 'Message', type: 'string', jsonPath: '.message' },
  ],
  schema: OPEN_OBJECT,
};

export const KIND_DEFINITIONS: KindDefinition[] = [
  GAMESERVERALLOCATION_DEFINITION,
  GAMESERVER_DEFINITION,
  GAMESERVERSET_DEFINITION,
  FLEET_DEFINITION,
  FLEETAUTOSCALER_DEFINITION,
  GAMESERVERALLOCATIONPOLICY_DEFINITION,
  SECRET_DEFINITION,
  NODE_DEFINITION,
  EVENT_DEFINITION,
];

export function findDefinition(group: string, version: string, plural: string): KindDefinition | undefined {
  return KIND_DEFINITIONS.find((d) => d.group === group && d.version === version && d.plural === plural);
}

export function definitionOfKind(kind: string): KindDefinition | undefined {
  return KIND_DEFINITIONS.find((d) => d.kind === kind);
}
