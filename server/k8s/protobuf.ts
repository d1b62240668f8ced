import protobuf from 'protobufjs/light.js';
import { toInt64 } from '../int64.js';
import { type FieldSpec, KINDS, MESSAGES } from './protobuf-schema.js';

/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which client-go
 * sends for built-in kinds, read into the JSON document a JSON client would have sent for the
 * same object, so that nothing past the body parser knows the difference.
 */

/** The body is not Kubernetes protobuf, is cut short or malformed, or holds a kind not read here. */
export class ProtobufBodyError extends Error {
  constructor(
    message: string,
    /** `unsupported`: well-formed, but of a kind this decoder does not know. */
    readonly reason: 'malformed' | 'unsupported' = 'malformed',
  ) {
    super(message);
    this.name = 'ProtobufBodyError';
  }
}

/** `k8s\0`: what the API machinery writes before the envelope. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A decoded message: the fields the body held are own properties; the rest come from the prototype's defaults. */
type Message = Record<string, unknown>;

const FIELD_TYPE = /^(map<)?(\w+)(>)?(\[\])?$/;

function parseType(type: string): { name: string; map: boolean; repeated: boolean } {
  const match = FIELD_TYPE.exec(type);
  if (!match) throw new Error(`protobuf-schema: bad field type ${type}`);
  return { name: match[2]!, map: match[1] !== undefined, repeated: match[4] !== undefined };
}

/** A protobufjs root holding `messages`, described as protobuf-schema.ts describes them. */
export function protobufRoot(messages: Readonly<Record<string, readonly FieldSpec[]>>): protobuf.Root {
  const root = new protobuf.Root();
  for (const [name, fields] of Object.entries(messages)) {
    const type = new protobuf.Type(name);
    for (const [json, id, fieldType] of fields) {
      const { name: valueType, map, repeated } = parseType(fieldType);
      type.add(map ? new protobuf.MapField(json, id, 'string', valueType) : new protobuf.Field(json, id, valueType, repeated ? 'repeated' : 'optional'));
    }
    root.add(type);
  }
  root.resolveAll();
  return root;
}

// Built on the first protobuf body: a server that never sees one pays nothing.
let root: protobuf.Root | undefined;
function typeOf(name: string): protobuf.Type {
  root ??= protobufRoot(MESSAGES);
  return root.lookupType(name);
}

function decode(name: string, bytes: Uint8Array, what: string): Message {
  try {
    return typeOf(name).decode(bytes) as unknown as Message;
  } catch (error) {
    throw new ProtobufBodyError(`the protobuf body's ${what} is malformed: ${(error as Error).message}`);
  }
}

/** Whether a protobuf body of this kind can be read (DeleteOptions aside, which is read under any apiVersion). */
export function protobufKindSupported(apiVersion: string, kind: string): boolean {
  return KINDS[`${apiVersion} ${kind}`] !== undefined;
}

/**
 * Reads a Kubernetes protobuf body: the magic bytes, a runtime.Unknown envelope naming the
 * object's apiVersion and kind, and the object's own bytes inside it. Fields unknown here are
 * skipped, as Go's decoder skips them.
 */
export function decodeKubernetesProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ProtobufBodyError('the body is not Kubernetes protobuf: it does not start with the bytes "k8s\\0"');
  }
  const envelope = decode('Unknown', body.subarray(MAGIC.length), 'envelope');
  const typeMeta = (envelope.typeMeta ?? {}) as Message;
  const apiVersion = String(typeMeta.apiVersion ?? '');
  const kind = String(typeMeta.kind ?? '');
  if (kind === '') throw new ProtobufBodyError('the protobuf body does not name its kind');
  if (envelope.contentEncoding) {
    throw new ProtobufBodyError(`the protobuf body's content encoding "${String(envelope.contentEncoding)}" is not supported`, 'unsupported');
  }
  const message = kind === 'DeleteOptions' ? 'DeleteOptions' : KINDS[`${apiVersion} ${kind}`];
  if (!message) {
    throw new ProtobufBodyError(`protobuf body of kind "${kind}" (${apiVersion || 'no apiVersion'}) is not supported: send it as JSON`, 'unsupported');
  }
  const raw = (envelope.raw ?? new Uint8Array()) as Uint8Array;
  return { kind, apiVersion, ...toJson(message, decode(message, raw, `${kind} object`)) };
}

// ---------------------------------------------------------------------------------------------
// From decoded messages to JSON, field by field as Go's encoding/json writes the Go struct
// ---------------------------------------------------------------------------------------------

/** protobufjs gives int64 values as Long objects (or numbers when Long is absent). */
function integer(value: unknown): number | bigint {
  return typeof value === 'number' ? value : toInt64(BigInt(String(value)));
}

/** metav1.Time: an empty message is the zero time (JSON null); nanoseconds are dropped, as Go does. */
function timeJson(message: Message | undefined): string | null {
  if (!message || (!Object.hasOwn(message, 'seconds') && !Object.hasOwn(message, 'nanos'))) return null;
  const date = new Date(Number(integer(message.seconds)) * 1000);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 0 || date.getUTCFullYear() > 9999) {
    throw new ProtobufBodyError(`the protobuf body holds a time out of range: ${String(message.seconds)} seconds`);
  }
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** intstr.IntOrString: the number or the string, as its type says. */
function intOrStringJson(message: Message | undefined): number | string {
  const type = Number(integer(message?.type ?? 0));
  if (type === 0) return Number(message?.intVal ?? 0);
  if (type === 1) return String(message?.strVal ?? '');
  throw new ProtobufBodyError(`the protobuf body holds an IntOrString of unknown type ${type}`);
}

/** Messages whose JSON is a value rather than an object; `undefined` is the field left out (Go's zero value). */
const SPECIAL: Readonly<Record<string, (message: Message | undefined) => unknown>> = {
  Time: timeJson,
  IntOrString: intOrStringJson,
  // resource.Quantity: its canonical text.
  Quantity: (message) => String(message?.string ?? ''),
};

function valueJson(type: string, value: unknown): unknown {
  switch (type) {
    case 'string':
    case 'bool':
      return value;
    case 'int32':
    case 'int64':
      return integer(value);
    case 'bytes':
      return Buffer.from(value as Uint8Array).toString('base64');
    default:
      return SPECIAL[type] ? SPECIAL[type](value as Message) : toJson(type, value as Message);
  }
}

/** Zero values of the scalars: what Go holds for a field the body left out. */
const ZERO: Readonly<Record<string, unknown>> = { string: '', bool: false, int32: 0, int64: 0, bytes: '' };

function isZero(value: unknown): boolean {
  return value === '' || value === false || value === 0;
}

function toJson(name: string, message: Message | undefined): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const field of MESSAGES[name]!) {
    for (const [key, value] of fieldJson(field, message)) json[key] = value;
  }
  return json;
}

/** One field as Go writes it: `[]` when left out of the JSON, else its key and value. */
function fieldJson([key, , fieldType, go = 'omitempty']: FieldSpec, message: Message | undefined): [string, unknown][] {
  const { name, map, repeated } = parseType(fieldType);
  const held = message !== undefined && Object.hasOwn(message, key) ? message[key] : undefined;
  if (go === 'inline') return Object.entries(toJson(name, held as Message | undefined));
  if (map || repeated) {
    // Go's decoder leaves an empty list or map nil: left out under omitempty, null otherwise.
    const size = held === undefined ? 0 : map ? Object.keys(held as Message).length : (held as unknown[]).length;
    if (size === 0) return go === 'omitempty' ? [] : [[key, null]];
    if (repeated) return [[key, (held as unknown[]).map((item) => valueJson(name, item))]];
    // encoding/json writes a map's keys sorted.
    const entries = Object.entries(held as Message).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return [[key, Object.fromEntries(entries.map(([k, v]) => [k, valueJson(name, v)]))]];
  }
  if (go === 'pointer') return held === undefined ? [] : [[key, valueJson(name, held)]];
  // A struct that is not a pointer is always written, its zero value too.
  if (!(name in ZERO)) return [[key, SPECIAL[name] ? SPECIAL[name](held as Message | undefined) : toJson(name, held as Message | undefined)]];
  const value = held === undefined ? ZERO[name] : valueJson(name, held);
  return go === 'omitempty' && isZero(value) ? [] : [[key, value]];
}
