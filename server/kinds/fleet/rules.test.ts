import { describe, expect, it } from 'vitest';
import type { FeatureGates } from '../../features.js';
import type { SchemaReport } from '../../k8s/schema.js';
import { fieldErrorMessage } from '../../k8s/validation.js';
import type { Resource } from '../resource.js';
import { type Json, kindContext as context, schemaReport, storedResource } from '../../../test/helpers/kinds.js';
import { defaultFleet, fleetSchema, validateFleet } from './rules.js';

function fleet(spec: Json, name = 'fleet-1'): Resource {
  return storedResource('agones.dev/v1', 'Fleet', name, spec);
}

const template = (extra: Json = {}): Json => ({
  spec: { ports: [{ containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'i' }] } }, ...extra },
});

function check(spec: Json, gates: Partial<FeatureGates> = {}, name?: string): string[] {
  const c = context(gates);
  return validateFleet(defaultFleet(fleet(spec, name), c), c).map(fieldErrorMessage);
}

describe('defaultFleet', () => {
  it('on create: RollingUpdate 25%/25%, Packed, replicas 0 and the version annotation', () => {
    const defaulted = defaultFleet(fleet({ template: template() }), context());
    expect(defaulted.spec).toEqual({
      replicas: 0,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      scheduling: 'Packed',
      template: template(),
    });
    expect(defaulted.metadata.annotations).toEqual({ 'agones.dev/sdk-version': '1.57.0' });
  });

  it.each<[string, Json, Json]>([
    ['keeps a given rolling update value', { strategy: { rollingUpdate: { maxSurge: 3 } } }, {
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: '25%' } },
    }],
    ['adds no rolling update to Recreate', { strategy: { type: 'Recreate' } }, { strategy: { type: 'Recreate' } }],
    ['keeps Distributed', { scheduling: 'Distributed' }, { scheduling: 'Distributed' }],
    ['keeps replicas', { replicas: 4 }, { replicas: 4 }],
    ['orders priorities Ascending by default', { priorities: [{ type: 'Counter', key: 'rooms' }] }, {
      priorities: [{ type: 'Counter', key: 'rooms', order: 'Ascending' }],
    }],
  ])('%s', (_label, spec, expected) => {
    expect(defaultFleet(fleet(spec), context()).spec).toMatchObject(expected);
  });

  it('leaves the template GameServer spec undefaulted, except the CRD defaults of counters and lists', () => {
    const spec = defaultFleet(fleet({ template: template({ counters: { rooms: { capacity: 10 } } }) }), context()).spec as Json;
    expect((spec.template as { spec: Json }).spec).toEqual({ ...(template().spec as Json), counters: { rooms: { count: 0, capacity: 10 } } });
  });

  it('on update applies only the CRD defaults', () => {
    const current = fleet({ replicas: 1, template: template() });
    const next = defaultFleet(fleet({ template: template(), priorities: [{ type: 'List', key: 'p' }] }), context(), current);
    expect(next.spec).toEqual({ replicas: 0, template: template(), priorities: [{ type: 'List', key: 'p', order: 'Ascending' }] });
    expect(next.metadata.annotations).toEqual({});
  });
});

describe('validateFleet', () => {
  it('accepts a valid fleet', () => {
    expect(check({ replicas: 3, template: template() })).toEqual([]);
  });

  it.each<[string, unknown, string[]]>([
    ['1%', '1%', []],
    ['99%', '99%', []],
    ['1', 1, []],
    ['0%', '0%', ['spec.strategy.rollingUpdate.maxSurge: Invalid value: "0%": must be between 1% and 99%']],
    ['100%', '100%', ['spec.strategy.rollingUpdate.maxSurge: Invalid value: "100%": must be between 1% and 99%']],
    ['a string without %', '5', ['spec.strategy.rollingUpdate.maxSurge: Invalid value: "5": must be between 1% and 99%']],
    ['0', 0, ['spec.strategy.rollingUpdate.maxSurge: Invalid value: 0: must be at least 1']],
    ['-2', -2, ['spec.strategy.rollingUpdate.maxSurge: Invalid value: -2: must be at least 1']],
  ])('maxSurge %s', (_label, maxSurge, expected) => {
    expect(check({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge } }, template: template() })).toEqual(expected);
  });

  it('checks maxUnavailable before maxSurge', () => {
    expect(check({ strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: '120%' } }, template: template() })).toEqual([
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "120%": must be between 1% and 99%',
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: 0: must be at least 1',
    ]);
  });

  it('does not check rolling update values under Recreate', () => {
    expect(check({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 0 } }, template: template() })).toEqual([]);
  });

  it('rejects other strategy types (an update may leave the type empty)', () => {
    const c = context();
    const current = fleet({ template: template() });
    const errs = validateFleet(fleet({ strategy: {}, template: template() }), c, current).map(fieldErrorMessage);
    expect(errs).toEqual(['spec.strategy.type: Unsupported value: "": supported values: "RollingUpdate", "Recreate"']);
  });

  it.each<[string, Json, Partial<FeatureGates>, string[]]>([
    ['a template error, after the GameServer defaults', { template: template({ ports: [{ portPolicy: 'Passthrough', containerPort: 5 }] }) }, {}, [
      'spec.template.spec.ports[0].containerPort: Required value: ContainerPort cannot be specified with Passthrough PortPolicy',
    ]],
    ['template lists without CountsAndLists', { template: template({ lists: { p: {} } }) }, {}, [
      'spec.template.spec.lists: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
    ]],
    ['priorities without CountsAndLists', { priorities: [{ type: 'Counter', key: 'rooms' }], template: template() }, {}, [
      'spec.priorities: Forbidden: FeatureCountsAndLists is not enabled',
    ]],
    ['allocationOverflow without FleetAllocationOverflow', { allocationOverflow: {}, template: template() }, { FleetAllocationOverflow: false }, [
      'spec.allocationOverflow: Forbidden: Value cannot be set unless feature flag FleetAllocationOverflow is enabled',
    ]],
    ['allocationOverflow with FleetAllocationOverflow', { allocationOverflow: { labels: { a: '' }, annotations: { b: 'c' } }, template: template() }, {}, []],
  ])('reports %s', (_label, spec, gates, expected) => {
    expect(check(spec, gates)).toEqual(expected);
  });

  it('checks template metadata and allocationOverflow metadata', () => {
    const errs = check({
      template: { ...template(), metadata: { annotations: { 'bad key': 'v' } } },
      allocationOverflow: { annotations: { '/x': 'y' } },
    });
    expect(errs.map((e) => e.split(':')[0])).toEqual(['spec.template.metadata.annotations', 'spec.allocationOverflow.annotations']);
  });

  it('validates on update as on create', () => {
    const c = context();
    const current = defaultFleet(fleet({ template: template() }), c);
    const next = defaultFleet(fleet({ ...(current.spec as Json), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } }), c, current);
    expect(validateFleet(next, c, current).map(fieldErrorMessage)).toEqual([
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: 0: must be at least 1',
    ]);
  });

  it('limits the name to 63 characters', () => {
    expect(check({ template: template() }, {}, 'f'.repeat(64))).toEqual(['metadata.name: Too long: may not be more than 63 bytes']);
  });
});

describe('fleetSchema', () => {
  const report = (body: unknown): SchemaReport => schemaReport(body, fleetSchema);

  it.each<[string, Json, string]>([
    ['a bad strategy type', { strategy: { type: 'BlueGreen' } }, 'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "RollingUpdate", "Recreate"'],
    ['a float maxSurge', { strategy: { rollingUpdate: { maxSurge: 1.5 } } }, 'spec.strategy.rollingUpdate.maxSurge: Invalid value: 1.5: spec.strategy.rollingUpdate.maxSurge in body must be of type int-or-string: "number"'],
    ['negative replicas', { replicas: -3 }, 'spec.replicas: Invalid value: -3: spec.replicas in body should be greater than or equal to 0'],
    ['a non-string overflow label', { allocationOverflow: { labels: { a: 1 } } }, 'spec.allocationOverflow.labels.a: Invalid value: 1: spec.allocationOverflow.labels.a in body must be of type string: "integer"'],
  ])('rejects %s', (_label, spec, expected) => {
    expect(report({ spec }).errors.map(fieldErrorMessage)).toEqual([expected]);
  });

  it('reports unknown fields, and accepts the status the server writes', () => {
    expect(report({ spec: { replica: 1, strategy: { rollingUpdate: { maxSurges: 1 } } } }).unknown).toEqual([
      'spec.replica',
      'spec.strategy.rollingUpdate.maxSurges',
    ]);
    const status = { replicas: 2, readyReplicas: 1, reservedReplicas: 0, allocatedReplicas: 1, players: { count: 0, capacity: 0 }, lists: {} };
    expect(report({ status })).toEqual({ unknown: [], errors: [] });
    expect(report({ status: { shutdownReplicas: 0 } }).unknown).toEqual(['status.shutdownReplicas']);
  });
});
