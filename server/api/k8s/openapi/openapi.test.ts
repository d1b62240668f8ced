import { type Server, createServer } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIND_DEFINITIONS } from '../../../kinds/definitions.js';
import { FLEET_DEFINITION } from '../../../kinds/fleet/definition.js';
import { apiResourceList } from '../discovery.js';
import { groupVersions } from './group-versions.js';
import type { Json, JsonObject } from './json.js';
import { GVK_EXTENSION, groupVersionPath, schemaName, schemaPrefix } from './names.js';
import { PATCH_CONTENT_TYPES } from './operations.js';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_ACCEPT, acceptedTypes, negotiateV2, openApiRouter } from './routes.js';
import { openApiV2Document, toV2Schema } from './v2.js';
import { encodeOpenApiV2 } from './v2-protobuf.js';
import { openApiV3Document } from './v3.js';
import { listenLocally } from '../../../../test/helpers/local-server.js';

const obj = (value: Json | undefined): JsonObject => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`not an object: ${JSON.stringify(value)}`);
  return value;
};

/** Every `$ref` in a document. */
function refs(value: Json | undefined, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

const METHOD_OF_VERB: Record<string, { item: boolean; method: string }> = {
  get: { item: true, method: 'get' },
  update: { item: true, method: 'put' },
  patch: { item: true, method: 'patch' },
  delete: { item: true, method: 'delete' },
  list: { item: false, method: 'get' },
  watch: { item: false, method: 'get' },
  create: { item: false, method: 'post' },
  deletecollection: { item: false, method: 'delete' },
};

describe('names', () => {
  it('follow Kubernetes: reversed group, version, kind', () => {
    expect(schemaPrefix('agones.dev')).toBe('dev.agones');
    expect(schemaPrefix('autoscaling.agones.dev')).toBe('dev.agones.autoscaling');
    expect(schemaPrefix('')).toBe('io.k8s.api.core');
    expect(schemaName('agones.dev', 'v1', 'Fleet')).toBe('dev.agones.v1.Fleet');
    expect(schemaName('', 'v1', 'Secret')).toBe('io.k8s.api.core.v1.Secret');
    expect(groupVersionPath('agones.dev', 'v1')).toBe('apis/agones.dev/v1');
    expect(groupVersionPath('', 'v1')).toBe('api/v1');
  });

  it('every group version of the kind definitions has a document', () => {
    const expected = new Set(KIND_DEFINITIONS.map((d) => groupVersionPath(d.group, d.version)));
    expect(new Set(groupVersions().map((gv) => groupVersionPath(gv.group, gv.version)))).toEqual(expected);
    expect(openApiV3Document('nope.dev', 'v1')).toBeUndefined();
  });
});

describe('OpenAPI v3 documents', () => {
  for (const { group, version } of groupVersions()) {
    const key = groupVersionPath(group, version);
    const definitions = KIND_DEFINITIONS.filter((d) => d.group === group && d.version === version);

    it(`${key}: every $ref resolves, and each kind and list has its schema with x-kubernetes-group-version-kind`, () => {
      const doc = openApiV3Document(group, version)!;
      expect(doc.openapi).toBe('3.0.0');
      const schemas = obj(obj(doc.components).schemas);
      for (const r of refs(doc)) {
        expect(r.startsWith('#/components/schemas/'), r).toBe(true);
        expect(schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
      }
      for (const d of definitions) {
        const schema = obj(schemas[schemaName(group, version, d.kind)]);
        expect(schema[GVK_EXTENSION]).toEqual([{ group, version, kind: d.kind }]);
        if (d.verbs.includes('list')) {
          const list = obj(schemas[schemaName(group, version, d.listKind)]);
          expect(list[GVK_EXTENSION]).toEqual([{ group, version, kind: d.listKind }]);
          expect(obj(obj(list.properties).items).items).toEqual({ $ref: `#/components/schemas/${schemaName(group, version, d.kind)}` });
        }
      }
    });

    it(`${key}: the paths serve exactly the verbs and subresources discovery advertises`, () => {
      const paths = obj(openApiV3Document(group, version)!.paths);
      const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
      for (const resource of apiResourceList(group, version)!.resources as Array<{ name: string; namespaced: boolean; verbs: string[]; kind: string }>) {
        const [plural, sub] = resource.name.split('/');
        const scope = resource.namespaced ? `${base}/namespaces/{namespace}` : base;
        if (sub) {
          const item = obj(paths[`${scope}/${plural}/{name}/${sub}`]);
          const methods = sub === 'log' ? ['get'] : sub === 'eviction' ? ['post'] : ['get', 'patch', 'put'];
          expect(Object.keys(item).filter((k) => k !== 'parameters').sort()).toEqual(methods);
          continue;
        }
        const methods = { item: new Set<string>(), collection: new Set<string>() };
        for (const verb of resource.verbs) {
          const m = METHOD_OF_VERB[verb]!;
          (m.item ? methods.item : methods.collection).add(m.method);
        }
        const item = paths[`${scope}/${plural}/{name}`];
        const collection = paths[`${scope}/${plural}`];
        expect(new Set(Object.keys(item ? obj(item) : {}).filter((k) => k !== 'parameters')), `${plural} item`).toEqual(methods.item);
        expect(new Set(Object.keys(collection ? obj(collection) : {}).filter((k) => k !== 'parameters')), `${plural} collection`).toEqual(
          methods.collection,
        );
        if (resource.verbs.includes('watch')) {
          const list = obj(obj(collection).get);
          expect((list.parameters as JsonObject[]).map((p) => p.name)).toContain('watch');
        }
      }
    });

    it(`${key}: PATCH operations carry the GVK, the fieldValidation query parameter and no strategic merge patch`, () => {
      const paths = obj(openApiV3Document(group, version)!.paths);
      const patches = Object.entries(paths).filter(([, item]) => obj(item).patch !== undefined);
      expect(patches.length).toBe(
        definitions.filter((d) => d.verbs.includes('patch')).length +
          definitions.filter((d) => d.subresources.status).length +
          definitions.filter((d) => d.subresources.scale).length,
      );
      for (const [path, item] of patches) {
        const patch = obj(obj(item).patch);
        const gvk = obj(patch[GVK_EXTENSION]);
        if (path.endsWith('/scale')) expect(gvk).toEqual({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
        else expect(definitions.map((d) => d.kind)).toContain(gvk.kind);
        expect(patch.parameters as JsonObject[]).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
        const content = Object.keys(obj(obj(patch.requestBody).content));
        expect(content).not.toContain('application/strategic-merge-patch+json');
        expect(content).toContain('application/merge-patch+json');
      }
    });
  }

  it("publishes each kind's own schema (one source of truth), with ObjectMeta by reference", () => {
    const fleet = obj(obj(obj(openApiV3Document('agones.dev', 'v1')!.components).schemas)['dev.agones.v1.Fleet']);
    const properties = obj(fleet.properties);
    expect(properties.spec).toEqual(JSON.parse(JSON.stringify(FLEET_DEFINITION.schema.properties!.spec)));
    expect(properties.metadata).toEqual({
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
      description: expect.any(String),
    });
    expect(obj(properties.apiVersion).description).toEqual(expect.stringContaining('APIVersion'));
  });

  it('the Fleet item path takes namespace and name as path parameters', () => {
    const item = obj(obj(openApiV3Document('agones.dev', 'v1')!.paths)['/apis/agones.dev/v1/namespaces/{namespace}/fleets/{name}']);
    expect((item.parameters as JsonObject[]).map((p) => [p.name, p.in, p.required])).toEqual([
      ['name', 'path', true],
      ['namespace', 'path', true],
    ]);
    expect(obj(item.get)['x-kubernetes-action']).toBe('get');
    expect(obj(obj(obj(obj(item.patch).requestBody).content)['application/merge-patch+json']).schema).toEqual({
      $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
    });
  });
});

/**
 * The rules kubectl's v2 model parser (k8s.io/kube-openapi/pkg/util/proto) enforces: a reference
 * has no type or properties and points into #/definitions; an array has exactly one items
 * schema; a type is one of the known ones.
 */
function checkV2Schema(schema: JsonObject, definitions: JsonObject, path: string): string[] {
  const problems: string[] = [];
  for (const key of ['nullable', 'allOf', 'oneOf', 'anyOf', 'not']) if (key in schema) problems.push(`${path}: has ${key}`);
  if (typeof schema.$ref === 'string') {
    if (schema.type !== undefined || schema.properties !== undefined) problems.push(`${path}: $ref with type or properties`);
    const target = schema.$ref.replace('#/definitions/', '');
    if (!schema.$ref.startsWith('#/definitions/') || definitions[target] === undefined) problems.push(`${path}: dangling ${schema.$ref}`);
    return problems;
  }
  if (schema.type !== undefined && !['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(String(schema.type))) {
    problems.push(`${path}: type ${String(schema.type)}`);
  }
  if (schema.type === 'array' && (typeof schema.items !== 'object' || schema.items === null || Array.isArray(schema.items))) {
    problems.push(`${path}: array without one items schema`);
  }
  if (schema.properties) for (const [k, v] of Object.entries(obj(schema.properties))) problems.push(...checkV2Schema(obj(v), definitions, `${path}.${k}`));
  if (schema.items) problems.push(...checkV2Schema(obj(schema.items), definitions, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') problems.push(...checkV2Schema(obj(schema.additionalProperties), definitions, `${path}{}`));
  return problems;
}

describe('OpenAPI v2 document', () => {
  it('is Swagger 2.0 that kubectl can parse, with the same schema names and GVKs', () => {
    const doc = openApiV2Document();
    expect(doc.swagger).toBe('2.0');
    const definitions = obj(doc.definitions);
    const problems = Object.entries(definitions).flatMap(([name, s]) => checkV2Schema(obj(s), definitions, name));
    expect(problems).toEqual([]);
    for (const r of refs(doc)) expect(definitions[r.replace('#/definitions/', '')], r).toBeDefined();
    for (const d of KIND_DEFINITIONS) {
      expect(obj(definitions[schemaName(d.group, d.version, d.kind)])[GVK_EXTENSION]).toEqual([{ group: d.group, version: d.version, kind: d.kind }]);
    }
  });

  it('its PATCH operations consume no strategic merge patch and take fieldValidation', () => {
    const patch = obj(obj(obj(openApiV2Document().paths)['/apis/agones.dev/v1/namespaces/{namespace}/fleets/{name}']).patch);
    expect(patch.consumes).toEqual(PATCH_CONTENT_TYPES);
    expect(patch[GVK_EXTENSION]).toEqual({ group: 'agones.dev', version: 'v1', kind: 'Fleet' });
    expect(patch.parameters as JsonObject[]).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query', type: 'string' }));
    expect(patch.parameters as JsonObject[]).toContainEqual(expect.objectContaining({ name: 'body', in: 'body', required: true }));
  });

  it('loosens what v2 cannot say, as the API server does for custom resources', () => {
    expect(
      toV2Schema({
        type: 'object',
        required: ['a', 'b'],
        properties: {
          a: { type: 'string', nullable: true },
          b: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { c: { type: 'string' } } },
          d: { 'x-kubernetes-int-or-string': true, type: 'string' },
          e: { type: 'array' },
          f: { allOf: [{ $ref: '#/components/schemas/X' }], description: 'an X' },
          g: { type: 'array', items: { type: 'integer', minimum: -1 } },
        },
      }),
    ).toEqual({
      type: 'object',
      required: ['b'],
      properties: {
        a: {},
        b: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        d: { 'x-kubernetes-int-or-string': true },
        e: {},
        f: { $ref: '#/definitions/X', description: 'an X' },
        g: { type: 'array', items: { type: 'integer', minimum: -1 } },
      },
    });
  });
});

// -- a protobuf wire-format reader, to check the encoding without the gnostic types ---------

interface WireField {
  field: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
  fixed64?: Buffer;
}

function readWire(buffer: Buffer): WireField[] {
  const out: WireField[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buffer.length) throw new Error('truncated varint');
      const byte = buffer[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buffer.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ field, wire, varint: varint() });
    else if (wire === 2) {
      const length = Number(varint());
      if (pos + length > buffer.length) throw new Error('truncated bytes');
      out.push({ field, wire, bytes: buffer.subarray(pos, pos + length) });
      pos += length;
    } else if (wire === 1) {
      out.push({ field, wire, fixed64: buffer.subarray(pos, pos + 8) });
      pos += 8;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const sub = (m: Buffer, field: number): Buffer[] => readWire(m).filter((f) => f.field === field).map((f) => f.bytes!);
const text = (m: Buffer, field: number): string | undefined => sub(m, field)[0]?.toString('utf8');
/** NamedX messages (name = 1, value = 2) in `field`, as a map. */
const named = (m: Buffer, field: number): Map<string, Buffer> => new Map(sub(m, field).map((n) => [text(n, 1)!, sub(n, 2)[0]!]));

describe('OpenAPI v2 protobuf encoding', () => {
  const doc = openApiV2Document();
  const encoded = encodeOpenApiV2(doc);

  it('is a gnostic Document: swagger, info, paths and definitions', () => {
    expect(text(encoded, 1)).toBe('2.0');
    expect(text(sub(encoded, 2)[0]!, 1)).toBe('Kubernetes');
    const paths = named(sub(encoded, 8)[0]!, 2);
    expect([...paths.keys()]).toEqual(Object.keys(obj(doc.paths)));
    const definitions = named(sub(encoded, 9)[0]!, 1);
    expect([...definitions.keys()]).toEqual(Object.keys(obj(doc.definitions)));
  });

  it("encodes a kind's schema: type, properties, $ref and the GVK vendor extension as YAML", () => {
    const definitions = named(sub(encoded, 9)[0]!, 1);
    const fleet = definitions.get('dev.agones.v1.Fleet')!;
    expect(sub(sub(fleet, 22)[0]!, 1).map((b) => b.toString())).toEqual(['object']);
    const properties = named(sub(fleet, 25)[0]!, 1);
    expect([...properties.keys()]).toEqual(Object.keys(obj(obj(obj(doc.definitions)['dev.agones.v1.Fleet']).properties)));
    expect(text(properties.get('metadata')!, 1)).toBe('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const extensions = named(fleet, 31);
    expect(JSON.parse(text(extensions.get(GVK_EXTENSION)!, 2)!)).toEqual([{ group: 'agones.dev', kind: 'Fleet', version: 'v1' }]);
  });

  it('encodes the Fleet PATCH operation: consumes, query parameters and the GVK', () => {
    const paths = named(sub(encoded, 8)[0]!, 2);
    const item = paths.get('/apis/agones.dev/v1/namespaces/{namespace}/fleets/{name}')!;
    const patch = sub(item, 8)[0]!;
    expect(sub(patch, 7).map((b) => b.toString())).toEqual(PATCH_CONTENT_TYPES);
    const queryNames = sub(patch, 8)
      .map((p) => sub(sub(p, 1)[0]!, 2)[0])
      .filter((nonBody): nonBody is Buffer => nonBody !== undefined)
      .map((nonBody) => text(sub(nonBody, 3)[0]!, 4));
    expect(queryNames).toContain('fieldValidation');
    expect(JSON.parse(text(named(patch, 13).get(GVK_EXTENSION)!, 2)!)).toEqual({ group: 'agones.dev', kind: 'Fleet', version: 'v1' });
    // Path parameters sit on the path item (field 9) as PathParameterSubSchema (4).
    const pathParams = sub(item, 9).map((p) => text(sub(sub(sub(p, 1)[0]!, 2)[0]!, 4)[0]!, 4));
    expect(pathParams).toEqual(['name', 'namespace']);
  });

  it('encodes numbers, booleans, enums, defaults and additionalProperties', () => {
    const schema = encodeOpenApiV2({
      swagger: '2.0',
      definitions: {
        X: {
          type: 'object',
          properties: {
            n: { type: 'integer', minimum: -1.5, maximum: 10, maxLength: 300, default: 3 },
            s: { type: 'string', enum: ['A', 'B'] },
            m: { type: 'object', additionalProperties: { type: 'string' } },
            b: { type: 'object', additionalProperties: false, uniqueItems: true },
          },
        },
      },
    });
    const x = named(sub(schema, 9)[0]!, 1).get('X')!;
    const props = named(sub(x, 25)[0]!, 1);
    const n = readWire(props.get('n')!);
    expect(n.find((f) => f.field === 9)!.fixed64!.readDoubleLE()).toBe(-1.5);
    expect(n.find((f) => f.field === 7)!.fixed64!.readDoubleLE()).toBe(10);
    expect(n.find((f) => f.field === 11)!.varint).toBe(300n);
    expect(text(sub(props.get('n')!, 5)[0]!, 2)).toBe('3');
    expect(sub(props.get('s')!, 20).map((any) => text(any, 2))).toEqual(['"A"', '"B"']);
    expect(sub(sub(sub(props.get('m')!, 21)[0]!, 1)[0]!, 22).length).toBe(1);
    const b = readWire(props.get('b')!);
    expect(readWire(b.find((f) => f.field === 21)!.bytes!)).toEqual([{ field: 2, wire: 0, varint: 0n }]);
    expect(b.find((f) => f.field === 16)!.varint).toBe(1n);
  });
});

describe('content negotiation', () => {
  it('orders media ranges by q, dropping q=0', () => {
    expect(acceptedTypes(undefined)).toEqual(['*/*']);
    expect(acceptedTypes('text/html;q=0.5, application/json, application/xml;q=0')).toEqual(['application/json', 'text/html']);
  });

  it('answers v2 as protobuf when asked as client-go asks, JSON for JSON or anything, none otherwise', () => {
    expect(negotiateV2(OPENAPI_V2_PROTOBUF_ACCEPT)).toBe('protobuf');
    expect(negotiateV2(OPENAPI_V2_PROTOBUF)).toBe('protobuf');
    expect(negotiateV2(`${OPENAPI_V2_PROTOBUF_ACCEPT}, application/json;q=0.5`)).toBe('protobuf');
    expect(negotiateV2('application/json')).toBe('json');
    expect(negotiateV2(undefined)).toBe('json');
    expect(negotiateV2('*/*')).toBe('json');
    expect(negotiateV2('text/html')).toBeUndefined();
    expect(negotiateV2('application/json;q=0')).toBeUndefined();
  });
});

describe('the OpenAPI routes over HTTP', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer(express().use(openApiRouter()));
    base = await listenLocally(server);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('the v3 index points at each group version by a content-hashed URL, cached as immutable', async () => {
    const index = (await (await fetch(`${base}/openapi/v3`)).json()) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(Object.keys(index.paths).sort()).toEqual(groupVersions().map((gv) => groupVersionPath(gv.group, gv.version)).sort());
    for (const [key, { serverRelativeURL }] of Object.entries(index.paths)) {
      expect(serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${key}\\?hash=[0-9A-F]{64}$`));
      const res = await fetch(`${base}${serverRelativeURL}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('public, immutable');
      const doc = (await res.json()) as JsonObject;
      expect(doc.openapi).toBe('3.0.0');
      const etag = res.headers.get('etag')!;
      expect((await fetch(`${base}${serverRelativeURL}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
  });

  it('a stale hash is sent on to the current document; an unknown group version is a 404 Status', async () => {
    const stale = await fetch(`${base}/openapi/v3/apis/agones.dev/v1?hash=OLD`, { redirect: 'manual' });
    expect(stale.status).toBe(301);
    expect(stale.headers.get('location')).toMatch(/^\/openapi\/v3\/apis\/agones\.dev\/v1\?hash=[0-9A-F]{64}$/);
    const plain = await fetch(`${base}/openapi/v3/apis/agones.dev/v1`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('no-cache, private');
    const missing = await fetch(`${base}/openapi/v3/apis/nope.dev/v1`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('v2 is JSON by default, protobuf when asked, 406 for anything else', async () => {
    const json = await fetch(`${base}/openapi/v2`);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await json.json()) as JsonObject).swagger).toBe('2.0');
    const proto = await fetch(`${base}/openapi/v2`, { headers: { accept: OPENAPI_V2_PROTOBUF_ACCEPT } });
    expect(proto.status).toBe(200);
    expect(proto.headers.get('content-type')).toBe(OPENAPI_V2_PROTOBUF);
    expect(Buffer.from(await proto.arrayBuffer())).toEqual(encodeOpenApiV2(openApiV2Document()));
    const html = await fetch(`${base}/openapi/v2`, { headers: { accept: 'text/html' } });
    expect(html.status).toBe(406);
    expect(await html.json()).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
  });
});
