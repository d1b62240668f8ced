import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatPodSpecTypes, podSpecTypes } from '../../scripts/pod-spec-types.mjs';
import { podSpecSchema } from './pod-spec-schema.js';
import { type Schema, type SchemaReport, checkSchema, pruneUnknown } from './schema.js';

const spec = podSpecSchema();
const at = (schema: Schema, ...path: string[]): Schema =>
  path.reduce<Schema>((s, key) => {
    const next = key === '[]' ? s.items : key === '{}' ? (s.additionalProperties as Schema) : s.properties?.[key];
    if (!next) throw new Error(`no ${key} in ${JSON.stringify(Object.keys(s.properties ?? {}))}`);
    return next;
  }, schema);
const check = (value: unknown): SchemaReport => {
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(value, spec, 'spec', report);
  return report;
};

describe('the PodSpec schema built from pod-spec-types.json', () => {
  it('types fields as Kubernetes does', () => {
    expect(at(spec, 'terminationGracePeriodSeconds')).toEqual({ type: 'integer', format: 'int64' });
    expect(at(spec, 'containers', '[]', 'ports', '[]', 'containerPort')).toEqual({ type: 'integer', format: 'int32' });
    expect(at(spec, 'hostNetwork')).toEqual({ type: 'boolean' });
    expect(at(spec, 'nodeSelector')).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(at(spec, 'affinity', 'nodeAffinity', 'preferredDuringSchedulingIgnoredDuringExecution').type).toBe('array');
    expect(at(spec, 'containers', '[]', 'livenessProbe', 'httpGet', 'port')).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(at(spec, 'volumes', '[]', 'ephemeral', 'volumeClaimTemplate', 'metadata', 'creationTimestamp')).toEqual({ type: 'string', format: 'date-time' });
    expect(at(spec, 'volumes', '[]', 'ephemeral', 'volumeClaimTemplate', 'metadata', 'managedFields', '[]', 'fieldsV1')).toEqual({
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(spec['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
  });

  it('takes resource quantities as numbers or strings', () => {
    const quantities = [
      at(spec, 'containers', '[]', 'resources', 'limits', '{}'),
      at(spec, 'containers', '[]', 'resources', 'requests', '{}'),
      at(spec, 'overhead', '{}'),
      at(spec, 'volumes', '[]', 'emptyDir', 'sizeLimit'),
      at(spec, 'volumes', '[]', 'ephemeral', 'volumeClaimTemplate', 'spec', 'resources', 'requests', '{}'),
      at(spec, 'containers', '[]', 'env', '[]', 'valueFrom', 'resourceFieldRef', 'divisor'),
    ];
    for (const q of quantities) expect(q).toEqual({ 'x-kubernetes-int-or-string': true });
    const report = check({ containers: [{ name: 'a', resources: { requests: { cpu: 1, memory: '64Mi' }, limits: { cpu: '500m' } } }] });
    expect(report).toEqual({ unknown: [], errors: [] });
  });

  it('builds each named type once: the schema is a DAG of shared objects', () => {
    expect(podSpecSchema()).toBe(spec);
    expect(at(spec, 'initContainers', '[]')).toBe(at(spec, 'containers', '[]'));
    expect(at(spec, 'containers', '[]', 'readinessProbe')).toBe(at(spec, 'containers', '[]', 'livenessProbe'));
    expect(at(spec, 'affinity', 'podAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', '[]', 'labelSelector')).toBe(
      at(spec, 'topologySpreadConstraints', '[]', 'labelSelector'),
    );
  });

  it('refuses mistyped fields and reports unknown ones with their paths', () => {
    const report = check({
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: 'ERROR' } },
      containers: [{ name: 'a', image: 'b', ports: [{ containerPort: '80' }] }],
      nodeSelecter: { a: 'b' },
    });
    expect(report.unknown).toEqual(['spec.nodeSelecter']);
    expect(report.errors.map((e) => e.field)).toEqual([
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution',
      'spec.containers[0].ports[0].containerPort',
    ]);
    expect(pruneUnknown({ nodeSelecter: {}, restartPolicy: 'Never' }, spec)).toEqual({ restartPolicy: 'Never' });
  });

  it('pod-spec-types.json is what the generator makes of @kubernetes/client-node now (npm run generate:pod-spec)', () => {
    const committed = readFileSync(new URL('./pod-spec-types.json', import.meta.url), 'utf8');
    expect(committed).toBe(formatPodSpecTypes(podSpecTypes()));
  });
});
