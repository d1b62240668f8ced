import type { Schema } from './schema.js';
import podSpecTypes from './pod-spec-types.json' with { type: 'json' };

/**
 * The schema of a Kubernetes PodSpec, as Agones's CRDs carry it in every pod template: each field
 * typed, unknown fields refused. Built from server/k8s/pod-spec-types.json, which
 * scripts/generate-pod-spec-types.mjs writes from @kubernetes/client-node's models (the notation
 * is described there).
 */

type FieldList = Array<[string, string]>;
// The JSON types as string[][]: the generator writes pairs.
const TYPES = podSpecTypes as unknown as Record<string, FieldList>;

const ROOT = 'V1PodSpec';

/** Everything below is built once: a named type is one object wherever it appears (a DAG, no $ref). */
let built: Schema | undefined;

export function podSpecSchema(): Schema {
  if (!built) {
    const named = new Map<string, Schema>();
    built = namedSchema(ROOT, named, []);
  }
  return built;
}

function namedSchema(name: string, named: Map<string, Schema>, stack: string[]): Schema {
  const done = named.get(name);
  if (done) return done;
  const fields = TYPES[name];
  if (!fields) throw new Error(`pod-spec-types.json has no type ${name}`);
  // A cycle would need a $ref, which the checker does not follow: refuse to build one.
  if (stack.includes(name)) throw new Error(`pod-spec-types.json: ${[...stack, name].join(' -> ')} is a cycle`);
  const properties: Record<string, Schema> = {};
  for (const [field, type] of fields) properties[field] = fieldSchema(type, named, [...stack, name]);
  const schema: Schema = { type: 'object', properties };
  named.set(name, schema);
  return schema;
}

// Leaves are shared too; nothing mutates a schema after it is built.
const LEAVES: Record<string, Schema> = {
  string: { type: 'string' },
  byte: { type: 'string', format: 'byte' },
  boolean: { type: 'boolean' },
  number: { type: 'number' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  'date-time': { type: 'string', format: 'date-time' },
  'int-or-string': { 'x-kubernetes-int-or-string': true },
  // A resource.Quantity: clients send `cpu: 1` as well as `memory: 64Mi`.
  quantity: { 'x-kubernetes-int-or-string': true },
  any: { 'x-kubernetes-preserve-unknown-fields': true },
};

function fieldSchema(type: string, named: Map<string, Schema>, stack: string[]): Schema {
  if (type.startsWith('[]')) return { type: 'array', items: fieldSchema(type.slice(2), named, stack) };
  if (type.startsWith('{}')) return { type: 'object', additionalProperties: fieldSchema(type.slice(2), named, stack) };
  return LEAVES[type] ?? namedSchema(type, named, stack);
}
