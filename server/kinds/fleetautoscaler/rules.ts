import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, forbidden, invalid, required } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import {
  type Json,
  STRING_MAP_SCHEMA,
  arrayAt,
  int32,
  int64,
  intAt,
  intOrString,
  isSet,
  objectAt,
  int64At,
  parseIntOrPercent,
  stringAt,
} from '../common.js';
import { cronError, durationError, parseRfc3339, timezoneError } from './schedule.js';
import { validateUrlConfiguration } from './webhook-url.js';
import type { Int64 } from '../../int64.js';
import { DEFAULT_SYNC_SECONDS } from './fleetautoscaler.js';

/**
 * FleetAutoscaler rules (§7 of the controllers reference, with the spec's Limits 3–5, which are
 * stricter than Agones and win): the sync default, and the validation of the policy whose `type`
 * is set. Agones runs both webhooks on create and on update.
 */

export const DEFAULT_WASM_FUNCTION = 'scale';

/** Each policy type and the field holding its settings. */
export const POLICY_FIELDS = {
  Buffer: 'buffer',
  Webhook: 'webhook',
  Counter: 'counter',
  List: 'list',
  Schedule: 'schedule',
  Chain: 'chain',
  Wasm: 'wasm',
} as const;
export type PolicyType = keyof typeof POLICY_FIELDS;
const POLICY_TYPES = Object.keys(POLICY_FIELDS) as PolicyType[];

function isPolicyType(value: string): value is PolicyType {
  return Object.prototype.hasOwnProperty.call(POLICY_FIELDS, value);
}

// ---------------------------------------------------------------------------------------------
// Schema

const URL_CONFIGURATION_SCHEMA: Schema = {
  type: 'object',
  description: 'Where to reach the webhook: an https url, or a service in the cluster.',
  properties: {
    url: { type: 'string', description: 'https:// URL, without user info, query or fragment.' },
    service: {
      type: 'object',
      description: 'A Kubernetes service reference.',
      properties: {
        namespace: { type: 'string' },
        name: { type: 'string' },
        path: { type: 'string' },
        port: int32(1, 65535),
      },
    },
    caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle (base64) to trust for the webhook.' },
  },
};

const BUFFER_SCHEMA: Schema = {
  type: 'object',
  description: 'Keeps bufferSize GameServers ready (not allocated), between minReplicas and maxReplicas.',
  required: ['maxReplicas', 'bufferSize'],
  properties: {
    maxReplicas: int32(1, undefined, 'Most replicas; bigger than minReplicas and bufferSize.'),
    minReplicas: int32(0, undefined, 'Fewest replicas; 0 means no minimum.'),
    bufferSize: intOrString('Ready replicas to keep: a number, or a percentage (1%..99%) of the fleet.'),
  },
};

function capacityPolicySchema(what: 'Counter' | 'List'): Schema {
  return {
    type: 'object',
    description: `CountsAndLists (alpha): keeps bufferSize ${what.toLowerCase()} capacity available across the fleet.`,
    required: ['key', 'maxCapacity', 'bufferSize'],
    properties: {
      key: { type: 'string', description: `Name of the ${what}.` },
      maxCapacity: int64(1, 'Most aggregate capacity; bigger than minCapacity and bufferSize.'),
      minCapacity: int64(0, 'Least aggregate capacity; 0 means no minimum.'),
      bufferSize: intOrString('Available capacity to keep: a number, or a percentage (1%..99%).'),
    },
  };
}

const WASM_SCHEMA: Schema = {
  type: 'object',
  description: 'WasmAutoscaler (alpha): a WebAssembly module computes the replicas.',
  properties: {
    function: { type: 'string', default: DEFAULT_WASM_FUNCTION, description: 'Exported function to call; default scale.' },
    config: { ...STRING_MAP_SCHEMA, description: 'Configuration passed to the module.' },
    from: { type: 'object', description: 'Where the module is downloaded from.', properties: { url: URL_CONFIGURATION_SCHEMA } },
    hash: { type: 'string', description: 'SHA-256 of the module, hex.' },
  },
};

function policyProperties(types: readonly PolicyType[], schedule?: Schema, chain?: Schema): Record<string, Schema> {
  return {
    type: { type: 'string', enum: [...types], description: 'Policy type; only the matching settings may be set.' },
    buffer: BUFFER_SCHEMA,
    webhook: { ...URL_CONFIGURATION_SCHEMA, description: 'Webhook policy: a service answering FleetAutoscaleReview requests.' },
    counter: capacityPolicySchema('Counter'),
    list: capacityPolicySchema('List'),
    ...(schedule && { schedule }),
    ...(chain && { chain }),
    wasm: WASM_SCHEMA,
  };
}

/** The policy a schedule applies: neither a Schedule nor a Chain. */
const SCHEDULED_POLICY_SCHEMA: Schema = {
  type: 'object',
  description: 'The policy applied while the schedule is active (not Schedule or Chain).',
  required: ['type'],
  properties: policyProperties(['Buffer', 'Webhook', 'Counter', 'List', 'Wasm']),
};

const SCHEDULE_SCHEMA: Schema = {
  type: 'object',
  description: 'ScheduledAutoscaler (beta): applies a policy within a time window.',
  required: ['policy'],
  properties: {
    between: {
      type: 'object',
      properties: {
        start: { type: 'string', format: 'date-time', description: 'From when the policy is eligible (RFC 3339).' },
        end: { type: 'string', format: 'date-time', description: 'Until when the policy is eligible (RFC 3339).' },
      },
    },
    activePeriod: {
      type: 'object',
      properties: {
        timezone: { type: 'string', description: 'IANA time zone of startCron; default UTC.' },
        startCron: { type: 'string', description: 'Five-field cron expression of each period start.' },
        duration: { type: 'string', description: 'Length of each period, e.g. 2h45m.' },
      },
    },
    policy: SCHEDULED_POLICY_SCHEMA,
  },
};

const CHAIN_SCHEMA: Schema = {
  type: 'array',
  description: 'ScheduledAutoscaler (beta): policies tried in order; the first that applies wins.',
  items: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'Unique id of the entry.' },
      ...policyProperties(['Buffer', 'Webhook', 'Counter', 'List', 'Schedule', 'Wasm'], SCHEDULE_SCHEMA),
    },
  },
};

export const FLEETAUTOSCALER_SPEC_SCHEMA: Schema = {
  type: 'object',
  description: 'Scales a fleet by a policy.',
  required: ['fleetName', 'policy'],
  properties: {
    fleetName: { type: 'string', description: 'Fleet to scale, in the same namespace.' },
    policy: {
      type: 'object',
      description: 'How the desired replicas are computed.',
      required: ['type'],
      properties: policyProperties(POLICY_TYPES, SCHEDULE_SCHEMA, CHAIN_SCHEMA),
    },
    sync: {
      type: 'object',
      description: 'When the autoscaler runs; default every 30 seconds.',
      properties: {
        type: { type: 'string', enum: ['FixedInterval'] },
        fixedInterval: { type: 'object', properties: { seconds: int32(undefined, undefined, 'Seconds between runs.') } },
      },
    },
  },
};

export const fleetAutoscalerSchema: Schema = bodySchema({
  spec: FLEETAUTOSCALER_SPEC_SCHEMA,
  status: {
    type: 'object',
    description: 'What the autoscaler last saw and decided.',
    properties: {
      currentReplicas: int32(0, undefined, 'Fleet replicas last seen.'),
      desiredReplicas: int32(0, undefined, 'Replicas last computed.'),
      lastScaleTime: { type: 'string', format: 'date-time', nullable: true, description: 'When the fleet was last scaled.' },
      ableToScale: { type: 'boolean', description: 'Whether the fleet could be reached.' },
      scalingLimited: { type: 'boolean', description: 'Whether the computed replicas were capped by the limits.' },
      lastAppliedPolicy: { type: 'string', description: 'The policy last applied (for a chain, Chain:<id>:<type>).' },
    },
  },
});

// ---------------------------------------------------------------------------------------------
// Defaults

/** The Wasm policy's CRD default, wherever a policy can hold one. */
function defaultPolicy(value: unknown): unknown {
  const policy = objectAt(value);
  if (!policy) return value;
  const next: Json = { ...policy };
  const wasm = objectAt(policy.wasm);
  if (wasm && !isSet(wasm.function)) next.wasm = { ...wasm, function: DEFAULT_WASM_FUNCTION };
  const schedule = objectAt(policy.schedule);
  if (schedule && isSet(schedule.policy)) next.schedule = { ...schedule, policy: defaultPolicy(schedule.policy) };
  const chain = arrayAt(policy.chain);
  if (chain) next.chain = chain.map(defaultPolicy);
  return next;
}

/** On create and update: sync every 30 seconds unless told otherwise. */
export function defaultFleetAutoscaler(object: Resource, _context: KindContext, _old?: Resource): Resource {
  const spec: Json = { ...(objectAt(object.spec) ?? {}) };
  const sync: Json = { ...(objectAt(spec.sync) ?? {}) };
  if (!sync.type) sync.type = 'FixedInterval';
  const fixedInterval: Json = { ...(objectAt(sync.fixedInterval) ?? {}) };
  if (!fixedInterval.seconds) fixedInterval.seconds = DEFAULT_SYNC_SECONDS;
  sync.fixedInterval = fixedInterval;
  spec.sync = sync;
  if (spec.policy !== undefined) spec.policy = defaultPolicy(spec.policy);
  return { ...object, spec };
}

// ---------------------------------------------------------------------------------------------
// Validation

const IS_NEGATIVE = 'must be greater than or equal to 0';
const PERCENT_RANGE = 'bufferSize should be between 1% and 99%';

function percentOutOfRange(value: number | undefined): boolean {
  return value === undefined || value < 1 || value > 99;
}

/**
 * The comparisons Limits 3 and 4 make of a policy's bounds. The spec wants them strict; Agones
 * allows each equality, and so does `serve --validation agones`. A value the spec refuses only for
 * being equal is refused with a message that says so.
 */
function boundsErrors(
  path: string,
  names: { min: string; max: string },
  bounds: { min: Int64; max: Int64; size: Int64 | undefined },
  context: KindContext,
): FieldError[] {
  const agones = context.validation === 'agones';
  const below = (value: Int64, than: Int64) => (agones ? value < than : value <= than);
  const bigger = agones ? 'bigger than or equal to' : 'bigger than';
  // Int64 values may be bigints: equal when neither is below the other.
  const unlessEqual = (a: Int64, b: Int64) => (!agones && !(a < b) && !(a > b) ? EQUAL_REFUSED : '');
  const { min, max, size } = bounds;
  const errs: FieldError[] = [];
  if (below(max, min)) errs.push(invalid(`${path}.${names.min}`, min, `${names.min} should be smaller than ${names.max}${unlessEqual(min, max)}`));
  if (size === undefined) return errs;
  if (size <= 0) errs.push(invalid(`${path}.bufferSize`, size, IS_NEGATIVE));
  if (below(max, size)) errs.push(invalid(`${path}.${names.max}`, max, `${names.max} should be ${bigger} bufferSize${unlessEqual(max, size)}`));
  if (min !== 0 && below(min, size)) errs.push(invalid(`${path}.${names.min}`, min, `${names.min} should be ${bigger} bufferSize${unlessEqual(min, size)}`));
  return errs;
}

const EQUAL_REFUSED = " (the spec's limit; Agones accepts an equal value, as fleetsim serve --validation agones does)";

/**
 * Buffer (Limits 3): maxReplicas bigger than minReplicas and bufferSize, a non-zero minReplicas
 * bigger than bufferSize, bufferSize bigger than 0.
 */
function validateBuffer(value: unknown, path: string, context: KindContext): FieldError[] {
  const buffer = objectAt(value);
  if (!buffer) return [required(path, 'buffer policy config params are missing')];
  const max = intAt(buffer.maxReplicas);
  const min = intAt(buffer.minReplicas);
  const size = parseIntOrPercent(buffer.bufferSize);
  const errs = boundsErrors(path, { min: 'minReplicas', max: 'maxReplicas' }, { min, max, size: size.kind === 'int' ? size.value : undefined }, context);
  if (size.kind !== 'int') {
    if (percentOutOfRange(size.value)) errs.push(invalid(`${path}.bufferSize`, size.text, PERCENT_RANGE));
    // With a percentage and no minimum, a fleet with nothing allocated would scale to zero for good.
    if (min < 1) errs.push(invalid(`${path}.minReplicas`, min, IS_NEGATIVE));
  }
  return errs;
}

/** Counter and List (Limits 4): the same shape of rules over capacities; a key is required. */
function validateCapacityPolicy(value: unknown, path: string, what: 'counter' | 'list', context: KindContext): FieldError[] {
  if (!context.gates.CountsAndLists) return [forbidden(path, 'feature CountsAndLists must be enabled')];
  const policy = objectAt(value);
  if (!policy) return [required(path, `${what} policy config params are missing`)];
  const errs: FieldError[] = [];
  if (stringAt(policy.key) === '') errs.push(required(`${path}.key`));
  const max = int64At(policy.maxCapacity);
  const min = int64At(policy.minCapacity);
  const size = parseIntOrPercent(policy.bufferSize);
  errs.push(...boundsErrors(path, { min: 'minCapacity', max: 'maxCapacity' }, { min, max, size: size.kind === 'int' ? size.value : undefined }, context));
  if (size.kind !== 'int') {
    if (percentOutOfRange(size.value)) errs.push(invalid(`${path}.bufferSize`, size.text, PERCENT_RANGE));
    if (min < 1) {
      // Agones's text, leading space included.
      errs.push(invalid(`${path}.minCapacity`, size.text, ' when bufferSize in percentage format is used, minCapacity should be more than 0'));
    }
  }
  return errs;
}

function validateWasm(value: unknown, path: string, context: KindContext): FieldError[] {
  const wasm = objectAt(value);
  if (!wasm) return [required(path, 'wasm policy config params are missing')];
  if (!context.gates.WasmAutoscaler) return [forbidden(path, 'feature WasmAutoscaler must be enabled')];
  const from = objectAt(wasm.from);
  if (!from || !isSet(from.url)) return [required(`${path}.from`, 'wasm from configuration is missing')];
  return validateUrlConfiguration(from.url, `${path}.from.url`, 'webhook policy config params are missing');
}

function validateTime(value: unknown, path: string, errs: FieldError[]): number | undefined {
  const text = stringAt(value);
  if (text === '') return undefined;
  const time = parseRfc3339(text);
  if (time === undefined) errs.push(invalid(path, text, 'must be a date-time in RFC 3339 format'));
  return time;
}

function validateSchedule(value: unknown, path: string, context: KindContext): FieldError[] {
  const schedule = objectAt(value);
  if (!schedule) return [required(path, 'schedule policy config params are missing')];
  if (!context.gates.ScheduledAutoscaler) return [forbidden(path, 'feature ScheduledAutoscaler must be enabled')];
  const errs: FieldError[] = [];
  const between = objectAt(schedule.between) ?? {};
  const period = objectAt(schedule.activePeriod) ?? {};

  const timezone = stringAt(period.timezone);
  const zoneError = timezoneError(timezone);
  if (zoneError) errs.push(invalid(`${path}.activePeriod.timezone`, timezone, `Error parsing timezone: ${zoneError}\n`));

  const start = validateTime(between.start, `${path}.between.start`, errs);
  const end = validateTime(between.end, `${path}.between.end`, errs);
  if (end !== undefined) {
    if (end < context.now) errs.push(invalid(`${path}.between.end`, stringAt(between.end), 'end time must be after the current time'));
    else if (start !== undefined && end < start) errs.push(invalid(`${path}.between`, between, 'start time must be before end time'));
  }

  const startCron = stringAt(period.startCron);
  if (startCron !== '') {
    const error = cronError(startCron);
    if (error) errs.push(invalid(`${path}.activePeriod.startCron`, startCron, `invalid startCron: ${error}`));
    if (startCron.includes('TZ')) {
      errs.push(
        invalid(
          `${path}.activePeriod.startCron`,
          startCron,
          'CRON_TZ or TZ used in activePeriod is not supported, please use the .schedule.timezone field to specify a timezone',
        ),
      );
    }
  }
  const duration = stringAt(period.duration);
  if (duration !== '') {
    const error = durationError(duration);
    if (error) errs.push(invalid(`${path}.activePeriod.duration`, duration, `invalid duration: ${error}`));
  }
  // The scheduled policy is left unchecked, as Agones leaves it (its e2e suite schedules a buffer
  // bigger than its minimum): the schema checks its shape, and the autoscaler reports a policy it
  // cannot apply on the FleetAutoscaler's status and events when the schedule is active.
  return errs;
}

const CHAIN_ENTRY_POLICIES = ['buffer', 'webhook', 'counter', 'list', 'schedule', 'wasm'] as const;

function validateChain(value: unknown, path: string, context: KindContext): FieldError[] {
  const chain = arrayAt(value);
  if (!chain || chain.length === 0) return [required(path, 'chain policy config params are missing')];
  if (!context.gates.ScheduledAutoscaler) return [forbidden(path, 'feature ScheduledAutoscaler must be enabled')];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  chain.forEach((item, i) => {
    const entry = objectAt(item) ?? {};
    const id = stringAt(entry.id);
    if (seen.has(id)) errs.push(invalid(path, id, 'id of chain entry must be unique'));
    seen.add(id);
    if (stringAt(entry.type) === '' || !CHAIN_ENTRY_POLICIES.some((field) => isSet(entry[field]))) {
      errs.push(required(`${path}[${i}]`, 'valid policy is missing'));
    }
    // Agones names the entry's policy `policy` although its fields sit inline in the entry.
    errs.push(...validatePolicy(entry, `${path}[${i}].policy`, context));
  });
  return errs;
}

/** Validates the settings matching `type`; settings of any other type must be absent. */
export function validatePolicy(value: unknown, path: string, context: KindContext): FieldError[] {
  const policy = objectAt(value) ?? {};
  const type = stringAt(policy.type);
  if (!isPolicyType(type)) return []; // the schema's enum rejects it, or a chain entry reported it
  const errs: FieldError[] = [];
  for (const other of POLICY_TYPES) {
    const field = POLICY_FIELDS[other];
    if (other !== type && isSet(policy[field])) errs.push(forbidden(`${path}.${field}`, `Value cannot be set unless type is ${other}`));
  }
  const own = `${path}.${POLICY_FIELDS[type]}`;
  const settings = policy[POLICY_FIELDS[type]];
  switch (type) {
    case 'Buffer':
      errs.push(...validateBuffer(settings, own, context));
      break;
    case 'Webhook':
      errs.push(...validateUrlConfiguration(settings, own, 'webhook policy config params are missing'));
      break;
    case 'Counter':
      errs.push(...validateCapacityPolicy(settings, own, 'counter', context));
      break;
    case 'List':
      errs.push(...validateCapacityPolicy(settings, own, 'list', context));
      break;
    case 'Schedule':
      errs.push(...validateSchedule(settings, own, context));
      break;
    case 'Chain':
      errs.push(...validateChain(settings, own, context));
      break;
    case 'Wasm':
      errs.push(...validateWasm(settings, own, context));
      break;
  }
  return errs;
}

export function validateFleetAutoscaler(object: Resource, context: KindContext, _old?: Resource): FieldError[] {
  const spec = objectAt(object.spec) ?? {};
  const errs = validatePolicy(spec.policy, 'spec.policy', context);
  const sync = objectAt(spec.sync);
  if (sync) {
    const seconds = intAt(objectAt(sync.fixedInterval)?.seconds);
    if (seconds <= 0) errs.push(invalid('spec.sync.fixedInterval.seconds', seconds, IS_NEGATIVE));
  }
  return errs;
}
