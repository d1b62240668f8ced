import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, invalid, notSupported } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import {
  ALLOCATION_OVERFLOW_SCHEMA,
  PRIORITIES_SCHEMA,
  SCHEDULING_SCHEMA,
  type FieldPath,
  defaultPriorities,
  replicaCount,
  intOrString,
  isSet,
  objectAt,
  parseIntOrPercent,
  unsetZeroValues,
  validateAllocationOverflow,
  validateName,
  validateObjectMeta,
  validatePriorities,
} from '../common.js';
import { FLEETSIM_AGONES_VERSION, SDK_VERSION_ANNOTATION } from '../agones.js';
import { GAMESERVER_TEMPLATE_SCHEMA, SET_SPEC_ZERO_UNSET, SET_STATUS_FIELDS, defaultTemplate, validateTemplateSpec } from '../gameserver-template.js';

/**
 * Fleet rules (§5.1 of the controllers reference): defaults from the mutating webhook on create
 * (strategy, scheduling, version annotation) plus the CRD's own defaults on every write; the same
 * validation on create and update.
 */

export const STRATEGY_TYPES = ['RollingUpdate', 'Recreate'] as const;
export const DEFAULT_ROLLING_UPDATE_PERCENT = '25%';

export const FLEET_SPEC_SCHEMA: Schema = {
  type: 'object',
  description: 'A fleet of GameServers, rolled out through GameServerSets.',
  properties: {
    replicas: replicaCount('Number of GameServers wanted; default 0.'),
    allocationOverflow: ALLOCATION_OVERFLOW_SCHEMA,
    strategy: {
      type: 'object',
      description: 'How a template change replaces GameServers (a Kubernetes DeploymentStrategy).',
      properties: {
        type: { type: 'string', enum: [...STRATEGY_TYPES], description: 'RollingUpdate (default) or Recreate.' },
        rollingUpdate: {
          type: 'object',
          description: 'Limits of a rolling update.',
          properties: {
            maxSurge: intOrString('GameServers created above the desired number: a number or 1%..99%; default 25%.'),
            maxUnavailable: intOrString('GameServers that may be unavailable: a number or 1%..99%; default 25%.'),
          },
        },
      },
    },
    scheduling: SCHEDULING_SCHEMA,
    priorities: PRIORITIES_SCHEMA,
    template: GAMESERVER_TEMPLATE_SCHEMA,
  },
};

export const fleetSchema: Schema = bodySchema({
  spec: FLEET_SPEC_SCHEMA,
  status: {
    type: 'object',
    description: 'Counts of the fleet’s GameServers by state, and their aggregated counters and lists.',
    properties: SET_STATUS_FIELDS,
  },
});

/** A fleet's zero values that mean unset: a set's, and the strategy Agones defaults. */
const FLEET_SPEC_ZERO_UNSET: readonly FieldPath[] = [...SET_SPEC_ZERO_UNSET, ['strategy', 'type']];

export function defaultFleet(object: Resource, _context: KindContext, old?: Resource): Resource {
  const spec = { ...unsetZeroValues(objectAt(object.spec) ?? {}, FLEET_SPEC_ZERO_UNSET, old?.spec) };
  let metadata = object.metadata;
  // The CRD's defaults, on every write.
  if (!isSet(spec.replicas)) spec.replicas = 0;
  if (spec.priorities !== undefined) spec.priorities = defaultPriorities(spec.priorities);
  if (spec.template !== undefined) spec.template = defaultTemplate(spec.template);
  // The mutating webhook's, on create only.
  if (!old) {
    const strategy = { ...(objectAt(spec.strategy) ?? {}) };
    if (!strategy.type) strategy.type = 'RollingUpdate';
    if (strategy.type === 'RollingUpdate') {
      const rollingUpdate = { ...(objectAt(strategy.rollingUpdate) ?? {}) };
      if (!isSet(rollingUpdate.maxSurge)) rollingUpdate.maxSurge = DEFAULT_ROLLING_UPDATE_PERCENT;
      if (!isSet(rollingUpdate.maxUnavailable)) rollingUpdate.maxUnavailable = DEFAULT_ROLLING_UPDATE_PERCENT;
      strategy.rollingUpdate = rollingUpdate;
    }
    spec.strategy = strategy;
    if (!spec.scheduling) spec.scheduling = 'Packed';
    metadata = { ...metadata, annotations: { ...metadata.annotations, [SDK_VERSION_ANNOTATION]: FLEETSIM_AGONES_VERSION } };
  }
  return { ...object, metadata, spec };
}

/** maxSurge / maxUnavailable: 1%..99% as a percentage, at least 1 as a number. */
function rollingUpdateValueErrors(raw: unknown, path: string): FieldError[] {
  if (!isSet(raw)) return [];
  const value = parseIntOrPercent(raw);
  if (value.kind === 'int') return value.value < 1 ? [invalid(path, value.value, 'must be at least 1')] : [];
  if (value.value === undefined || value.value < 1 || value.value > 99) return [invalid(path, value.text, 'must be between 1% and 99%')];
  return [];
}

export function validateFleet(object: Resource, context: KindContext, _old?: Resource): FieldError[] {
  const errs = validateName(object.metadata);
  const spec = objectAt(object.spec) ?? {};
  const strategy = objectAt(spec.strategy) ?? {};
  const type = typeof strategy.type === 'string' ? strategy.type : '';
  if (type === 'RollingUpdate') {
    const rollingUpdate = objectAt(strategy.rollingUpdate) ?? {};
    errs.push(...rollingUpdateValueErrors(rollingUpdate.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
    errs.push(...rollingUpdateValueErrors(rollingUpdate.maxSurge, 'spec.strategy.rollingUpdate.maxSurge'));
  } else if (type !== 'Recreate') {
    errs.push(notSupported('spec.strategy.type', type, [...STRATEGY_TYPES]));
  }
  errs.push(...validateTemplateSpec(spec.template, 'spec.template', context));
  errs.push(...validateObjectMeta(objectAt(spec.template)?.metadata, 'spec.template.metadata'));
  errs.push(...validateAllocationOverflow(spec.allocationOverflow, 'spec.allocationOverflow', context.gates));
  errs.push(...validatePriorities(spec.priorities, 'spec.priorities', context.gates));
  return errs;
}
