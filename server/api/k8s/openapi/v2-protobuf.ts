import type protobuf from 'protobufjs/light.js';
import { protobufRoot } from '../../../k8s/protobuf.js';
import type { FieldSpec } from '../../../k8s/protobuf-schema.js';
import { isJsonObject, type Json, type JsonObject } from './json.js';

/**
 * The gnostic protobuf encoding of a v2 document, which client-go asks for, written by protobufjs.
 * The messages are the part of gnostic's `openapi.v2` package a generated document uses, with its
 * field numbers; a field named as the Swagger key it holds is copied as it is (see `scalars`).
 */
const MESSAGES: Readonly<Record<string, readonly FieldSpec[]>> = {
  Document: [
    ['swagger', 1, 'string'],
    ['info', 2, 'Info'],
    ['host', 3, 'string'],
    ['basePath', 4, 'string'],
    ['schemes', 5, 'string[]'],
    ['consumes', 6, 'string[]'],
    ['produces', 7, 'string[]'],
    ['paths', 8, 'Paths'],
    ['definitions', 9, 'Definitions'],
    ['vendorExtension', 16, 'NamedAny[]'],
  ],
  Info: [
    ['title', 1, 'string'],
    ['version', 2, 'string'],
    ['description', 3, 'string'],
  ],
  Paths: [['path', 2, 'NamedPathItem[]']],
  NamedPathItem: [
    ['name', 1, 'string'],
    ['value', 2, 'PathItem'],
  ],
  PathItem: [
    ['get', 2, 'Operation'],
    ['put', 3, 'Operation'],
    ['post', 4, 'Operation'],
    ['delete', 5, 'Operation'],
    ['options', 6, 'Operation'],
    ['head', 7, 'Operation'],
    ['patch', 8, 'Operation'],
    ['parameters', 9, 'ParametersItem[]'],
    ['vendorExtension', 10, 'NamedAny[]'],
  ],
  Operation: [
    ['tags', 1, 'string[]'],
    ['summary', 2, 'string'],
    ['description', 3, 'string'],
    ['operationId', 5, 'string'],
    ['produces', 6, 'string[]'],
    ['consumes', 7, 'string[]'],
    ['parameters', 8, 'ParametersItem[]'],
    ['responses', 9, 'Responses'],
    ['schemes', 10, 'string[]'],
    ['deprecated', 11, 'bool'],
    ['vendorExtension', 13, 'NamedAny[]'],
  ],
  // ParametersItem, Parameter, NonBodyParameter, ResponseValue, SchemaItem and
  // AdditionalPropertiesItem are oneofs: exactly one member is set.
  ParametersItem: [['parameter', 1, 'Parameter']],
  Parameter: [
    ['bodyParameter', 1, 'BodyParameter'],
    ['nonBodyParameter', 2, 'NonBodyParameter'],
  ],
  BodyParameter: [
    ['description', 1, 'string'],
    ['name', 2, 'string'],
    ['in', 3, 'string'],
    ['required', 4, 'bool'],
    ['schema', 5, 'Schema'],
  ],
  NonBodyParameter: [
    ['query', 3, 'QueryParameterSubSchema'],
    ['path', 4, 'PathParameterSubSchema'],
  ],
  QueryParameterSubSchema: [
    ['required', 1, 'bool'],
    ['in', 2, 'string'],
    ['description', 3, 'string'],
    ['name', 4, 'string'],
    ['type', 6, 'string'],
    ['format', 7, 'string'],
    ['uniqueItems', 20, 'bool'],
  ],
  PathParameterSubSchema: [
    ['required', 1, 'bool'],
    ['in', 2, 'string'],
    ['description', 3, 'string'],
    ['name', 4, 'string'],
    ['type', 5, 'string'],
    ['format', 6, 'string'],
    ['uniqueItems', 19, 'bool'],
  ],
  Responses: [['responseCode', 1, 'NamedResponseValue[]']],
  NamedResponseValue: [
    ['name', 1, 'string'],
    ['value', 2, 'ResponseValue'],
  ],
  ResponseValue: [['response', 1, 'Response']],
  Response: [
    ['description', 1, 'string'],
    ['schema', 2, 'SchemaItem'],
  ],
  SchemaItem: [['schema', 1, 'Schema']],
  Schema: [
    ['ref', 1, 'string'],
    ['format', 2, 'string'],
    ['title', 3, 'string'],
    ['description', 4, 'string'],
    ['default', 5, 'Any'],
    ['multipleOf', 6, 'double'],
    ['maximum', 7, 'double'],
    ['exclusiveMaximum', 8, 'bool'],
    ['minimum', 9, 'double'],
    ['exclusiveMinimum', 10, 'bool'],
    ['maxLength', 11, 'int64'],
    ['minLength', 12, 'int64'],
    ['pattern', 13, 'string'],
    ['maxItems', 14, 'int64'],
    ['minItems', 15, 'int64'],
    ['uniqueItems', 16, 'bool'],
    ['maxProperties', 17, 'int64'],
    ['minProperties', 18, 'int64'],
    ['required', 19, 'string[]'],
    ['enum', 20, 'Any[]'],
    ['additionalProperties', 21, 'AdditionalPropertiesItem'],
    ['type', 22, 'TypeItem'],
    ['items', 23, 'ItemsItem'],
    ['properties', 25, 'Properties'],
    ['readOnly', 27, 'bool'],
    ['example', 30, 'Any'],
    ['vendorExtension', 31, 'NamedAny[]'],
  ],
  AdditionalPropertiesItem: [
    ['schema', 1, 'Schema'],
    ['boolean', 2, 'bool'],
  ],
  TypeItem: [['value', 1, 'string[]']],
  ItemsItem: [['schema', 1, 'Schema[]']],
  Properties: [['additionalProperties', 1, 'NamedSchema[]']],
  Definitions: [['additionalProperties', 1, 'NamedSchema[]']],
  NamedSchema: [
    ['name', 1, 'string'],
    ['value', 2, 'Schema'],
  ],
  NamedAny: [
    ['name', 1, 'string'],
    ['value', 2, 'Any'],
  ],
  // gnostic `Any`: a value as YAML text (JSON is YAML).
  Any: [['yaml', 2, 'string']],
};

type Message = Record<string, unknown>;

// Built on the first protobuf request: a server that is never asked pays nothing.
let root: protobuf.Root | undefined;
const typeOf = (name: string) => (root ??= protobufRoot(MESSAGES)).lookupType(name);

/** Whether `value` is worth writing in a field of `type`: proto3 leaves out zeros, false and '' anyway. */
function written(type: string, value: Json | undefined): boolean {
  if (type === 'string') return typeof value === 'string' && value !== '';
  if (type === 'bool') return value === true;
  if (type === 'int64') return typeof value === 'number' && Number.isInteger(value) && value !== 0;
  return type === 'double' && typeof value === 'number' && value !== 0;
}

/** The scalar and string-list fields of message `type` that `json` holds under the same names. */
function scalars(type: string, json: JsonObject): Message {
  const message: Message = {};
  for (const field of typeOf(type).fieldsArray) {
    const value = json[field.name];
    if (field.repeated && field.type === 'string' && Array.isArray(value)) message[field.name] = value.filter((v) => typeof v === 'string');
    else if (!field.repeated && written(field.type, value)) message[field.name] = value;
  }
  return message;
}

const any = (value: Json) => ({ yaml: JSON.stringify(value) });

/** `x-…` keys of an object as `NamedAny` entries. */
const vendorExtension = (json: JsonObject) =>
  Object.entries(json)
    .filter(([name]) => name.startsWith('x-'))
    .map(([name, value]) => ({ name, value: any(value) }));

/** The object members of a map as `Named…` entries, each value built by `build`. */
const named = (map: Json | undefined, build: (value: JsonObject) => Message) =>
  isJsonObject(map) ? Object.entries(map).flatMap(([name, value]) => (isJsonObject(value) ? [{ name, value: build(value) }] : [])) : undefined;

function schema(s: JsonObject): Message {
  const { additionalProperties: additional, items } = s;
  return {
    ...scalars('Schema', s),
    ref: written('string', s.$ref) ? s.$ref : undefined,
    default: s.default === undefined ? undefined : any(s.default),
    enum: Array.isArray(s.enum) ? s.enum.map(any) : undefined,
    // A oneof member, so written even when false.
    additionalProperties: isJsonObject(additional) ? { schema: schema(additional) } : typeof additional === 'boolean' ? { boolean: additional } : undefined,
    type: typeof s.type === 'string' ? { value: [s.type] } : undefined,
    items: isJsonObject(items) ? { schema: [schema(items)] } : undefined,
    // Written even when empty, since presence can matter (`properties: {}`).
    properties: isJsonObject(s.properties) ? { additionalProperties: named(s.properties, schema) } : undefined,
    example: s.example === undefined ? undefined : any(s.example),
    vendorExtension: vendorExtension(s),
  };
}

function parameter(p: JsonObject): Message {
  if (p.in === 'body') return { parameter: { bodyParameter: { ...scalars('BodyParameter', p), schema: isJsonObject(p.schema) ? schema(p.schema) : undefined } } };
  const nonBody = p.in === 'query' ? { query: scalars('QueryParameterSubSchema', p) } : { path: scalars('PathParameterSubSchema', p) };
  return { parameter: { nonBodyParameter: nonBody } };
}

const parameters = (list: Json | undefined) => (Array.isArray(list) ? list.filter(isJsonObject).map(parameter) : undefined);

function operation(op: JsonObject): Message {
  const responseCode = named(op.responses, (r) => ({
    response: { ...scalars('Response', r), schema: isJsonObject(r.schema) ? { schema: schema(r.schema) } : undefined },
  }));
  return {
    ...scalars('Operation', op),
    parameters: parameters(op.parameters),
    responses: responseCode && { responseCode },
    vendorExtension: vendorExtension(op),
  };
}

function pathItem(item: JsonObject): Message {
  const message: Message = { parameters: parameters(item.parameters), vendorExtension: vendorExtension(item) };
  for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) {
    const op = item[method];
    if (isJsonObject(op)) message[method] = operation(op);
  }
  return message;
}

/** Encodes a Swagger 2.0 document as the gnostic `openapi.v2.Document` message client-go decodes. */
export function encodeOpenApiV2(doc: JsonObject): Buffer {
  const paths = named(doc.paths, pathItem);
  const definitions = named(doc.definitions, schema);
  const message = {
    ...scalars('Document', doc),
    info: isJsonObject(doc.info) ? scalars('Info', doc.info) : undefined,
    paths: paths && { path: paths },
    definitions: definitions && { additionalProperties: definitions },
    vendorExtension: vendorExtension(doc),
  };
  const bytes = typeOf('Document').encode(message).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
