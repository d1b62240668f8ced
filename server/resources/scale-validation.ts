import type { KindDefinition } from '../kinds/registry.js';
import { isJsonObject } from '../kinds/common.js';
import { type FieldError, invalid } from '../k8s/validation.js';

const INT32_MAX = 2147483647;

/**
 * The API server's own check of a custom resource's scale subresource paths, which it makes beside
 * the CRD's schema (apiextensions' ValidateScaleSpec and ValidateScaleStatus): the value at
 * `.spec.replicas` (or `.status.replicas`) must be an integer from 0 to the int32 maximum. Its
 * causes name the path as the CRD writes it, leading dot included, and come after the schema's.
 */
export function scaleErrors(definition: KindDefinition, object: unknown, part: 'spec' | 'status'): FieldError[] {
  const scale = definition.subresources.scale;
  if (!definition.customResource || !scale) return [];
  const path = part === 'spec' ? scale.specReplicasPath : scale.statusReplicasPath;
  const fields = path.replace(/^\./, '').split('.');
  let value: unknown = object;
  for (const field of fields) value = isJsonObject(value) ? value[field] : undefined;
  // Absent (or null) is no error: the path reads as 0.
  if (value === undefined || value === null) return [];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    return [invalid(path, 0, `.${fields.join('.')} accessor error: ${goValue(value)} is of the type ${goType(value)}, expected int64`)];
  }
  if (value < 0) return [invalid(path, value, 'should be a non-negative integer')];
  if (value > INT32_MAX) return [invalid(path, value, `should be less than or equal to ${INT32_MAX}`)];
  return [];
}

/** A decoded JSON value as Go's %v prints it (the parts a replicas field can hold). */
function goValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (isJsonObject(value)) return `map[${Object.keys(value).sort().map((key) => `${key}:${goValue(value[key])}`).join(' ')}]`;
  return String(value);
}

/** A decoded JSON value's Go type (%T), as encoding/json decodes into interface{}. */
function goType(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  return 'map[string]interface {}';
}
