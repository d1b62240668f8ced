import { describe, expect, it } from 'vitest';
import type { SchemaReport } from '../../k8s/schema.js';
import { fieldErrorMessage } from '../../k8s/validation.js';
import type { Resource } from '../resource.js';
import { type Json, kindContext, schemaReport, storedResource } from '../../../test/helpers/kinds.js';
import { gameServerAllocationPolicySchema, validateGameServerAllocationPolicy } from './rules.js';

const context = kindContext();

function policy(spec: Json): Resource {
  return storedResource('multicluster.agones.dev/v1', 'GameServerAllocationPolicy', 'to-west', spec);
}

function schemaErrors(body: unknown): SchemaReport {
  return schemaReport(body, gameServerAllocationPolicySchema);
}

const remote: Json = {
  priority: 0,
  weight: 10,
  connectionInfo: {
    clusterName: 'west',
    allocationEndpoints: ['10.1.2.3', 'allocator.west.example:8443'],
    secretName: 'west-client',
    namespace: 'games',
    serverCa: Buffer.from('ca').toString('base64'),
  },
};

describe('GameServerAllocationPolicy', () => {
  it('accepts remote and local policies', () => {
    for (const spec of [remote, { priority: 3, weight: 0, connectionInfo: { namespace: 'default' } }]) {
      expect(schemaErrors({ spec })).toEqual({ unknown: [], errors: [] });
      expect(validateGameServerAllocationPolicy(policy(spec), context)).toEqual([]);
    }
  });

  it.each<[string, Json, string[]]>([
    ['priority and weight missing', { connectionInfo: { namespace: 'a' } }, ['spec.priority: Required value', 'spec.weight: Required value']],
    ['a negative priority', { ...remote, priority: -1 }, ['spec.priority: Invalid value: -1: spec.priority in body should be greater than or equal to 0']],
    ['a negative weight', { ...remote, weight: -5 }, ['spec.weight: Invalid value: -5: spec.weight in body should be greater than or equal to 0']],
    ['no namespace', { ...remote, connectionInfo: { clusterName: 'x' } }, ['spec.connectionInfo.namespace: Required value']],
  ])('schema: %s', (_label, spec, expected) => {
    expect(schemaErrors({ spec }).errors.map(fieldErrorMessage)).toEqual(expected);
  });

  it('rejects a status and unknown fields', () => {
    expect(schemaErrors({ spec: { ...remote, extra: 1 }, status: {} }).unknown).toEqual(['spec.extra', 'status']);
  });

  it.each<[string, Json, string[]]>([
    ['no connectionInfo', { priority: 0, weight: 1 }, ['spec.connectionInfo.namespace: Required value']],
    ['an empty endpoint list', { priority: 0, weight: 1, connectionInfo: { namespace: 'a', allocationEndpoints: [] } }, [
      'spec.connectionInfo.allocationEndpoints: Invalid value: []: spec.connectionInfo.allocationEndpoints in body should have at least 1 items',
    ]],
  ])('validation: %s', (_label, spec, expected) => {
    expect(validateGameServerAllocationPolicy(policy(spec), context).map(fieldErrorMessage)).toEqual(expected);
  });
});
