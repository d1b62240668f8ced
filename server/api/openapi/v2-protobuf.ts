import { isJsonObject, type Json, type JsonObject } from './json.js';

/** The gnostic protobuf encoding of a v2 document, which client-go asks for. */

/** Protocol buffers wire format, just what the gnostic OpenAPI v2 messages need. */
class ProtoWriter {
  private readonly chunks: Buffer[] = [];

  private varint(value: number | bigint): void {
    let n = BigInt.asUintN(64, BigInt(value));
    const bytes: number[] = [];
    do {
      let byte = Number(n & 0x7fn);
      n >>= 7n;
      if (n > 0n) byte |= 0x80;
      bytes.push(byte);
    } while (n > 0n);
    this.chunks.push(Buffer.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  bytes(field: number, data: Buffer): void {
    this.tag(field, 2);
    this.varint(data.length);
    this.chunks.push(data);
  }

  string(field: number, value: unknown): void {
    if (typeof value === 'string' && value !== '') this.bytes(field, Buffer.from(value, 'utf8'));
  }

  strings(field: number, values: unknown): void {
    if (Array.isArray(values)) for (const v of values) if (typeof v === 'string') this.bytes(field, Buffer.from(v, 'utf8'));
  }

  bool(field: number, value: unknown): void {
    if (value === true) {
      this.tag(field, 0);
      this.varint(1);
    }
  }

  /** A oneof member: present even when false (proto3 gives oneof fields presence). */
  oneofBool(field: number, value: boolean): void {
    this.tag(field, 0);
    this.varint(value ? 1 : 0);
  }

  int64(field: number, value: unknown): void {
    if (typeof value === 'number' && Number.isInteger(value) && value !== 0) {
      this.tag(field, 0);
      this.varint(value);
    }
  }

  double(field: number, value: unknown): void {
    if (typeof value === 'number' && value !== 0) {
      this.tag(field, 1);
      const data = Buffer.alloc(8);
      data.writeDoubleLE(value);
      this.chunks.push(data);
    }
  }

  /** A sub-message; written even when empty, since presence can matter (`properties: {}`). */
  message(field: number, build: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    build(inner);
    this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** gnostic `Any`: a value as YAML text (JSON is YAML). */
function writeAny(w: ProtoWriter, value: Json): void {
  w.string(2, JSON.stringify(value));
}

/** `x-…` keys of an object as repeated `NamedAny` in `field`. */
function writeExtensions(w: ProtoWriter, field: number, object: JsonObject): void {
  for (const [name, value] of Object.entries(object)) {
    if (!name.startsWith('x-')) continue;
    w.message(field, (named) => {
      named.string(1, name);
      named.message(2, (any) => writeAny(any, value));
    });
  }
}

function writeSchema(w: ProtoWriter, s: JsonObject): void {
  w.string(1, s.$ref);
  w.string(2, s.format);
  w.string(3, s.title);
  w.string(4, s.description);
  if (s.default !== undefined) w.message(5, (any) => writeAny(any, s.default as Json));
  w.double(6, s.multipleOf);
  w.double(7, s.maximum);
  w.bool(8, s.exclusiveMaximum);
  w.double(9, s.minimum);
  w.bool(10, s.exclusiveMinimum);
  w.int64(11, s.maxLength);
  w.int64(12, s.minLength);
  w.string(13, s.pattern);
  w.int64(14, s.maxItems);
  w.int64(15, s.minItems);
  w.bool(16, s.uniqueItems);
  w.int64(17, s.maxProperties);
  w.int64(18, s.minProperties);
  w.strings(19, s.required);
  if (Array.isArray(s.enum)) for (const value of s.enum) w.message(20, (any) => writeAny(any, value));
  const additional = s.additionalProperties;
  if (isJsonObject(additional)) w.message(21, (item) => item.message(1, (schema) => writeSchema(schema, additional)));
  else if (typeof additional === 'boolean') w.message(21, (item) => item.oneofBool(2, additional));
  if (typeof s.type === 'string') w.message(22, (type) => type.string(1, s.type));
  const items = s.items;
  if (isJsonObject(items)) w.message(23, (item) => item.message(1, (schema) => writeSchema(schema, items)));
  const properties = s.properties;
  if (isJsonObject(properties)) {
    w.message(25, (props) => {
      for (const [name, child] of Object.entries(properties)) {
        if (!isJsonObject(child)) continue;
        props.message(1, (named) => {
          named.string(1, name);
          named.message(2, (schema) => writeSchema(schema, child));
        });
      }
    });
  }
  w.bool(27, s.readOnly);
  if (s.example !== undefined) w.message(30, (any) => writeAny(any, s.example as Json));
  writeExtensions(w, 31, s);
}

function writeParameter(w: ProtoWriter, p: JsonObject): void {
  // ParametersItem.parameter → Parameter
  w.message(1, (parameter) => {
    if (p.in === 'body') {
      parameter.message(1, (body) => {
        body.string(1, p.description);
        body.string(2, p.name);
        body.string(3, p.in);
        body.bool(4, p.required);
        if (isJsonObject(p.schema)) body.message(5, (schema) => writeSchema(schema, p.schema as JsonObject));
      });
      return;
    }
    parameter.message(2, (nonBody) => {
      if (p.in === 'query') {
        nonBody.message(3, (q) => {
          q.bool(1, p.required);
          q.string(2, p.in);
          q.string(3, p.description);
          q.string(4, p.name);
          q.string(6, p.type);
          q.string(7, p.format);
          q.bool(20, p.uniqueItems);
        });
      } else {
        nonBody.message(4, (path) => {
          path.bool(1, p.required);
          path.string(2, p.in);
          path.string(3, p.description);
          path.string(4, p.name);
          path.string(5, p.type);
          path.string(6, p.format);
          path.bool(19, p.uniqueItems);
        });
      }
    });
  });
}

function writeOperation(w: ProtoWriter, op: JsonObject): void {
  w.strings(1, op.tags);
  w.string(2, op.summary);
  w.string(3, op.description);
  w.string(5, op.operationId);
  w.strings(6, op.produces);
  w.strings(7, op.consumes);
  if (Array.isArray(op.parameters)) for (const p of op.parameters) if (isJsonObject(p)) w.message(8, (item) => writeParameter(item, p));
  const responses = op.responses;
  if (isJsonObject(responses)) {
    w.message(9, (rs) => {
      for (const [code, response] of Object.entries(responses)) {
        if (!isJsonObject(response)) continue;
        rs.message(1, (named) => {
          named.string(1, code);
          named.message(2, (value) =>
            value.message(1, (r) => {
              r.string(1, response.description);
              if (isJsonObject(response.schema)) r.message(2, (item) => item.message(1, (schema) => writeSchema(schema, response.schema as JsonObject)));
            }),
          );
        });
      }
    });
  }
  w.strings(10, op.schemes);
  w.bool(11, op.deprecated);
  writeExtensions(w, 13, op);
}

const PATH_ITEM_FIELDS: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

/** Encodes a Swagger 2.0 document as the gnostic `openapi.v2.Document` message client-go decodes. */
export function encodeOpenApiV2(doc: JsonObject): Buffer {
  const w = new ProtoWriter();
  w.string(1, doc.swagger);
  const info = doc.info;
  if (isJsonObject(info)) {
    w.message(2, (i) => {
      i.string(1, info.title);
      i.string(2, info.version);
      i.string(3, info.description);
    });
  }
  w.string(3, doc.host);
  w.string(4, doc.basePath);
  w.strings(5, doc.schemes);
  w.strings(6, doc.consumes);
  w.strings(7, doc.produces);
  const paths = doc.paths;
  if (isJsonObject(paths)) {
    w.message(8, (ps) => {
      for (const [path, item] of Object.entries(paths)) {
        if (!isJsonObject(item)) continue;
        ps.message(2, (named) => {
          named.string(1, path);
          named.message(2, (pi) => {
            for (const [method, field] of Object.entries(PATH_ITEM_FIELDS)) {
              const op = item[method];
              if (isJsonObject(op)) pi.message(field, (o) => writeOperation(o, op));
            }
            if (Array.isArray(item.parameters)) for (const p of item.parameters) if (isJsonObject(p)) pi.message(9, (pw) => writeParameter(pw, p));
            writeExtensions(pi, 10, item);
          });
        });
      }
    });
  }
  const definitions = doc.definitions;
  if (isJsonObject(definitions)) {
    w.message(9, (defs) => {
      for (const [name, schema] of Object.entries(definitions)) {
        if (!isJsonObject(schema)) continue;
        defs.message(1, (named) => {
          named.string(1, name);
          named.message(2, (s) => writeSchema(s, schema));
        });
      }
    });
  }
  writeExtensions(w, 16, doc);
  return w.finish();
}
