import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FEATURE_DEFAULTS, type FeatureGate } from '../features.js';
import { type SchemaReport, checkSchema } from '../k8s/schema.js';
import { fieldErrorMessage } from '../k8s/validation.js';
import { KIND_DEFINITIONS, definitionOfKind } from './definitions.js';
import type { KindContext, KindDefinition } from './registry.js';
import type { Resource } from './resource.js';

/**
 * The project's own example manifests (`examples/`) and every Fleet, GameServer and
 * FleetAutoscaler example Agones ships must pass the schema, the defaults and the validation,
 * with the feature gates they need; and fail on exactly those gates without them. Agones's
 * manifests are read from the shared reference folder beside the repository, never copied here;
 * a clone without that folder skips them and says so.
 */

const PROJECT_EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const UPSTREAM_EXAMPLES = fileURLToPath(new URL('../../../shared/reference/agones/examples/', import.meta.url));
const HAVE_UPSTREAM = existsSync(UPSTREAM_EXAMPLES);
if (!HAVE_UPSTREAM) {
  console.warn(`Agones's upstream example manifests are not at ${UPSTREAM_EXAMPLES}: their tests are skipped (the project's own examples/ are still checked).`);
}
const NOW = Date.parse('2026-06-01T00:00:00Z');

/** The gates each upstream example needs beyond the defaults, and the errors it gives without them. */
const UPSTREAM_NEEDS: Record<string, { gates: FeatureGate[]; without: string[] }> = {
  'fleet.yaml': {
    gates: ['CountsAndLists'],
    without: [
      'spec.template.spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.template.spec.lists: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.priorities: Forbidden: FeatureCountsAndLists is not enabled',
    ],
  },
  'gameserver.yaml': {
    gates: ['CountsAndLists'],
    without: [
      'spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.lists: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
    ],
  },
  'counterfleetautoscaler.yaml': { gates: ['CountsAndLists'], without: ['spec.policy.counter: Forbidden: feature CountsAndLists must be enabled'] },
  'listfleetautoscaler.yaml': { gates: ['CountsAndLists'], without: ['spec.policy.list: Forbidden: feature CountsAndLists must be enabled'] },
  // chainfleetautoscaler.yaml schedules a Counter policy, but a scheduled policy is left unchecked
  // (as Agones leaves it), so it validates with the default gates.
  'wasmfleetautoscaler.yaml': { gates: ['WasmAutoscaler'], without: ['spec.policy.wasm: Forbidden: feature WasmAutoscaler must be enabled'] },
};

function context(gates: FeatureGate[]): KindContext {
  const all = { ...FEATURE_DEFAULTS } as Record<FeatureGate, boolean>;
  for (const gate of gates) all[gate] = true;
  return { gates: all, now: NOW };
}

interface Example {
  file: string;
  body: Record<string, unknown>;
  definition: KindDefinition;
}

/** A throwaway self-signed CA certificate (base64 PEM), generated for these tests. */
const TEST_CA_BUNDLE =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJpekNDQVRHZ0F3SUJBZ0lVSi9oVCt0Z3Y4MGI4YmU0cVBxeENWSE1mb1VNd0NnWUlLb1pJemowRUF3SXcKR3pFWk1CY0dBMVVFQXd3UVpteGxaWFJ6YVcwdGRHVnpkQzFqWVRBZUZ3MHlOakV4TWpJd05UUTNNVGhhRncwegpOakV4TVRrd05UUTNNVGhhTUJzeEdUQVhCZ05WQkFNTUVHWnNaV1YwYzJsdExYUmxjM1F0WTJFd1dUQVRCZ2NxCmhrak9QUUlCQmdncWhrak9QUU1CQndOQ0FBVDg1ckRVZnJWeEsvZEQwdmFqQ2hmRTZhRU8zYVMrVklUOWVjZ20KVEllT0paRzdjd0xYY2lRQ3FFTmx4UFo5RnB5V2NLVlpWZGxKYVhWUDd0RlBUeEovbzFNd1VUQWRCZ05WSFE0RQpGZ1FVQ2UzdDd3UG9JRTh0R045NjQzL1lsYnlHek9zd0h3WURWUjBqQkJnd0ZvQVVDZTN0N3dQb0lFOHRHTjk2CjQzL1lsYnlHek9zd0R3WURWUjBUQVFIL0JBVXdBd0VCL3pBS0JnZ3Foa2pPUFFRREFnTklBREJGQWlBU0lqQjQKbVd1TXNyVTRzSitqNnVnTDlXVEhJUGp5Uys0cGlobVhMSldDQndJaEFMazVUTUh1eXJobDNIZUlIcnpRdTB3RApHUllkRk80anR4Ky9hMW1uKzc5NgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==';

function loadExamples(folder: string): Example[] {
  const examples: Example[] = [];
  // Worked examples keep their manifests in a folder of their own (examples/local-game/).
  const files = readdirSync(folder, { recursive: true }).map(String);
  for (const file of files.filter((f) => f.endsWith('.yaml')).sort()) {
    // Some examples are templates (`caBundle: $CA_BUNDLE`): fill the placeholder with a valid value.
    const text = readFileSync(`${folder}${file}`, 'utf8').replace('$CA_BUNDLE', TEST_CA_BUNDLE);
    for (const doc of parseAllDocuments(text)) {
      const body = doc.toJS() as Record<string, unknown> | null;
      const definition = body && definitionOfKind(String(body.kind));
      // GameServerAllocation is not a stored kind; its rules live in server/allocation.
      if (body && definition && definition.kind !== 'GameServerAllocation') examples.push({ file, body, definition });
    }
  }
  return examples;
}

/** What the resource service does with a create body: schema, metadata, defaults, validation. */
function create(example: Example, gates: FeatureGate[], old?: Resource): { report: SchemaReport; object: Resource; errors: string[] } {
  const c = context(gates);
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(example.body, example.definition.schema, '', report);
  const metadata = (example.body.metadata ?? {}) as Record<string, unknown>;
  let object = {
    ...example.body,
    metadata: { uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', labels: {}, annotations: {}, ...metadata, namespace: 'default' },
  } as Resource;
  if (example.definition.subresources.status) delete object.status;
  if (example.definition.defaults) object = example.definition.defaults(object, c, old);
  const errors = (example.definition.validate?.(object, c, old) ?? []).map(fieldErrorMessage);
  return { report, object, errors };
}

/** The checks every example gets: schema, validation, validation as an update, its gates. */
function checkExamples(examples: Example[], needsOf: (file: string) => { gates: FeatureGate[]; without: string[] }): void {
  describe.each(examples.map((e) => [`${e.file} (${e.definition.kind} ${String((e.body.metadata as { name?: string } | undefined)?.name)})`, e] as const))('%s', (_, example) => {
    const needs = needsOf(example.file);

    it('passes the schema, with no unknown field', () => {
      expect(create(example, needs.gates).report).toEqual({ unknown: [], errors: [] });
    });

    it(`validates with ${needs.gates.length ? needs.gates.join(', ') : 'the default gates'}`, () => {
      expect(create(example, needs.gates).errors).toEqual([]);
    });

    it('validates again as an update of itself', () => {
      const created = create(example, needs.gates).object;
      expect(create(example, needs.gates, created).errors).toEqual([]);
    });

    it.skipIf(needs.gates.length === 0)('fails on exactly its gates without them', () => {
      expect(create(example, []).errors).toEqual(needs.without);
    });
  });
}

/** The gates each of the project's examples needs, and the errors it gives without them. */
const PROJECT_NEEDS: Record<string, { gates: FeatureGate[]; without: string[] }> = {
  'fleet-counters-lists.yaml': {
    gates: ['CountsAndLists'],
    without: [
      'spec.template.spec.counters: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.template.spec.lists: Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled',
      'spec.priorities: Forbidden: FeatureCountsAndLists is not enabled',
    ],
  },
  'fleetautoscaler-counter.yaml': { gates: ['CountsAndLists'], without: ['spec.policy.counter: Forbidden: feature CountsAndLists must be enabled'] },
  'fleetautoscaler-list.yaml': { gates: ['CountsAndLists'], without: ['spec.policy.list: Forbidden: feature CountsAndLists must be enabled'] },
};

describe("the project's example manifests (examples/)", () => {
  const examples = loadExamples(PROJECT_EXAMPLES);

  it('cover every stored kind a user starts with, and each autoscaler policy', () => {
    expect(new Set(examples.map((e) => e.definition.kind))).toEqual(new Set(['Fleet', 'GameServer', 'FleetAutoscaler', 'GameServerAllocationPolicy']));
    const policies = examples.filter((e) => e.definition.kind === 'FleetAutoscaler').map((e) => (e.body.spec as { policy: { type: string } }).policy.type);
    expect(policies.sort()).toEqual(['Buffer', 'Buffer', 'Chain', 'Counter', 'List', 'Webhook']);
  });

  checkExamples(examples, (file) => PROJECT_NEEDS[file] ?? { gates: [], without: [] });
});

describe.skipIf(!HAVE_UPSTREAM)(`Agones's upstream example manifests (only when ${UPSTREAM_EXAMPLES} exists)`, () => {
  const examples = HAVE_UPSTREAM ? loadExamples(UPSTREAM_EXAMPLES) : [];

  it('cover the kinds this module serves', () => {
    expect(new Set(examples.map((e) => e.definition.kind))).toEqual(new Set(['Fleet', 'GameServer', 'FleetAutoscaler']));
  });

  checkExamples(examples, (file) => UPSTREAM_NEEDS[file] ?? { gates: [], without: [] });
});

describe('the kind definitions', () => {
  it('carry the rules of every Agones kind, with no open placeholder schema', () => {
    for (const kind of ['GameServer', 'GameServerSet', 'Fleet', 'FleetAutoscaler', 'GameServerAllocationPolicy']) {
      const definition = KIND_DEFINITIONS.find((d) => d.kind === kind)!;
      expect(definition.validate, kind).toBeTypeOf('function');
      const spec = definition.schema.properties?.spec;
      expect(spec?.['x-kubernetes-preserve-unknown-fields'], kind).toBeUndefined();
      expect(spec?.properties, kind).toBeDefined();
      expect(spec?.description, kind).toBeTruthy();
      // Published to kubectl: every field of the spec explains itself.
      for (const [name, field] of Object.entries(spec?.properties ?? {})) expect(field.description, `${kind} spec.${name}`).toBeTruthy();
    }
  });

  it('accept a GameServerAllocationPolicy for a remote and for the local cluster', () => {
    const definition = definitionOfKind('GameServerAllocationPolicy')!;
    for (const spec of [
      { priority: 1, weight: 50, connectionInfo: { allocationEndpoints: ['192.0.2.7'], clusterName: 'east', namespace: 'games', secretName: 'east-tls' } },
      { priority: 2, weight: 1, connectionInfo: { namespace: 'default' } },
    ]) {
      const body = { apiVersion: 'multicluster.agones.dev/v1', kind: 'GameServerAllocationPolicy', metadata: { name: 'p' }, spec };
      const { report, errors } = create({ file: '', body, definition }, []);
      expect(report).toEqual({ unknown: [], errors: [] });
      expect(errors).toEqual([]);
    }
  });
});
