import { KIND_DEFINITIONS } from '../../../kinds/definitions.js';
import { definitionsOf, groupVersions } from './group-versions.js';
import { isJsonObject, type JsonObject } from './json.js';
import { GVK_EXTENSION, INFO, ref, tagOf } from './names.js';
import { type Operation, type Parameter, resourcePaths } from './operations.js';
import { schemasFor } from './schemas.js';

/** The Swagger 2.0 document: every group version in one, with the schemas loosened to what v2 can say. */

const V2_KEYS = new Set([
  '$ref',
  'format',
  'title',
  'description',
  'default',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'additionalProperties',
  'type',
  'items',
  'properties',
  'readOnly',
  'example',
]);

/**
 * A v3 schema as Swagger 2.0 (and kubectl's v2 parser) can take it, the way the API server
 * publishes custom resources in v2: references move to `#/definitions/`, a described reference
 * becomes a plain `$ref`, and what v2 cannot say is loosened rather than mis-said — nullable and
 * int-or-string values lose their type, fields under x-kubernetes-preserve-unknown-fields are
 * dropped (anything goes there), an array without items loses its type, and nullable fields are
 * no longer required.
 */
export function toV2Schema(schema: JsonObject): JsonObject {
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isJsonObject(allOf[0]) && typeof allOf[0].$ref === 'string' && schema.properties === undefined) {
    return toV2Schema({ $ref: allOf[0].$ref, ...(typeof schema.description === 'string' && { description: schema.description }) });
  }
  if (typeof schema.$ref === 'string') {
    return {
      $ref: schema.$ref.replace('#/components/schemas/', '#/definitions/'),
      ...(typeof schema.description === 'string' && { description: schema.description }),
    };
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-') || V2_KEYS.has(key)) out[key] = value;
  }
  if (isJsonObject(out.properties)) {
    const properties: JsonObject = {};
    for (const [name, child] of Object.entries(out.properties)) properties[name] = isJsonObject(child) ? toV2Schema(child) : child;
    out.properties = properties;
    const nullable = Object.entries(out.properties)
      .filter(([name]) => isJsonObject(schema.properties) && isJsonObject(schema.properties[name]) && (schema.properties[name] as JsonObject).nullable === true)
      .map(([name]) => name);
    if (Array.isArray(out.required)) {
      out.required = out.required.filter((name) => !nullable.includes(String(name)));
      if (out.required.length === 0) delete out.required;
    }
  }
  if (isJsonObject(out.items)) out.items = toV2Schema(out.items);
  if (isJsonObject(out.additionalProperties)) out.additionalProperties = toV2Schema(out.additionalProperties);
  if (schema.nullable === true) {
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out.items;
    delete out.properties;
  }
  if (schema['x-kubernetes-int-or-string'] === true) delete out.type;
  if (out.type === 'array' && out.items === undefined) delete out.type;
  return out;
}

function v2Parameter(p: Parameter): JsonObject {
  return { name: p.name, in: p.in, description: p.description, ...(p.required && { required: true }), type: p.type, uniqueItems: true };
}

function v2Operation(op: Operation, tag: string): JsonObject {
  const parameters: JsonObject[] = [];
  if (op.body) parameters.push({ name: 'body', in: 'body', required: op.body.required, schema: toV2Schema(ref(op.body.schema)) });
  parameters.push(...op.parameters.map(v2Parameter));
  return {
    tags: [tag],
    description: op.description,
    operationId: op.operationId,
    ...(op.body && { consumes: op.body.contentTypes }),
    produces: op.responses.some((r) => r.text) ? ['text/plain'] : ['application/json'],
    schemes: ['http'],
    ...(parameters.length && { parameters }),
    responses: Object.fromEntries(
      op.responses.map((r) => [r.code, { description: r.description, schema: r.text ? { type: 'string' } : toV2Schema(ref(r.schema)) }]),
    ),
    'x-kubernetes-action': op.action,
    [GVK_EXTENSION]: op.gvk,
  };
}

/** The Swagger 2.0 document of everything fleetsim serves. */
export function openApiV2Document(): JsonObject {
  const paths: JsonObject = {};
  for (const { group, version } of groupVersions()) {
    const tag = tagOf(group, version);
    for (const item of definitionsOf(group, version).flatMap(resourcePaths)) {
      const entry: JsonObject = {};
      for (const op of item.operations) entry[op.method] = v2Operation(op, tag);
      if (item.parameters.length) entry.parameters = item.parameters.map(v2Parameter);
      paths[item.path] = entry;
    }
  }
  const definitions: JsonObject = {};
  for (const [name, schema] of Object.entries(schemasFor(KIND_DEFINITIONS))) definitions[name] = toV2Schema(schema);
  return { swagger: '2.0', info: INFO, paths, definitions };
}
