import { GrpcCode, GrpcError, showValue } from '../grpc-status.js';
import { INT64_MAX, INT64_MIN, type Int64, toInt64 } from '../int64.js';
import { BodyParseError, parseDocument } from './request-body.js';

/**
 * Decoding request bodies as Agones's gateway does (protojson, DiscardUnknown): a field may be
 * given by its proto name or its lowerCamel JSON name, an int64 as a number or a string, `null`
 * means unset, and unknown fields are ignored. Bad syntax or a wrong type is INVALID_ARGUMENT.
 */
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

function badValue(type: string, field: string, value: unknown): GrpcError {
  return new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: invalid value for ${type} field ${field}: ${showValue(value)}`);
}

function decodeInteger(field: string, type: 'int64' | 'int32', value: unknown): Int64 {
  let big: bigint;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) big = BigInt(value.trim());
  else throw badValue(type, field, value);
  const [min, max] = type === 'int64' ? [INT64_MIN, INT64_MAX] : [-2147483648n, 2147483647n];
  if (big < min || big > max) throw badValue(type, field, value);
  return toInt64(big);
}

function decodeField(spec: FieldSpec, value: unknown): Decoded[string] {
  switch (spec.type) {
    case 'int64':
    case 'int32':
      return decodeInteger(spec.name, spec.type, value);
    case 'string':
      if (typeof value !== 'string') throw badValue('string', spec.name, value);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw badValue('bool', spec.name, value);
      return value;
    case 'strings':
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
        throw badValue('repeated string', spec.name, value);
      }
      return value as string[];
  }
}

/** Parses one JSON document with the shared, depth-capped parser; an empty body is an empty message. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return parseDocument(text);
  } catch (error) {
    if (!(error instanceof BodyParseError)) throw error;
    throw new GrpcError(GrpcCode.INVALID_ARGUMENT, error.reason === 'syntax' ? `proto: syntax error: ${error.message}` : `proto: ${error.message}`);
  }
}

function unexpected(c: string): GrpcError {
  return new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: syntax error: unexpected ${JSON.stringify(c)}: a stream of JSON objects was expected`);
}

/**
 * Splits a body holding several JSON objects in a row (`{}{}`): the gateway reads a client
 * stream, such as Health's pings, that way. Each element must be an object (a message):
 * `[]`, `null`, `123` or a string is a syntax error, as in the gateway's decoder.
 */
export function parseJsonSequence(text: string): unknown[] {
  const documents: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (depth === 0) {
      if (c === '{') {
        start = i;
        depth = 1;
      } else if (!/\s/.test(c)) {
        throw unexpected(c);
      }
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) documents.push(parseJsonBody(text.slice(start, i + 1)));
    }
  }
  if (depth !== 0) throw new GrpcError(GrpcCode.INVALID_ARGUMENT, 'proto: syntax error: Unexpected end of JSON input');
  return documents;
}

/** Decodes a message: known fields typed, unknown fields ignored. Returns also which keys were present. */
export function decodeMessage(document: unknown, fields: readonly FieldSpec[], messageName: string): {
  message: Decoded;
  present: string[];
} {
  // `null` means unset for a field, but a message body must be an object (protojson).
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: syntax error: ${messageName} must be a JSON object, got ${showValue(document)}`);
  }
  const message: Decoded = {};
  const present: string[] = [];
  for (const [key, value] of Object.entries(document as Record<string, unknown>)) {
    const spec = fields.find((f) => f.name === key || f.json === key);
    if (!spec || value === null) continue;
    message[spec.name] = decodeField(spec, value);
    present.push(spec.name);
  }
  return { message, present };
}

/** The top-level keys of a body, checked against a message's fields (for body-derived field masks). */
export function fieldMaskFromBody(document: unknown, fields: readonly FieldSpec[], messageName: string): string[] {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return [];
  const paths: string[] = [];
  for (const key of Object.keys(document as Record<string, unknown>)) {
    const spec = fields.find((f) => f.name === key || f.json === key);
    if (!spec) {
      throw new GrpcError(GrpcCode.INVALID_ARGUMENT, `could not find field "${key}" in "${messageName}"`);
    }
    paths.push(spec.name);
  }
  return paths.sort();
}
