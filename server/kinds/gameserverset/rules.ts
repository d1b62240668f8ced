import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, invalid } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import {
  ALLOCATION_OVERFLOW_SCHEMA,
  PRIORITIES_SCHEMA,
  SCHEDULING_SCHEMA,
  defaultPriorities,
  replicaCount,
  jsonEqual,
  objectAt,
  unsetZeroValues,
  validateAllocationOverflow,
  validateName,
  validateObjectMeta,
  validatePriorities,
} from '../common.js';
import { GAMESERVER_TEMPLATE_SCHEMA, SET_SPEC_ZERO_UNSET, SET_STATUS_FIELDS, defaultTemplate, validateTemplateSpec } from '../gameserver-template.js';

/**
 * GameServerSet rules (§4.1 of the controllers reference). Agones has no mutating webhook for
 * sets: only the CRD's own defaults apply. Its validating webhook checks the whole set on create
 * and, on update, only the name and that the template did not change.
 */

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
