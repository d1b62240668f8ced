import type { Schema } from '../k8s/schema.js';
import type { FieldError } from '../k8s/validation.js';
import { AGE_COLUMN, type KindContext, type KindDefinition } from './registry.js';
import type { Resource } from './resource.js';
import { COMMAND_ANNOTATION } from './agones.js';
import { type FieldPath, TEMPLATE_METADATA_SCHEMA, int64, objectAt, pathsUnder, replicaCount, stringAt } from './common.js';
import { GAMESERVER_SPEC_SCHEMA, GAMESERVER_SPEC_ZERO_UNSET, defaultCountersAndLists, defaultGameServerSpec, validateGameServerSpec } from './gameserver-spec.js';

/**
 * What GameServerSets and Fleets share: the GameServer template they hold (schema, defaults,
 * validation, the command it runs), the status their GameServers fold into, their columns and
 * their scale subresource.
 */

/** The GameServerTemplateSpec of sets and fleets. */
export const GAMESERVER_TEMPLATE_SCHEMA: Schema = {
  type: 'object',
  description: 'Template of the GameServers: metadata and GameServer spec.',
  properties: { metadata: TEMPLATE_METADATA_SCHEMA, spec: GAMESERVER_SPEC_SCHEMA },
};

/**
 * A GameServerTemplateSpec (of a set or a fleet): the spec is validated after the GameServer spec
 * defaults, as Agones does, without those defaults being stored. The template's own metadata is
 * left to the caller, because sets and fleets check it at different points.
 */
export function validateTemplateSpec(template: unknown, path: string, context: KindContext): FieldError[] {
  const spec = defaultGameServerSpec(objectAt(objectAt(template)?.spec) ?? {}, context);
  return validateGameServerSpec(spec, `${path}.spec`, context);
}

/** A command in these annotations (empty runs nothing), and the field that holds it. */
export function commandIn(annotations: unknown, path: string): { field: string; command: string } | undefined {
  const command = stringAt(objectAt(annotations)?.[COMMAND_ANNOTATION]);
  return command === '' ? undefined : { field: `${path}[${COMMAND_ANNOTATION}]`, command };
}

/** A set's or fleet's command: its template's annotation, which every GameServer it makes runs. */
export function templateCommand(object: Resource): { field: string; command: string } | undefined {
  return commandIn(objectAt(objectAt(objectAt(object.spec)?.template)?.metadata)?.annotations, 'spec.template.metadata.annotations');
}

export const AGGREGATED_COUNT_SCHEMA: Schema = {
  type: 'object',
  properties: { allocatedCount: int64(), allocatedCapacity: int64(), count: int64(), capacity: int64() },
};

/** Status fields shared by sets and fleets. */
export const SET_STATUS_FIELDS: Record<string, Schema> = {
  replicas: replicaCount('GameServers in the set, excluding those shutting down.'),
  readyReplicas: replicaCount('GameServers Ready.'),
  reservedReplicas: replicaCount('GameServers Reserved.'),
  allocatedReplicas: replicaCount('GameServers Allocated.'),
  players: {
    type: 'object',
    description: 'PlayerTracking (alpha): total player count and capacity.',
    properties: { count: int64(), capacity: int64() },
  },
  counters: { type: 'object', additionalProperties: AGGREGATED_COUNT_SCHEMA, description: 'CountsAndLists (alpha): counter totals.' },
  lists: { type: 'object', additionalProperties: AGGREGATED_COUNT_SCHEMA, description: 'CountsAndLists (alpha): list totals.' },
};

/** The zero values of a set's or a fleet's spec that mean unset, its template's included. */
export const SET_SPEC_ZERO_UNSET: readonly FieldPath[] = [
  ['scheduling'],
  ['priorities', '*', 'order'],
  ...pathsUnder(['template', 'spec'], GAMESERVER_SPEC_ZERO_UNSET),
];

/**
 * The CRD defaults inside a template: counters and lists of the GameServer spec. The rest of the
 * template's spec is stored as given; its GameServers are defaulted when they are created.
 */
export function defaultTemplate(template: unknown): unknown {
  const t = objectAt(template);
  const spec = objectAt(t?.spec);
  if (!t || !spec) return template;
  return { ...t, spec: defaultCountersAndLists(spec) };
}

/** `kubectl get` columns of sets, and of the fleets that own them. */
export const SETS_COLUMNS = [
  { name: 'Scheduling', type: 'string', jsonPath: '.spec.scheduling' },
  { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Current', type: 'integer', jsonPath: '.status.replicas' },
  { name: 'Allocated', type: 'integer', jsonPath: '.status.allocatedReplicas' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  AGE_COLUMN,
] as const;

/** Sets and fleets: status, and scale on spec.replicas (kubectl scale, the HPA's way in). */
export const SCALABLE_SUBRESOURCES: KindDefinition['subresources'] = {
  status: true,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
};
