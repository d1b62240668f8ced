import { FEATURE_DEFAULTS, type FeatureGates } from '../../server/features.js';
import { type Schema, type SchemaReport, checkSchema } from '../../server/k8s/schema.js';
import type { KindContext } from '../../server/kinds/registry.js';
import type { Resource } from '../../server/kinds/resource.js';

export type Json = Record<string, unknown>;

/** The context a kind's default/validate hooks get: the default gates with `gates` on top. */
export function kindContext(gates: Partial<FeatureGates> = {}, now = 0): KindContext {
  return { gates: { ...FEATURE_DEFAULTS, ...gates }, now };
}

/** A stored object of any kind, with the metadata the server would have given it. */
export function storedResource(apiVersion: string, kind: string, name: string, spec: Json): Resource {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      namespace: 'default',
      uid: 'uid-1',
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {},
      annotations: {},
    },
    spec,
  };
}

/** What the structural schema check reports for `body`. */
export function schemaReport(body: unknown, schema: Schema): SchemaReport {
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(body, schema, '', report);
  return report;
}
