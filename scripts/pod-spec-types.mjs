// @ts-check
// The Kubernetes PodSpec structure, read from @kubernetes/client-node's generated models, in the
// compact notation of server/k8s/pod-spec-types.json (read by server/k8s/pod-spec-schema.ts):
//
//   { "<TypeName>": [["<jsonName>", "<type>"], ...], ... }   types reachable from V1PodSpec
//
// where <type> is one of: string, boolean, number, int32, int64, date-time, byte,
// int-or-string, quantity (a resource.Quantity: a number or a string), any, a type name,
// "[]<type>" (array) or "{}<type>" (map with string keys).
//
// Shared by scripts/generate-pod-spec-types.mjs (writes the file) and the unit test (checks the
// committed file is what the library gives now).
import * as k8s from '@kubernetes/client-node';

export const ROOT = 'V1PodSpec';

/**
 * Fields Kubernetes types as resource.Quantity (alone or in a ResourceList) that client-node
 * types as plain strings: clients send `cpu: 1`, so they take numbers too. From the Go types
 * (k8s.io/api/core/v1), limited to those reachable from PodSpec.
 */
export const QUANTITY_FIELDS = {
  V1ResourceRequirements: ['limits', 'requests'],
  V1VolumeResourceRequirements: ['limits', 'requests'],
  V1PodSpec: ['overhead'],
  V1EmptyDirVolumeSource: ['sizeLimit'],
  V1ResourceFieldSelector: ['divisor'],
};

const ARRAY = /^Array<(.+)>$/;
const MAP = /^\{ \[key: string\]: (.+); \}$/;

/**
 * @param {string} type client-node's type expression
 * @param {string} format its OpenAPI format
 * @param {boolean} quantity whether the field is a resource.Quantity
 * @param {(name: string) => void} visit called with each model type named
 * @returns {string}
 */
function notation(type, format, quantity, visit) {
  const array = ARRAY.exec(type);
  if (array) return `[]${notation(array[1], format, quantity, visit)}`;
  const map = MAP.exec(type);
  if (map) return `{}${notation(map[1], format, quantity, visit)}`;
  if (quantity) {
    if (type !== 'string') throw new Error(`a quantity field typed ${type}`);
    return 'quantity';
  }
  switch (type) {
    case 'string':
      return format === 'byte' ? 'byte' : 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return format === 'int32' || format === 'int64' ? format : 'number';
    case 'Date':
      return 'date-time';
    case 'IntOrString':
      return 'int-or-string';
    case 'any':
      return 'any';
    default:
      if (format === 'int-or-string') return 'int-or-string';
      if (!(type in k8s) || typeof (/** @type {any} */ (k8s)[type])?.getAttributeTypeMap !== 'function') {
        throw new Error(`unknown client-node type ${type}`);
      }
      visit(type);
      return type;
  }
}

/** @returns {Record<string, Array<[string, string]>>} the types reachable from V1PodSpec, sorted by name */
export function podSpecTypes() {
  /** @type {Record<string, Array<[string, string]>>} */
  const types = {};
  const pending = [ROOT];
  const seen = new Set(pending);
  while (pending.length > 0) {
    const name = /** @type {string} */ (pending.pop());
    /** @type {Array<{ baseName: string, type: string, format: string }>} */
    const attributes = /** @type {any} */ (k8s)[name].getAttributeTypeMap();
    const quantities = /** @type {Record<string, string[]>} */ (QUANTITY_FIELDS)[name] ?? [];
    for (const field of quantities) {
      if (!attributes.some((a) => a.baseName === field)) throw new Error(`${name} has no field ${field}`);
    }
    types[name] = attributes.map((a) => [
      a.baseName,
      notation(a.type, a.format, quantities.includes(a.baseName), (child) => {
        if (!seen.has(child)) {
          seen.add(child);
          pending.push(child);
        }
      }),
    ]);
  }
  return Object.fromEntries(Object.entries(types).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The file's text: one type a line, so a regenerated file diffs by type.
 * @param {Record<string, Array<[string, string]>>} types
 */
export function formatPodSpecTypes(types) {
  const lines = Object.entries(types).map(([name, fields]) => `  ${JSON.stringify(name)}: ${JSON.stringify(fields)}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}
