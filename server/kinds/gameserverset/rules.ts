import type { Schema } from '../../k8s/schema.js';
import { type FieldError, invalid } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import {
  ALLOCATION_OVERFLOW_SCHEMA,
  PRIORITIES_SCHEMA,
  SCHEDULING_SCHEMA,
  type FieldPath,
  defaultPriorities,
  replicaCount,
  int64,
  jsonEqual,
  objectAt,
  pathsUnder,
  unsetZeroValues,
  validateAllocationOverflow,
  validateName,
  validateObjectMeta,
  validatePriorities,
} from '../common.js';
import { GAMESERVER_SPEC_ZERO_UNSET, GAMESERVER_TEMPLATE_SCHEMA, bodySchema, defaultCountersAndLists, validateTemplateSpec } from '../gameserver/rules.js';

/**
 * GameServerSet rules (§4.1 of the controllers reference). Agones has no mutating webhook for
 * sets: only the CRD's own defaults apply. Its validating webhook checks the whole set on create
 * and, on update, only the name and that the template did not change.
 */

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

export const GAMESERVERSET_SPEC_SCHEMA: Schema = {
  type: 'object',
  description: 'A set of identical GameServers, kept at the desired number.',
  properties: {
    replicas: replicaCount('Number of GameServers wanted.'),
    allocationOverflow: ALLOCATION_OVERFLOW_SCHEMA,
    scheduling: SCHEDULING_SCHEMA,
    priorities: PRIORITIES_SCHEMA,
    template: GAMESERVER_TEMPLATE_SCHEMA,
  },
};

export const gameServerSetSchema: Schema = bodySchema({
  spec: GAMESERVERSET_SPEC_SCHEMA,
  status: {
    type: 'object',
    description: 'Counts of the set’s GameServers by state, and their aggregated counters and lists.',
    properties: {
      ...SET_STATUS_FIELDS,
      shutdownReplicas: replicaCount('GameServers shutting down.'),
    },
  },
});

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

/** Only the CRD defaults: priorities' order and the template's counters and lists. */
export function defaultGameServerSet(object: Resource, _context: KindContext, old?: Resource): Resource {
  const spec = objectAt(object.spec);
  if (!spec) return object;
  const next = { ...unsetZeroValues(spec, SET_SPEC_ZERO_UNSET, old?.spec) };
  if (next.priorities !== undefined) next.priorities = defaultPriorities(next.priorities);
  if (next.template !== undefined) next.template = defaultTemplate(next.template);
  return { ...object, spec: next };
}

export function validateGameServerSet(object: Resource, context: KindContext, old?: Resource): FieldError[] {
  const errs = validateName(object.metadata);
  const spec = objectAt(object.spec) ?? {};
  if (old) {
    const template = spec.template;
    if (!jsonEqual(template, objectAt(old.spec)?.template)) {
      errs.push(invalid('spec.template', template ?? null, 'GameServerSet template cannot be updated'));
    }
    return errs;
  }
  errs.push(...validateTemplateSpec(spec.template, 'spec.template', context));
  errs.push(...validatePriorities(spec.priorities, 'spec.priorities', context.gates));
  errs.push(...validateObjectMeta(objectAt(spec.template)?.metadata, 'spec.template.metadata'));
  errs.push(...validateAllocationOverflow(spec.allocationOverflow, 'spec.allocationOverflow', context.gates));
  return errs;
}
