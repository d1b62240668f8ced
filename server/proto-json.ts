import { GrpcCode, GrpcError, showValue } from './grpc-status.js';
import { INT64_MAX, INT64_MIN, type Int64, toInt64 } from './int64.js';

/**
 * The one protobuf-JSON decoder (protojson with DiscardUnknown, as Agones's gateway and
 * allocator read requests), for the sidecar's messages and the allocator's AllocationRequest:
 * unknown fields ignored, `null` meaning unset, 64-bit integers as JSON numbers or decimal
 * strings (exact: see server/int64.ts), enums by name or by number. A value of the wrong type is
 * INVALID_ARGUMENT with a message naming the field. Its input is an already parsed document
 * (server/log/json.ts keeps big integers exact).
 */

export type ProtoMessage = Record<string, unknown>;

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

export function invalidValue(type: string, path: string, value: unknown): GrpcError {
  return new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: invalid value for ${type} field ${path}: ${showValue(value)}`);
}

/** Present and not null: protojson reads `null` as unset. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** A request body as a message: it must be a JSON object (`null` as a field is unset, not as a body). */
export function messageBody(document: unknown, messageName: string): ProtoMessage {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: syntax error: ${messageName} must be a JSON object, got ${showValue(document)}`);
  }
  return document as ProtoMessage;
}

/** A nested message: a JSON object. Callers skip unset (null/absent) fields before reading. */
export function message(value: unknown, path: string, type: string): ProtoMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidValue(`message ${type}`, path, value);
  return value as ProtoMessage;
}

export function str(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalidValue('string', path, value);
  return value;
}

export function bool(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw invalidValue('bool', path, value);
  return value;
}

/**
 * A JSON number that is an integer, or a string of decimal digits, as an exact bigint. As in
 * protojson, a string with spaces around its digits is not a number.
 */
function integer(value: unknown, path: string, type: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw invalidValue(type, path, value);
}

/** int64 (and google.protobuf.Int64Value), exact. */
export function int64(value: unknown, path: string): Int64 {
  const big = integer(value, path, 'int64');
  if (big < INT64_MIN || big > INT64_MAX) throw invalidValue('int64', path, value);
  return toInt64(big);
}

export function int32(value: unknown, path: string): number {
  const big = integer(value, path, 'int32');
  if (big < INT32_MIN || big > INT32_MAX) throw invalidValue('int32', path, value);
  return Number(big);
}

/**
 * uint64 (the allocator's PlayerSelector). Agones converts it with a plain int64() cast, so a
 * value above the int64 maximum wraps to a negative number, which validation then refuses.
 */
export function uint64AsInt64(value: unknown, path: string): Int64 {
  const big = integer(value, path, 'uint64');
  if (big < 0n || big > UINT64_MAX) throw invalidValue('uint64', path, value);
  return toInt64(BigInt.asIntN(64, big));
}

/** An enum by name or by number. proto3 enums are open: any int32 number is accepted. */
export function enumNumber(value: unknown, path: string, type: string, names: readonly string[]): number {
  if (typeof value === 'string') {
    const index = names.indexOf(value);
    if (index >= 0) return index;
  } else if (typeof value === 'number' && Number.isInteger(value)) {
    const big = BigInt(value);
    if (big >= INT32_MIN && big <= INT32_MAX) return value;
  }
  throw invalidValue(`enum ${type}`, path, value);
}

/** A repeated field; unset is empty, a null item is an error naming its index. */
export function repeated<T>(value: unknown, path: string, type: string, item: (v: unknown, p: string) => T): T[] {
  if (!isSet(value)) return [];
  if (!Array.isArray(value)) throw invalidValue(`repeated ${type}`, path, value);
  return value.map((v, i) => {
    const itemPath = `${path}[${i}]`;
    if (v === null) throw invalidValue(type, itemPath, v);
    return item(v, itemPath);
  });
}

/** A map<string, T> field, keys sorted; unset is empty, a null value is an error naming its key. */
export function map<T>(value: unknown, path: string, type: string, item: (v: unknown, p: string) => T): Record<string, T> {
  const out: Record<string, T> = {};
  if (!isSet(value)) return out;
  const object = message(value, path, `map<string, ${type}>`);
  for (const key of Object.keys(object).sort()) {
    const itemPath = `${path}[${key}]`;
    const v = object[key];
    if (v === null) throw invalidValue(type, itemPath, v);
    out[key] = item(v, itemPath);
  }
  return out;
}

/** Reads an optional field: absent or null gives undefined. */
export function optional<T>(value: unknown, path: string, read: (v: unknown, p: string) => T): T | undefined {
  return isSet(value) ? read(value, path) : undefined;
}

// -- flat messages described by a table (the sidecar's) ----------------------------------------

export type FieldType = 'int64' | 'int32' | 'string' | 'bool' | 'strings';

export interface FieldSpec {
  /** The proto field name. */
  name: string;
  /** The lowerCamel JSON name, when it differs. */
  json?: string;
  type: FieldType;
}

/** int64 fields decode to an exact `Int64` (a bigint past 2^53), int32 fields to a number. */
export type Decoded = Record<string, Int64 | string | boolean | string[] | undefined>;

function decodeField(spec: FieldSpec, value: unknown): Decoded[string] {
  switch (spec.type) {
    case 'int64':
      return int64(value, spec.name);
    case 'int32':
      return int32(value, spec.name);
    case 'string':
      return str(value, spec.name);
    case 'bool':
      return bool(value, spec.name);
    case 'strings':
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        throw invalidValue('repeated string', spec.name, value);
      }
      return value as string[];
  }
}

function fieldOf(fields: readonly FieldSpec[], key: string): FieldSpec | undefined {
  return fields.find((f) => f.name === key || f.json === key);
}

/**
 * Decodes a flat message whose fields go by their proto or their lowerCamel JSON name: known
 * fields typed, unknown fields ignored. Returns also which fields were present.
 */
export function decodeMessage(document: unknown, fields: readonly FieldSpec[], messageName: string): {
  message: Decoded;
  present: string[];
} {
  const body = messageBody(document, messageName);
  const decoded: Decoded = {};
  const present: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    const spec = fieldOf(fields, key);
    if (!spec || value === null) continue;
    decoded[spec.name] = decodeField(spec, value);
    present.push(spec.name);
  }
  return { message: decoded, present };
}

/**
 * The top-level keys of a body, checked against a message's fields (for body-derived field masks),
 * as grpc-gateway's FieldMaskFromRequestBody derives them: an empty object is a leaf to it, so `{}`
 * gives the path "" (which no message has), not an empty mask.
 */
export function fieldMaskFromBody(document: unknown, fields: readonly FieldSpec[], messageName: string): string[] {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return [];
  const keys = Object.keys(document as ProtoMessage);
  if (keys.length === 0) return [''];
  const paths: string[] = [];
  for (const key of keys) {
    const spec = fieldOf(fields, key);
    if (!spec) {
      throw new GrpcError(GrpcCode.INVALID_ARGUMENT, `could not find field "${key}" in "${messageName}"`);
    }
    paths.push(spec.name);
  }
  return paths.sort();
}
