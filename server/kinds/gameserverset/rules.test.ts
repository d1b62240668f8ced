import { describe, expect, it } from 'vitest';
import type { FeatureGates } from '../../features.js';
import type { SchemaReport } from '../../k8s/schema.js';
import { fieldErrorMessage } from '../../k8s/validation.js';
import type { Resource } from '../resource.js';
import { type Json, kindContext as context, schemaReport, storedResource } from '../../../test/helpers/kinds.js';
import { defaultGameServerSet, gameServerSetSchema, validateGameServerSet } from './rules.js';

function gameServerSet(spec: Json, name = 'set-1'): Resource {
  return storedResource('agones.dev/v1', 'GameServerSet', name, spec);
}

const template = (extra: Json = {}): Json => ({
  metadata: { labels: { game: 'x' } },
  spec: { ports: [{ containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'i' }] } }, ...extra },
});

function check(spec: Json, gates: Partial<FeatureGates> = {}, old?: Json, name?: string): string[] {
  const c = context(gates);
  const object = defaultGameServerSet(gameServerSet(spec, name), c);
  const previous = old && defaultGameServerSet(gameServerSet(old, name), c);
  return validateGameServerSet(object, c, previous).map(fieldErrorMessage);
}

describe('defaultGameServerSet', () => {
  it('applies no Agones defaults: scheduling comes from the fleet', () => {
    const spec = { replicas: 2, template: template() };
    expect(defaultGameServerSet(gameServerSet(spec), context()).spec).toEqual(spec);
  });

  it('applies the CRD defaults: priority order and template counters and lists', () => {
    const spec = {
      priorities: [{ type: 'Counter', key: 'rooms' }, { type: 'List', key: 'players', order: 'Descending' }],
      template: template({ counters: { rooms: {} }, lists: { players: { capacity: 5 } } }),
    };
    const defaulted = defaultGameServerSet(gameServerSet(spec), context()).spec as Json;
    expect(defaulted.priorities).toEqual([
      { type: 'Counter', key: 'rooms', order: 'Ascending' },
      { type: 'List', key: 'players', order: 'Descending' },
    ]);
    expect((defaulted.template as { spec: Json }).spec).toMatchObject({
      counters: { rooms: { count: 0, capacity: 1000 } },
      lists: { players: { capacity: 5, values: [] } },
    });
  });
});

describe('validateGameServerSet', () => {
  it('accepts a valid set', () => {
    expect(check({ replicas: 3, scheduling: 'Packed', template: template() })).toEqual([]);
  });

  it.each<[string, Json, Partial<FeatureGates>, string[]]>([
    ['a template spec error, at its template path', { template: template({ ports: [{ hostPort: 9 , containerPort: 1 }] }) }, {}, [
      'spec.template.spec.ports[0].hostPort: Forbidden: HostPort cannot be specified with a Dynamic or Passthrough PortPolicy',
    ]],
    ['template counters without CountsAndLists', { template: template({ counters: { a: {} } }) }, {}, [
      'spec.template.spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
    ]],
    ['priorities without CountsAndLists', { template: template(), priorities: [{ type: 'List', key: 'a' }] }, {}, [
      'spec.priorities: Forbidden: FeatureCountsAndLists is not enabled',
    ]],
    ['priorities with CountsAndLists', { template: template(), priorities: [{ type: 'List', key: 'a' }] }, { CountsAndLists: true }, []],
    ['allocationOverflow without FleetAllocationOverflow', { template: template(), allocationOverflow: { labels: { a: 'b' } } }, {
      FleetAllocationOverflow: false,
    }, ['spec.allocationOverflow: Forbidden: Value cannot be set unless feature flag FleetAllocationOverflow is enabled']],
  ])('reports %s', (_label, spec, gates, expected) => {
    expect(check(spec, gates)).toEqual(expected);
  });

  it('checks the template metadata and the overflow labels', () => {
    const errs = check({
      template: { ...template(), metadata: { labels: { 'a/b/c': 'x' } } },
      allocationOverflow: { labels: { ok: 'not ok!' } },
    });
    expect(errs).toHaveLength(2);
    expect(errs[0]).toMatch(/^spec\.template\.metadata\.labels: Invalid value: "a\/b\/c": a qualified name must consist of/);
    expect(errs[1]).toMatch(/^spec\.allocationOverflow\.labels: Invalid value: "not ok!": a valid label must be/);
  });

  it('limits the name to 63 characters', () => {
    expect(check({ template: template() }, {}, undefined, 'a'.repeat(64))).toEqual(['metadata.name: Too long: may not be more than 63 bytes']);
  });

  describe('on update', () => {
    it('forbids any template change', () => {
      const errs = check({ replicas: 1, template: template({ ports: [{ containerPort: 2 }] }) }, {}, { replicas: 1, template: template() });
      expect(errs).toHaveLength(1);
      expect(errs[0]).toMatch(/^spec\.template: Invalid value: \{.*\}: GameServerSet template cannot be updated$/);
    });

    it('lets replicas and scheduling change, and ignores key order', () => {
      const old = { replicas: 1, scheduling: 'Packed', template: template() };
      const reordered = { spec: template().spec, metadata: template().metadata };
      expect(check({ replicas: 5, scheduling: 'Distributed', template: reordered }, {}, old)).toEqual([]);
    });

    it('checks nothing else, as Agones', () => {
      const old = { template: template(), priorities: [{ type: 'List', key: 'a' }] };
      expect(check({ ...old, replicas: 2 }, {}, old)).toEqual([]);
    });
  });
});

describe('gameServerSetSchema', () => {
  const report = (body: unknown): SchemaReport => schemaReport(body, gameServerSetSchema);

  it('accepts a set with its status', () => {
    const body = {
      apiVersion: 'agones.dev/v1',
      kind: 'GameServerSet',
      metadata: { name: 's' },
      spec: { replicas: 1, scheduling: 'Packed', priorities: [{ type: 'Counter', key: 'k', order: 'Descending' }], template: template() },
      status: { replicas: 1, readyReplicas: 1, reservedReplicas: 0, allocatedReplicas: 0, shutdownReplicas: 0, counters: { k: { count: 1, capacity: 2, allocatedCount: 0, allocatedCapacity: 0 } } },
    };
    expect(report(body)).toEqual({ unknown: [], errors: [] });
  });

  it.each<[string, Json, string]>([
    ['negative replicas', { replicas: -1 }, 'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0'],
    ['a bad priority type', { priorities: [{ type: 'Map' }] }, 'spec.priorities[0].type: Unsupported value: "Map": supported values: "Counter", "List"'],
    ['a bad priority order', { priorities: [{ order: 'Up' }] }, 'spec.priorities[0].order: Unsupported value: "Up": supported values: "Ascending", "Descending"'],
    ['a bad scheduling', { scheduling: 'Spread' }, 'spec.scheduling: Unsupported value: "Spread": supported values: "Packed", "Distributed"'],
  ])('rejects %s', (_label, spec, expected) => {
    expect(report({ spec }).errors.map(fieldErrorMessage)).toEqual([expected]);
  });
});
