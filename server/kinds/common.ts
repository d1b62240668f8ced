import { OBJECT_META_SCHEMA, type Schema } from '../k8s/schema.js';
import {
  type FieldError,
  byteLength,
  forbidden,
  tooLong,
  validateAnnotations,
  validateLabels,
} from '../k8s/validation.js';
import type { FeatureGate } from '../features.js';
import { FLEETSIM_ANNOTATION_PREFIX } from './agones.js';
import type { Int64 } from '../int64.js';
import type { ObjectMeta } from './meta.js';

/**
 * Pieces shared by the rules of several kinds: reading untyped JSON safely, the schema fragments
 * that recur (maps, int-or-string, priorities, allocation overflow) and the checks Agones runs for
 * every kind (name length, metadata, feature gates).
 */

export type Json = Record<string, unknown>;

export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as an object, or undefined (absent, null or another type). */
export function objectAt(value: unknown): Json | undefined {
  return isJsonObject(value) ? value : undefined;
}

export function arrayAt(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

export function stringAt(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A number as Go would hold it: absent or mistyped means zero. */
export function intAt(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** An int64 field, exact (a bigint past 2^53, see server/kinds/int64.ts); 0 when not an integer. */
export function int64At(value: unknown): Int64 {
  return typeof value === 'bigint' ? value : intAt(value);
}

/** Go's "pointer is non-nil": the field is present and not null. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The string entries of a map (the schema has rejected anything else already). */
export function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(objectAt(value) ?? {})) if (typeof item === 'string') out[key] = item;
  return out;
}

/**
 * Equality of JSON values regardless of key order; a key holding undefined counts as absent.
 * The one structural equality of the project: label maps on the allocation path use it too, so
 * it allocates nothing.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Unequal scalars end here, before the array and object checks (label values are all scalars).
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const x = a as Json;
  const y = b as Json;
  // Every key a defines must match in b; then b may define no more keys than a. for…in, not
  // Object.keys: a JSON object inherits no enumerable key, and the key lists were allocations.
  let defined = 0;
  for (const key in x) {
    const value = x[key];
    if (value === undefined) continue;
    const other = y[key];
    if (value !== other && !jsonEqual(value, other)) return false;
    defined++;
  }
  for (const key in y) if (y[key] !== undefined) defined--;
  return defined === 0;
}

// ---------------------------------------------------------------------------------------------
// Go zero values (clients built on Agones's Go types).

/** A path into a JSON object: property names, `*` for every item of an array or entry of a map. */
export type FieldPath = readonly string[];

function isZero(value: unknown): boolean {
  return value === '' || value === 0;
}

/**
 * Clients built on Agones's Go types send the fields that have no `omitempty` as their zero value
 * (`scheduling: ""`, `status.state: ""`, `health.periodSeconds: 0`); Agones's defaulting webhook
 * reads those as unset. Removes a zero value at each path, so the defaults that follow fill it in;
 * on an update (`old` given) the value the object already has at that path is kept instead, as the
 * client never meant to change it. Returns `value` itself when nothing is zero.
 */
export function unsetZeroValues(value: Json, paths: readonly FieldPath[], old?: unknown): Json {
  let out = value;
  for (const path of paths) out = unsetAt(out, objectAt(old), path, 0) as Json;
  return out;
}

function unsetAt(node: unknown, old: unknown, path: FieldPath, depth: number): unknown {
  const key = path[depth]!;
  if (key === '*') {
    if (Array.isArray(node)) {
      const olds = arrayAt(old);
      let changed = false;
      const items = node.map((item, i) => {
        const next = unsetAt(item, olds?.[i], path, depth + 1);
        changed ||= next !== item;
        return next;
      });
      return changed ? items : node;
    }
    const map = objectAt(node);
    if (!map) return node;
    let out: Json | undefined;
    for (const [name, item] of Object.entries(map)) {
      const next = unsetAt(item, objectAt(old)?.[name], path, depth + 1);
      if (next !== item) (out ??= { ...map })[name] = next;
    }
    return out ?? node;
  }
  const object = objectAt(node);
  if (!object || !(key in object)) return node;
  const previous = objectAt(old)?.[key];
  if (depth === path.length - 1) {
    if (!isZero(object[key])) return node;
    const out = { ...object };
    if (isSet(previous) && !isZero(previous)) out[key] = previous;
    else delete out[key];
    return out;
  }
  const next = unsetAt(object[key], previous, path, depth + 1);
  return next === object[key] ? node : { ...object, [key]: next };
}

/** The same paths below `prefix` (a template's spec inside a set's spec, for example). */
export function pathsUnder(prefix: FieldPath, paths: readonly FieldPath[]): FieldPath[] {
  return paths.map((path) => [...prefix, ...path]);
}

// ---------------------------------------------------------------------------------------------
// Int-or-string values (bufferSize, maxSurge, maxUnavailable).

export type IntOrPercent = { kind: 'int'; value: Int64 } | { kind: 'percent'; text: string; value: number | undefined };

/**
 * Reads an int-or-string as Agones does: a number is absolute; a string must be `<int>%` (Go's
 * Atoi after the `%` is cut, so a sign and leading zeros are accepted), else `value` is undefined.
 */
export function parseIntOrPercent(raw: unknown): IntOrPercent {
  if (typeof raw === 'number' || typeof raw === 'bigint') return { kind: 'int', value: raw };
  const text = typeof raw === 'string' ? raw : '';
  const match = /^([+-]?\d+)%$/.exec(text);
  return { kind: 'percent', text, value: match ? Number(match[1]) : undefined };
}

// ---------------------------------------------------------------------------------------------
// Checks common to Agones's kinds.

/** Agones keeps Fleet, GameServerSet and GameServer names short enough to be label values. */
export const AGONES_NAME_MAX_LENGTH = 63;

export function validateName(metadata: unknown): FieldError[] {
  const name = stringAt(objectAt(metadata)?.name);
  return byteLength(name) > AGONES_NAME_MAX_LENGTH ? [tooLong('metadata.name', name, AGONES_NAME_MAX_LENGTH)] : [];
}

/** Labels and annotations of an embedded ObjectMeta (a template's), at `<path>.labels|annotations`. */
export function validateObjectMeta(metadata: unknown, path: string): FieldError[] {
  const meta = objectAt(metadata);
  return [
    ...validateLabels(stringMap(meta?.labels), `${path}.labels`),
    ...validateAnnotations(stringMap(meta?.annotations), `${path}.annotations`),
  ];
}

/** What an update may not change in an object's metadata: no finalizer may be added to one being deleted. */
export function validateObjectMetaUpdate(metadata: ObjectMeta, old: ObjectMeta, path: string): FieldError[] {
  if (old.deletionTimestamp === undefined) return [];
  const added = [...new Set(metadata.finalizers ?? [])].filter((f) => !(old.finalizers ?? []).includes(f)).sort();
  if (added.length === 0) return [];
  const found = `[]string{${added.map((f) => JSON.stringify(f)).join(', ')}}`;
  return [forbidden(`${path}.finalizers`, `no new finalizers can be added if the object is being deleted, found new finalizers ${found}`)];
}

/** The wording Agones uses for a field whose feature gate is off. */
export function gateForbidden(path: string, gate: FeatureGate): FieldError {
  return forbidden(path, `Value cannot be set unless feature flag ${gate} is enabled`);
}

/**
 * A Forbidden error for each fleetsim annotation (`fleetsim.dev/…`) that differs between `next`
 * and `previous` (annotation maps; `previous` undefined where nothing may set one): they are fixed
 * when the GameServer is created, so no update, allocation or allocationOverflow adds, changes or
 * removes one.
 */
export function fixedAnnotationErrors(next: unknown, previous: unknown, path: string): FieldError[] {
  const after = stringMap(next);
  const before = stringMap(previous);
  const keys = new Set([...Object.keys(after), ...Object.keys(before)].filter((key) => key.startsWith(FLEETSIM_ANNOTATION_PREFIX)));
  return [...keys]
    .filter((key) => after[key] !== before[key])
    .sort()
    .map((key) =>
      forbidden(
        `${path}[${key}]`,
        `${FLEETSIM_ANNOTATION_PREFIX} annotations are fixed when the GameServer is created (from its template, as a pod's command is): they may not be added, changed or removed later`,
      ),
    );
}

/** Labels and annotations a set puts on its Allocated GameServers beyond its replicas (sets' and fleets' spec). */
export interface AllocationOverflow {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** allocationOverflow: gated (FleetAllocationOverflow), labels and annotations as Kubernetes checks them. */
export function validateAllocationOverflow(value: unknown, path: string, gates: Readonly<Record<FeatureGate, boolean>>): FieldError[] {
  if (!isSet(value)) return [];
  if (!gates.FleetAllocationOverflow) return [gateForbidden(path, 'FleetAllocationOverflow')];
  return [...validateObjectMeta(value, path), ...fixedAnnotationErrors(objectAt(value)?.annotations, undefined, `${path}.annotations`)];
}

/** Fleet and GameServerSet priorities need CountsAndLists; Agones words this one differently. */
export function validatePriorities(value: unknown, path: string, gates: Readonly<Record<FeatureGate, boolean>>): FieldError[] {
  if (!isSet(value) || gates.CountsAndLists) return [];
  return [forbidden(path, 'FeatureCountsAndLists is not enabled')];
}

// ---------------------------------------------------------------------------------------------
// Schema fragments.

export const INT32_MAX = 2147483647;

export const STRING_MAP_SCHEMA: Schema = { type: 'object', additionalProperties: { type: 'string' } };

/**
 * A count of replicas as Agones's CRDs declare it (an integer from 0, without format or maximum):
 * its int32 range is the scale subresource's check, not the schema's.
 */
export function replicaCount(description: string): Schema {
  return { type: 'integer', minimum: 0, description };
}

export function int32(minimum?: number, maximum = INT32_MAX, description?: string): Schema {
  return { type: 'integer', format: 'int32', ...(minimum !== undefined && { minimum }), maximum, ...(description && { description }) };
}

export function int64(minimum?: number, description?: string): Schema {
  return { type: 'integer', format: 'int64', ...(minimum !== undefined && { minimum }), ...(description && { description }) };
}

export function intOrString(description?: string): Schema {
  return { 'x-kubernetes-int-or-string': true, ...(description && { description }) };
}

export const SCHEDULING_SCHEMA: Schema = {
  type: 'string',
  enum: ['Packed', 'Distributed'],
  description: 'Packed (default) fills few nodes first; Distributed spreads GameServers over nodes.',
};

/** Metadata of an embedded template (name, labels, annotations…), as a full ObjectMeta. */
export const TEMPLATE_METADATA_SCHEMA: Schema = { ...OBJECT_META_SCHEMA, description: 'Metadata given to each created object.' };

export const PRIORITIES_SCHEMA: Schema = {
  type: 'array',
  description:
    'CountsAndLists (alpha): Counter or List capacity orderings; the first entry is the most important sort. Used on scale-down.',
  items: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['Counter', 'List'], description: 'Whether key names a Counter or a List.' },
      key: { type: 'string', description: 'Name of the Counter or List; has no effect when absent on a GameServer.' },
      order: {
        type: 'string',
        enum: ['Ascending', 'Descending'],
        default: 'Ascending',
        description: 'Ascending prefers smaller capacity, Descending bigger.',
      },
    },
  },
};

export const ALLOCATION_OVERFLOW_SCHEMA: Schema = {
  type: 'object',
  description:
    'FleetAllocationOverflow (beta): labels and annotations applied to Allocated GameServers beyond the desired replicas.',
  properties: {
    labels: { ...STRING_MAP_SCHEMA, description: 'Labels applied to the overflowing Allocated GameServers.' },
    annotations: { ...STRING_MAP_SCHEMA, description: 'Annotations applied to the overflowing Allocated GameServers.' },
  },
};

/** CRD default of a priority's order, applied on every write as the API server would. */
export function defaultPriorities(value: unknown): unknown {
  const items = arrayAt(value);
  if (!items) return value;
  return items.map((item) => {
    const priority = objectAt(item);
    if (!priority || isSet(priority.order)) return item;
    return { ...priority, order: 'Ascending' };
  });
}
