import { type FieldError, goQuote, invalid, required, typeInvalid } from './validation.js';
import { inInt64Range, isInteger } from '../int64.js';
import { stringifyJsonExact } from '../log/json.js';

/**
 * The subset of OpenAPI v3 schemas fleetsim needs: it checks request bodies (types, unknown
 * fields) and is published as-is to kubectl, so one definition serves both.
 */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: Array<string | number>;
  format?: string;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  maxProperties?: number;
  maxLength?: number;
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
}

export interface SchemaReport {
  /** Paths of fields the schema does not know (`spec.foo`). */
  unknown: string[];
  errors: FieldError[];
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  // Exact JSON parsing gives a bigint for an integer past 2^53 (server/kinds/int64.ts).
  if (typeof value === 'bigint') return 'integer';
  return typeof value;
}

/**
 * Checks a value against a schema, as the API server's structural schema validation does. For an
 * update, `old` is the object as stored: a string's format is not held against a value the update
 * leaves as it was (the API server's validation ratcheting), so an object stored before a format
 * was checked (an older log's) can still be edited.
 */
export function checkSchema(value: unknown, schema: Schema, path: string, report: SchemaReport, old?: unknown): void {
  if (value === null || value === undefined) {
    if (value === null && schema.nullable === false) report.errors.push(required(path, ''));
    return;
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value !== 'string' && !isInteger(value)) {
      report.errors.push(typeInvalid(path, value, `${path} in body must be of type int-or-string: "${typeName(value)}"`));
    }
    return;
  }
  const actual = typeName(value);
  switch (schema.type) {
    case 'object': {
      if (actual !== 'object') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type object: "${actual}"`));
        return;
      }
      const object = value as Record<string, unknown>;
      for (const name of schema.required ?? []) {
        if (object[name] === undefined) report.errors.push(required(join(path, name), ''));
      }
      for (const [key, child] of Object.entries(object)) {
        const childPath = join(path, key);
        const childSchema = schema.properties?.[key];
        const oldChild = typeName(old) === 'object' ? (old as Record<string, unknown>)[key] : undefined;
        if (childSchema) checkSchema(child, childSchema, childPath, report, oldChild);
        else if (typeof schema.additionalProperties === 'object') checkSchema(child, schema.additionalProperties, childPath, report, oldChild);
        else if (schema.additionalProperties !== true && !schema['x-kubernetes-preserve-unknown-fields']) {
          report.unknown.push(childPath);
        }
      }
      if (schema.maxProperties !== undefined && Object.keys(object).length > schema.maxProperties) {
        report.errors.push(invalid(path, Object.keys(object).length, `must have at most ${schema.maxProperties} properties`));
      }
      return;
    }
    case 'array': {
      if (actual !== 'array') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type array: "${actual}"`));
        return;
      }
      const items = value as unknown[];
      if (schema.maxItems !== undefined && items.length > schema.maxItems) {
        report.errors.push(invalid(path, items.length, `must have at most ${schema.maxItems} items`));
      }
      if (schema['x-kubernetes-list-type'] === 'set') {
        const seen = new Set<string>();
        items.forEach((item, i) => {
          const k = stringifyJsonExact(item);
          if (seen.has(k)) report.errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, badValue: item, detail: '' });
          seen.add(k);
        });
      }
      if (schema.items) items.forEach((item, i) => checkSchema(item, schema.items!, `${path}[${i}]`, report));
      return;
    }
    case 'integer':
      if (actual !== 'integer') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type integer: "${actual}"`));
        return;
      }
      break;
    case 'number':
      if (actual !== 'integer' && actual !== 'number') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type number: "${actual}"`));
        return;
      }
      break;
    case 'string':
      if (actual !== 'string') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type string: "${actual}"`));
        return;
      }
      if (schema.format === 'date-time' && value !== old && !isDateTime(value as string)) {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type date-time: ${goQuote(value as string)}`));
      }
      if (schema.format === 'byte' && !isBase64(value as string)) {
        report.errors.push(invalid(path, '<value omitted>', `${path} in body must be of type byte: "${truncate(value as string)}"`));
      }
      if (schema.maxLength !== undefined && (value as string).length > schema.maxLength) {
        report.errors.push({ type: 'FieldValueTooLong', field: path, badValue: value, detail: `may not be more than ${schema.maxLength} bytes` });
      }
      break;
    case 'boolean':
      if (actual !== 'boolean') {
        report.errors.push(typeInvalid(path, value, `${path} in body must be of type boolean: "${actual}"`));
        return;
      }
      break;
    default:
      return;
  }
  if (schema.enum && !schema.enum.includes(value as string | number)) {
    report.errors.push({
      type: 'FieldValueNotSupported',
      field: path,
      badValue: value,
      detail: `supported values: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`,
    });
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (schema.format === 'int64' && !inInt64Range(value)) {
      report.errors.push(invalid(path, value, `${path} in body must be an int64 (between -9223372036854775808 and 9223372036854775807)`));
      return;
    }
    if (schema.minimum !== undefined && value < schema.minimum) {
      report.errors.push(invalid(path, value, `${path} in body should be greater than or equal to ${schema.minimum}`));
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      report.errors.push(invalid(path, value, `${path} in body should be less than or equal to ${schema.maximum}`));
    }
  }
}

/** A copy of `value` without the fields `schema` does not know (the API server's pruning). */
export function pruneUnknown(value: unknown, schema: Schema): unknown {
  if (value === null || typeof value !== 'object' || schema['x-kubernetes-preserve-unknown-fields'] || schema['x-kubernetes-int-or-string']) {
    return value;
  }
  if (Array.isArray(value)) return schema.items ? value.map((item) => pruneUnknown(item, schema.items!)) : value;
  if (schema.type !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (childSchema) out[key] = pruneUnknown(child, childSchema);
    else if (schema.additionalProperties === true) out[key] = child;
  }
  return out;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * `format: date-time`: an RFC 3339 date-time (`2024-05-01T10:00:00Z`, `…:00.5+02:00`) on a real
 * calendar date, no later in the day than 23:59:59, as the API server's format check
 * (kube-openapi's strfmt) takes it. That check reads only up to a second `t` and takes any
 * character before the fraction or any two digits as the offset; here the whole value must be
 * the date-time, as the typed clients (metav1.Time, so Agones's controllers) need to read it.
 */
export function isDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m) return false;
  // An absent offset (a Z) reads as 00:00.
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHour = 0, offsetMinute = 0] = m.slice(1).map((part) => Number(part ?? 0));
  const dateValid = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
  return dateValid && hour <= 23 && minute <= 59 && second <= 59 && offsetHour <= 23 && offsetMinute <= 59;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Standard base64 (what Kubernetes expects of `format: byte`), padding optional. */
function isBase64(text: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(text.replace(/\s+/g, '')) && text.replace(/\s+/g, '').replace(/=+$/, '').length % 4 !== 1;
}

function truncate(text: string): string {
  return text.length > 20 ? `${text.slice(0, 20)}...` : text;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Standard metadata, shared by every kind's schema. */
export const OBJECT_META_SCHEMA: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer' },
    creationTimestamp: { type: 'string', format: 'date-time', nullable: true },
    deletionTimestamp: { type: 'string', format: 'date-time', nullable: true },
    deletionGracePeriodSeconds: { type: 'integer' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
    ownerReferences: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          name: { type: 'string' },
          uid: { type: 'string' },
          controller: { type: 'boolean' },
          blockOwnerDeletion: { type: 'boolean' },
        },
      },
    },
    finalizers: { type: 'array', items: { type: 'string' } },
    managedFields: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    selfLink: { type: 'string' },
  },
};

/**
 * apiVersion, kind and metadata around a kind's own fields. Left without descriptions, and with
 * the shared ObjectMeta schema itself, so the OpenAPI publisher fills in the standard texts.
 */
export function bodySchema(fields: Record<string, Schema>): Schema {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: OBJECT_META_SCHEMA,
      ...fields,
    },
  };
}
