import { describe, expect, it } from 'vitest';
import type { FeatureGates } from '../../features.js';
import type { SchemaReport } from '../../k8s/schema.js';
import { fieldErrorMessage } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import { type Json, kindContext, schemaReport, storedResource } from '../../../test/helpers/kinds.js';
import { defaultFleetAutoscaler, fleetAutoscalerSchema, validateFleetAutoscaler } from './rules.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const context = (gates: Partial<FeatureGates> = {}): KindContext => kindContext(gates, NOW);
const COUNTS = { CountsAndLists: true };
/** What a refusal the spec makes only for an equal value adds. */
const EQUAL = " (the spec's limit; Agones accepts an equal value, as fleetsim serve --validation agones does)";

function autoscaler(spec: Json): Resource {
  return storedResource('autoscaling.agones.dev/v1', 'FleetAutoscaler', 'fas-1', spec);
}

function check(policy: Json, gates: Partial<FeatureGates> = {}, sync?: Json): string[] {
  const c = context(gates);
  const object = defaultFleetAutoscaler(autoscaler({ fleetName: 'f', policy, ...(sync && { sync }) }), c);
  return validateFleetAutoscaler(object, c).map(fieldErrorMessage);
}

const buffer = (settings: Json) => ({ type: 'Buffer', buffer: settings });
const counter = (settings: Json) => ({ type: 'Counter', counter: { key: 'rooms', ...settings } });
const list = (settings: Json) => ({ type: 'List', list: { key: 'players', ...settings } });

describe('defaultFleetAutoscaler', () => {
  it.each<[string, Json | undefined, Json]>([
    ['no sync', undefined, { type: 'FixedInterval', fixedInterval: { seconds: 30 } }],
    ['an empty sync', {}, { type: 'FixedInterval', fixedInterval: { seconds: 30 } }],
    ['zero seconds', { type: 'FixedInterval', fixedInterval: { seconds: 0 } }, { type: 'FixedInterval', fixedInterval: { seconds: 30 } }],
    ['seconds given', { fixedInterval: { seconds: 5 } }, { type: 'FixedInterval', fixedInterval: { seconds: 5 } }],
    ['negative seconds (left for validation)', { type: 'FixedInterval', fixedInterval: { seconds: -1 } }, { type: 'FixedInterval', fixedInterval: { seconds: -1 } }],
  ])('sync from %s', (_label, sync, expected) => {
    const spec = { fleetName: 'f', policy: buffer({ maxReplicas: 10, bufferSize: 1 }), ...(sync && { sync }) };
    expect((defaultFleetAutoscaler(autoscaler(spec), context()).spec as Json).sync).toEqual(expected);
  });

  it('applies on update too', () => {
    const current = autoscaler({ fleetName: 'f', policy: buffer({}) });
    expect((defaultFleetAutoscaler(autoscaler({ fleetName: 'f', policy: buffer({}) }), context(), current).spec as Json).sync).toEqual({
      type: 'FixedInterval',
      fixedInterval: { seconds: 30 },
    });
  });

  it('names the Wasm function scale by default, in chains too', () => {
    const wasm = { type: 'Wasm', wasm: { from: { url: { url: 'https://h/m.wasm' } } } };
    const spec = defaultFleetAutoscaler(autoscaler({ fleetName: 'f', policy: { type: 'Chain', chain: [{ id: 'a', ...wasm }] } }), context()).spec as Json;
    expect(spec.policy).toEqual({ type: 'Chain', chain: [{ id: 'a', type: 'Wasm', wasm: { function: 'scale', from: { url: { url: 'https://h/m.wasm' } } } }] });
  });
});

describe('Buffer policy (spec Limits 3)', () => {
  it.each<[string, Json, string[]]>([
    ['a valid absolute buffer', { bufferSize: 5, minReplicas: 10, maxReplicas: 20 }, []],
    ['no minimum', { bufferSize: 5, maxReplicas: 20 }, []],
    ['a valid percentage', { bufferSize: '20%', minReplicas: 1, maxReplicas: 20 }, []],
    ['minReplicas above maxReplicas', { bufferSize: 1, minReplicas: 30, maxReplicas: 20 }, [
      'spec.policy.buffer.minReplicas: Invalid value: 30: minReplicas should be smaller than maxReplicas',
    ]],
    ['minReplicas equal to maxReplicas (Agones accepts it)', { bufferSize: 1, minReplicas: 20, maxReplicas: 20 }, [
      `spec.policy.buffer.minReplicas: Invalid value: 20: minReplicas should be smaller than maxReplicas${EQUAL}`,
    ]],
    ['bufferSize 0', { bufferSize: 0, maxReplicas: 20 }, ['spec.policy.buffer.bufferSize: Invalid value: 0: must be greater than or equal to 0']],
    ['a negative bufferSize', { bufferSize: -1, maxReplicas: 20 }, ['spec.policy.buffer.bufferSize: Invalid value: -1: must be greater than or equal to 0']],
    ['maxReplicas below bufferSize', { bufferSize: 30, maxReplicas: 20 }, [
      'spec.policy.buffer.maxReplicas: Invalid value: 20: maxReplicas should be bigger than bufferSize',
    ]],
    ['maxReplicas equal to bufferSize (Agones accepts it)', { bufferSize: 20, maxReplicas: 20 }, [
      `spec.policy.buffer.maxReplicas: Invalid value: 20: maxReplicas should be bigger than bufferSize${EQUAL}`,
    ]],
    ['minReplicas below bufferSize', { bufferSize: 5, minReplicas: 3, maxReplicas: 20 }, [
      'spec.policy.buffer.minReplicas: Invalid value: 3: minReplicas should be bigger than bufferSize',
    ]],
    ['minReplicas equal to bufferSize (Agones accepts it)', { bufferSize: 5, minReplicas: 5, maxReplicas: 20 }, [
      `spec.policy.buffer.minReplicas: Invalid value: 5: minReplicas should be bigger than bufferSize${EQUAL}`,
    ]],
    ['a percentage of 0%', { bufferSize: '0%', minReplicas: 1, maxReplicas: 20 }, [
      'spec.policy.buffer.bufferSize: Invalid value: "0%": bufferSize should be between 1% and 99%',
    ]],
    ['a percentage of 100%', { bufferSize: '100%', minReplicas: 1, maxReplicas: 20 }, [
      'spec.policy.buffer.bufferSize: Invalid value: "100%": bufferSize should be between 1% and 99%',
    ]],
    ['a string that is no percentage', { bufferSize: '5', minReplicas: 1, maxReplicas: 20 }, [
      'spec.policy.buffer.bufferSize: Invalid value: "5": bufferSize should be between 1% and 99%',
    ]],
    ['a percentage without minReplicas', { bufferSize: '10%', maxReplicas: 20 }, [
      'spec.policy.buffer.minReplicas: Invalid value: 0: must be greater than or equal to 0',
    ]],
  ])('%s', (_label, settings, expected) => {
    expect(check(buffer(settings))).toEqual(expected);
  });

  it("follows Agones's rule with --validation agones: equal values accepted, the rest refused in Agones's words", () => {
    const agones = (policy: Json) => {
      const c = { ...context(COUNTS), validation: 'agones' as const };
      return validateFleetAutoscaler(defaultFleetAutoscaler(autoscaler({ fleetName: 'f', policy }), c), c).map(fieldErrorMessage);
    };
    expect(agones(buffer({ bufferSize: 5, minReplicas: 5, maxReplicas: 5 }))).toEqual([]);
    expect(agones(counter({ bufferSize: 10, minCapacity: 10, maxCapacity: 10 }))).toEqual([]);
    expect(agones(buffer({ bufferSize: 5, minReplicas: 6, maxReplicas: 4 }))).toEqual([
      'spec.policy.buffer.minReplicas: Invalid value: 6: minReplicas should be smaller than maxReplicas',
      'spec.policy.buffer.maxReplicas: Invalid value: 4: maxReplicas should be bigger than or equal to bufferSize',
    ]);
    expect(agones(list({ bufferSize: 10, minCapacity: 5, maxCapacity: 100 }))).toEqual([
      'spec.policy.list.minCapacity: Invalid value: 5: minCapacity should be bigger than or equal to bufferSize',
    ]);
  });

  it('requires the buffer settings for type Buffer', () => {
    expect(check({ type: 'Buffer' })).toEqual(['spec.policy.buffer: Required value: buffer policy config params are missing']);
  });
});

describe.each<[string, (s: Json) => Json, string]>([
  ['Counter', counter, 'counter'],
  ['List', list, 'list'],
])('%s policy (spec Limits 4)', (type, policy, field) => {
  const at = `spec.policy.${field}`;

  it('needs CountsAndLists', () => {
    expect(check(policy({ bufferSize: 5, maxCapacity: 100 }))).toEqual([`${at}: Forbidden: feature CountsAndLists must be enabled`]);
  });

  it('requires its settings', () => {
    expect(check({ type }, COUNTS)).toEqual([`${at}: Required value: ${field} policy config params are missing`]);
  });

  it.each<[string, Json, string[]]>([
    ['valid absolute values', { bufferSize: 5, minCapacity: 10, maxCapacity: 100 }, []],
    ['a valid percentage', { bufferSize: '50%', minCapacity: 10, maxCapacity: 100 }, []],
    ['an empty key', { key: '', bufferSize: 5, maxCapacity: 100 }, [`${at}.key: Required value`]],
    ['minCapacity equal to maxCapacity', { bufferSize: 5, minCapacity: 100, maxCapacity: 100 }, [
      `${at}.minCapacity: Invalid value: 100: minCapacity should be smaller than maxCapacity${EQUAL}`,
    ]],
    ['bufferSize 0', { bufferSize: 0, maxCapacity: 100 }, [`${at}.bufferSize: Invalid value: 0: must be greater than or equal to 0`]],
    ['maxCapacity equal to bufferSize', { bufferSize: 100, maxCapacity: 100 }, [
      `${at}.maxCapacity: Invalid value: 100: maxCapacity should be bigger than bufferSize${EQUAL}`,
    ]],
    ['minCapacity equal to bufferSize', { bufferSize: 10, minCapacity: 10, maxCapacity: 100 }, [
      `${at}.minCapacity: Invalid value: 10: minCapacity should be bigger than bufferSize${EQUAL}`,
    ]],
    ['a percentage above 99%', { bufferSize: '150%', minCapacity: 1, maxCapacity: 100 }, [
      `${at}.bufferSize: Invalid value: "150%": bufferSize should be between 1% and 99%`,
    ]],
    ['a percentage without minCapacity', { bufferSize: '5%', maxCapacity: 100 }, [
      `${at}.minCapacity: Invalid value: "5%":  when bufferSize in percentage format is used, minCapacity should be more than 0`,
    ]],
  ])('%s', (_label, settings, expected) => {
    expect(check(policy(settings), COUNTS)).toEqual(expected);
  });
});

describe('Webhook policy (spec Limits 5)', () => {
  const webhook = (settings: Json) => ({ type: 'Webhook', webhook: settings });

  it.each<[string, Json, string[]]>([
    ['a service', { service: { name: 'scaler', namespace: 'default', path: 'scale' } }, []],
    ['an https url with a port and path', { url: 'https://scaler.example.com:8443/scale/now' }, []],
    ['nothing', {}, ['spec.policy.webhook: Required value: url should be provided']],
    ['both url and service', { url: 'https://a/', service: { name: 's' } }, [
      'spec.policy.webhook.url: Duplicate value: "service and url cannot be used simultaneously"',
    ]],
    ['an http url (Agones accepts it)', { url: 'http://scaler/scale' }, [
      'spec.policy.webhook.url: Invalid value: "http://scaler/scale": \'https\' is the only allowed URL scheme',
    ]],
    ['user info', { url: 'https://user:secret@scaler/scale' }, [
      'spec.policy.webhook.url: Invalid value: "https://user:secret@scaler/scale": user information is not permitted in the URL',
    ]],
    ['a query', { url: 'https://scaler/scale?x=1' }, [
      'spec.policy.webhook.url: Invalid value: "https://scaler/scale?x=1": query parameters are not permitted in the URL',
    ]],
    ['a fragment', { url: 'https://scaler/scale#top' }, [
      'spec.policy.webhook.url: Invalid value: "https://scaler/scale#top": fragments are not permitted in the URL',
    ]],
    ['no host', { url: 'https:///scale' }, ['spec.policy.webhook.url: Invalid value: "https:///scale": host must be specified']],
    ['a bad escape', { url: 'https://scaler/%zz' }, ['spec.policy.webhook.url: Invalid value: "https://scaler/%zz": url is not valid']],
    ['a caBundle that holds no certificate', { url: 'https://scaler/', caBundle: Buffer.from('not a certificate').toString('base64') }, [
      `spec.policy.webhook.caBundle: Invalid value: "${Buffer.from('not a certificate').toString('base64')}": CA Bundle is not valid`,
    ]],
  ])('%s', (_label, settings, expected) => {
    expect(check(webhook(settings))).toEqual(expected);
  });

  it('requires the webhook settings for type Webhook', () => {
    expect(check({ type: 'Webhook' })).toEqual(['spec.policy.webhook: Required value: webhook policy config params are missing']);
  });
});

describe('exactly the settings of the type', () => {
  it('forbids the settings of other types', () => {
    const policy = { type: 'Buffer', buffer: { bufferSize: 1, maxReplicas: 5 }, webhook: { url: 'https://x/' }, list: {} };
    expect(check(policy)).toEqual([
      'spec.policy.webhook: Forbidden: Value cannot be set unless type is Webhook',
      'spec.policy.list: Forbidden: Value cannot be set unless type is List',
    ]);
  });
});

describe('Schedule policy', () => {
  const schedule = (settings: Json, policy: Json = buffer({ bufferSize: 5, maxReplicas: 50 })) => ({
    type: 'Schedule',
    schedule: { policy, ...settings },
  });
  const at = 'spec.policy.schedule';

  it.each<[string, Json, string[]]>([
    ['a full valid schedule', {
      between: { start: '2026-01-01T00:00:00Z', end: '2030-01-01T00:00:00-05:00' },
      activePeriod: { timezone: 'Europe/Paris', startCron: '0 1 * * 0', duration: '5h' },
    }, []],
    ['no window at all', {}, []],
    ['a bad time zone', { activePeriod: { timezone: 'Mars/Olympus' } }, [
      `${at}.activePeriod.timezone: Invalid value: "Mars/Olympus": Error parsing timezone: unknown time zone Mars/Olympus\n`,
    ]],
    ['an end in the past', { between: { end: '2026-05-01T00:00:00Z' } }, [
      `${at}.between.end: Invalid value: "2026-05-01T00:00:00Z": end time must be after the current time`,
    ]],
    ['an end before the start', { between: { start: '2031-01-01T00:00:00Z', end: '2030-01-01T00:00:00Z' } }, [
      `${at}.between: Invalid value: {"end":"2030-01-01T00:00:00Z","start":"2031-01-01T00:00:00Z"}: start time must be before end time`,
    ]],
    ['a time that is not RFC 3339', { between: { start: 'tomorrow' } }, [
      `${at}.between.start: Invalid value: "tomorrow": must be a date-time in RFC 3339 format`,
    ]],
    ['a bad cron', { activePeriod: { startCron: '0 1 * *' } }, [
      `${at}.activePeriod.startCron: Invalid value: "0 1 * *": invalid startCron: expected exactly 5 fields, found 4: [0 1 * *]`,
    ]],
    ['a cron with a time zone', { activePeriod: { startCron: 'CRON_TZ=UTC 0 1 * * *' } }, [
      `${at}.activePeriod.startCron: Invalid value: "CRON_TZ=UTC 0 1 * * *": CRON_TZ or TZ used in activePeriod is not supported, please use the .schedule.timezone field to specify a timezone`,
    ]],
    ['a bad duration', { activePeriod: { duration: '5 hours' } }, [
      `${at}.activePeriod.duration: Invalid value: "5 hours": invalid duration: time: unknown unit " hours" in duration "5 hours"`,
    ]],
  ])('%s', (_label, settings, expected) => {
    expect(check(schedule(settings))).toEqual(expected);
  });

  it('leaves the scheduled policy unchecked, as Agones does', () => {
    expect(check(schedule({}, buffer({ bufferSize: 4, minReplicas: 3, maxReplicas: 4 })))).toEqual([]);
    expect(check(schedule({}, counter({ bufferSize: 1, maxCapacity: 5 })))).toEqual([]);
  });

  it('needs ScheduledAutoscaler', () => {
    expect(check(schedule({}), { ScheduledAutoscaler: false })).toEqual([`${at}: Forbidden: feature ScheduledAutoscaler must be enabled`]);
  });

  it('requires its settings', () => {
    expect(check({ type: 'Schedule' })).toEqual([`${at}: Required value: schedule policy config params are missing`]);
  });
});

describe('Chain policy', () => {
  const at = 'spec.policy.chain';
  const entry = (id: string, policy: Json) => ({ id, ...policy });

  it('accepts ordered entries', () => {
    const chain = [
      entry('weekday', { type: 'Schedule', schedule: { activePeriod: { startCron: '@daily' }, policy: buffer({ bufferSize: 2, maxReplicas: 9 }) } }),
      entry('default', buffer({ bufferSize: 1, maxReplicas: 9 })),
    ];
    expect(check({ type: 'Chain', chain })).toEqual([]);
  });

  it('reports duplicate ids, entries without a policy and each entry policy at its Agones path', () => {
    const chain = [
      entry('a', buffer({ bufferSize: 1, maxReplicas: 9 })),
      entry('a', buffer({ bufferSize: 9, maxReplicas: 9 })),
      { id: 'b', type: 'Buffer' },
      { id: 'c' },
    ];
    expect(check({ type: 'Chain', chain })).toEqual([
      `${at}: Invalid value: "a": id of chain entry must be unique`,
      `${at}[1].policy.buffer.maxReplicas: Invalid value: 9: maxReplicas should be bigger than bufferSize${EQUAL}`,
      `${at}[2]: Required value: valid policy is missing`,
      `${at}[2].policy.buffer: Required value: buffer policy config params are missing`,
      `${at}[3]: Required value: valid policy is missing`,
    ]);
  });

  it('needs ScheduledAutoscaler, and entries', () => {
    expect(check({ type: 'Chain', chain: [entry('a', buffer({ bufferSize: 1, maxReplicas: 9 }))] }, { ScheduledAutoscaler: false })).toEqual([
      `${at}: Forbidden: feature ScheduledAutoscaler must be enabled`,
    ]);
    expect(check({ type: 'Chain', chain: [] })).toEqual([`${at}: Required value: chain policy config params are missing`]);
  });
});

describe('Wasm policy', () => {
  const at = 'spec.policy.wasm';
  const wasm = (settings: Json) => ({ type: 'Wasm', wasm: settings });
  const WASM = { WasmAutoscaler: true };

  it.each<[string, Json, Partial<FeatureGates>, string[]]>([
    ['a module from a service', { from: { url: { service: { name: 'files', namespace: 'default', path: '/m.wasm' } } } }, WASM, []],
    ['without WasmAutoscaler', { from: { url: { url: 'https://h/m.wasm' } } }, {}, [`${at}: Forbidden: feature WasmAutoscaler must be enabled`]],
    ['no source', { function: 'scale' }, WASM, [`${at}.from: Required value: wasm from configuration is missing`]],
    ['an http source', { from: { url: { url: 'http://h/m.wasm' } } }, WASM, [
      `${at}.from.url.url: Invalid value: "http://h/m.wasm": 'https' is the only allowed URL scheme`,
    ]],
  ])('%s', (_label, settings, gates, expected) => {
    expect(check(wasm(settings), gates)).toEqual(expected);
  });

  it('requires its settings', () => {
    expect(check({ type: 'Wasm' }, WASM)).toEqual([`${at}: Required value: wasm policy config params are missing`]);
  });
});

describe('sync', () => {
  it('rejects a negative interval', () => {
    expect(check(buffer({ bufferSize: 1, maxReplicas: 9 }), {}, { type: 'FixedInterval', fixedInterval: { seconds: -5 } })).toEqual([
      'spec.sync.fixedInterval.seconds: Invalid value: -5: must be greater than or equal to 0',
    ]);
  });
});

describe('fleetAutoscalerSchema', () => {
  const report = (spec: Json): SchemaReport => schemaReport({ spec }, fleetAutoscalerSchema);
  const errors = (spec: Json) => report(spec).errors.map(fieldErrorMessage);

  it.each<[string, Json, string[]]>([
    ['fleetName and policy required', {}, ['spec.fleetName: Required value', 'spec.policy: Required value']],
    ['policy type required', { fleetName: 'f', policy: {} }, ['spec.policy.type: Required value']],
    ['an unknown policy type', { fleetName: 'f', policy: { type: 'Magic' } }, [
      'spec.policy.type: Unsupported value: "Magic": supported values: "Buffer", "Webhook", "Counter", "List", "Schedule", "Chain", "Wasm"',
    ]],
    ['buffer maxReplicas and bufferSize required', { fleetName: 'f', policy: { type: 'Buffer', buffer: {} } }, [
      'spec.policy.buffer.maxReplicas: Required value',
      'spec.policy.buffer.bufferSize: Required value',
    ]],
    ['counter key, maxCapacity and bufferSize required', { fleetName: 'f', policy: { type: 'Counter', counter: {} } }, [
      'spec.policy.counter.key: Required value',
      'spec.policy.counter.maxCapacity: Required value',
      'spec.policy.counter.bufferSize: Required value',
    ]],
    ['maxReplicas at least 1', { fleetName: 'f', policy: { type: 'Buffer', buffer: { maxReplicas: 0, bufferSize: 1 } } }, [
      'spec.policy.buffer.maxReplicas: Invalid value: 0: spec.policy.buffer.maxReplicas in body should be greater than or equal to 1',
    ]],
    ['an unknown sync type', { fleetName: 'f', policy: { type: 'Webhook', webhook: {} }, sync: { type: 'Cron' } }, [
      'spec.sync.type: Unsupported value: "Cron": supported values: "FixedInterval"',
    ]],
    ['a chain inside a chain', { fleetName: 'f', policy: { type: 'Chain', chain: [{ id: 'x', type: 'Chain' }] } }, [
      'spec.policy.chain[0].type: Unsupported value: "Chain": supported values: "Buffer", "Webhook", "Counter", "List", "Schedule", "Wasm"',
    ]],
    ['a schedule inside a schedule', { fleetName: 'f', policy: { type: 'Schedule', schedule: { policy: { type: 'Schedule' } } } }, [
      'spec.policy.schedule.policy.type: Unsupported value: "Schedule": supported values: "Buffer", "Webhook", "Counter", "List", "Wasm"',
    ]],
  ])('%s', (_label, spec, expected) => {
    expect(errors(spec)).toEqual(expected);
  });

  it('knows the status fields and rejects unknown spec fields', () => {
    const status = { currentReplicas: 1, desiredReplicas: 2, lastScaleTime: null, ableToScale: true, scalingLimited: false, lastAppliedPolicy: 'Buffer' };
    const r = schemaReport({ spec: { fleetName: 'f', policy: { type: 'Buffer', buffer: { maxReplicas: 2, bufferSize: 1, extra: 1 } } }, status }, fleetAutoscalerSchema);
    expect(r).toEqual({ unknown: ['spec.policy.buffer.extra'], errors: [] });
  });
});
