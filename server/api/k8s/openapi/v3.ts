import { definitionsOf } from './group-versions.js';
import type { JsonObject } from './json.js';
import { GVK_EXTENSION, INFO, ref, tagOf } from './names.js';
import { type Operation, type Parameter, resourcePaths } from './operations.js';
import { schemasFor } from './schemas.js';

/** The OpenAPI 3.0 document of each group version: its resources' paths and component schemas. */

function v3Parameter(p: Parameter): JsonObject {
  return {
    name: p.name,
    in: p.in,
    description: p.description,
    ...(p.required && { required: true }),
    schema: { type: p.type, uniqueItems: true },
  };
}

function v3Operation(op: Operation, tag: string): JsonObject {
  const content = (schema: string, types: string[]): JsonObject => Object.fromEntries(types.map((t) => [t, { schema: ref(schema) }]));
  return {
    tags: [tag],
    description: op.description,
    operationId: op.operationId,
    ...(op.parameters.length && { parameters: op.parameters.map(v3Parameter) }),
    ...(op.body && { requestBody: { content: content(op.body.schema, op.body.contentTypes), ...(op.body.required && { required: true }) } }),
    responses: Object.fromEntries(
      op.responses.map((r) => [
        r.code,
        { description: r.description, content: r.text ? { 'text/plain': { schema: { type: 'string' } } } : content(r.schema, ['application/json']) },
      ]),
    ),
    'x-kubernetes-action': op.action,
    [GVK_EXTENSION]: op.gvk,
  };
}

/** The OpenAPI v3 document of one group version, or undefined when fleetsim serves none. */
export function openApiV3Document(group: string, version: string): JsonObject | undefined {
  const definitions = definitionsOf(group, version);
  if (definitions.length === 0) return undefined;
  const tag = tagOf(group, version);
  const paths: JsonObject = {};
  for (const item of definitions.flatMap(resourcePaths)) {
    const entry: JsonObject = {};
    for (const op of item.operations) entry[op.method] = v3Operation(op, tag);
    if (item.parameters.length) entry.parameters = item.parameters.map(v3Parameter);
    paths[item.path] = entry;
  }
  return { openapi: '3.0.0', info: INFO, paths, components: { schemas: schemasFor(definitions) } };
}
