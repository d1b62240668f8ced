import { createHash } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { KIND_DEFINITIONS } from '../kinds/definitions.js';
import { jsonEqual } from '../kinds/common.js';
import { apiVersionOf, type KindDefinition } from '../kinds/registry.js';
import { OBJECT_META_SCHEMA } from '../k8s/schema.js';
import { ApiError, apiErrors } from '../k8s/status.js';
import { VERSION_INFO } from './discovery.js';

/**
 * The OpenAPI documents kubectl and client libraries fetch, generated from the kind definitions
 * (one source of truth: the same schemas check request bodies):
 *
 * - `GET /openapi/v3`: the index, `paths["apis/<group>/<version>"].serverRelativeURL`;
 * - `GET /openapi/v3/apis/<group>/<version>` and `/openapi/v3/api/v1`: one document per group
 *   version, with `components.schemas` named as Kubernetes names them (`dev.agones.v1.Fleet`,
 *   `io.k8s.api.core.v1.Secret`) and carrying `x-kubernetes-group-version-kind`, and the
 *   resources' paths. kubectl reads the PATCH operations: their `fieldValidation` query
 *   parameter tells it the server validates fields itself (it then sends
 *   `fieldValidation=Strict` instead of validating client-side), and their request content
 *   types tell `kubectl apply` which patch to send (no strategic merge patch here, so it sends a
 *   JSON merge patch). `kubectl explain` reads the component schemas.
 * - `GET /openapi/v2`: the same in Swagger 2.0, as JSON or, when asked for with
 *   `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (client-go always
 *   asks so), as the gnostic protobuf encoding; any other Accept is answered 406. kubectl 1.32
 *   fetches it when `apply` patches an existing object (the v3 PATCH offers no strategic merge
 *   patch, so it looks up the v2 `consumes` before falling back to a JSON merge patch), for
 *   client-side validation when the v3 PATCH has no `fieldValidation` parameter, when v3 is
 *   missing, and for `kubectl explain --output plaintext-openapiv2`. Without any OpenAPI,
 *   `kubectl apply` fails ("failed to download openapi ... turn validation off with
 *   --validate=false").
 */

// -- JSON values -----------------------------------------------------------------------------

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

function isJsonObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toJson(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null)) as Json;
}

// -- names -----------------------------------------------------------------------------------

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const OBJECT_META = `${META}.ObjectMeta`;
const LIST_META = `${META}.ListMeta`;
const STATUS = `${META}.Status`;
const STATUS_DETAILS = `${META}.StatusDetails`;
const STATUS_CAUSE = `${META}.StatusCause`;
const DELETE_OPTIONS = `${META}.DeleteOptions`;
const PATCH = `${META}.Patch`;
const SCALE = 'io.k8s.api.autoscaling.v1.Scale';
const SCALE_SPEC = 'io.k8s.api.autoscaling.v1.ScaleSpec';
const SCALE_STATUS = 'io.k8s.api.autoscaling.v1.ScaleStatus';

export const GVK_EXTENSION = 'x-kubernetes-group-version-kind';
/**
 * The protobuf media type, as client-go asks for it. The `@` makes it an invalid MIME type for
 * Go's mime.ParseMediaType, so the answer is labelled with the `.v1.0` spelling (which the
 * Kubernetes API server also accepts and answers with); client-go fails on a response labelled
 * with the `@` spelling ("mime: unexpected content after media subtype").
 */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** Patch content types the resource service applies (it answers others with 415). */
export const PATCH_CONTENT_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

/** Kubernetes's schema name prefix of a group: `agones.dev` → `dev.agones`, core → `io.k8s.api.core`. */
export function schemaPrefix(group: string): string {
  return group === '' ? 'io.k8s.api.core' : group.split('.').reverse().join('.');
}

export function schemaName(group: string, version: string, kind: string): string {
  return `${schemaPrefix(group)}.${version}.${kind}`;
}

/** The key of a group version in the v3 index (no leading slash): `apis/agones.dev/v1`, `api/v1`. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function gvk(group: string, version: string, kind: string): JsonObject {
  return { group, kind, version };
}

function ref(name: string): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

/** A reference with a description beside it (OpenAPI 3.0 ignores siblings of a bare $ref). */
function refWith(name: string, description: string): JsonObject {
  return { allOf: [ref(name)], description };
}

function pascal(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `agones.dev` → `AgonesDev`, core → `Core` (Kubernetes's operationId group part). */
function operationGroup(group: string): string {
  if (group === '') return 'Core';
  return group
    .split(/[.-]/)
    .filter((p) => p !== '')
    .map(pascal)
    .join('');
}

// -- schemas ---------------------------------------------------------------------------------

const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. In CamelCase.';
const METADATA_DESCRIPTION = "Standard object's metadata.";
const LIST_METADATA_DESCRIPTION = "Standard list metadata.";

/** A kind's schema as published: its own schema, with standard descriptions and ObjectMeta by reference. */
function kindSchema(definition: KindDefinition): JsonObject {
  const schema = toJson(definition.schema) as JsonObject;
  const properties = isJsonObject(schema.properties) ? schema.properties : undefined;
  if (properties) {
    const apiVersion = properties.apiVersion;
    if (isJsonObject(apiVersion) && apiVersion.description === undefined) apiVersion.description = API_VERSION_DESCRIPTION;
    const kind = properties.kind;
    if (isJsonObject(kind) && kind.description === undefined) kind.description = KIND_DESCRIPTION;
    const metadata = definition.schema.properties?.metadata;
    if (metadata && jsonEqual(metadata, OBJECT_META_SCHEMA)) {
      properties.metadata = refWith(OBJECT_META, metadata.description ?? METADATA_DESCRIPTION);
    }
  }
  if (schema.description === undefined) schema.description = `${definition.kind} (${apiVersionOf(definition)}), served by fleetsim.`;
  schema[GVK_EXTENSION] = [gvk(definition.group, definition.version, definition.kind)];
  return schema;
}

function listSchema(definition: KindDefinition): JsonObject {
  const item = schemaName(definition.group, definition.version, definition.kind);
  return {
    description: `${definition.listKind} is a list of ${definition.kind}.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: API_VERSION_DESCRIPTION },
      items: { type: 'array', description: `List of ${definition.plural}.`, items: ref(item) },
      kind: { type: 'string', description: KIND_DESCRIPTION },
      metadata: refWith(LIST_META, LIST_METADATA_DESCRIPTION),
    },
    [GVK_EXTENSION]: [gvk(definition.group, definition.version, definition.listKind)],
  };
}

/** The apimachinery and autoscaling types the operations refer to. */
function sharedSchemas(withScale: boolean): Record<string, JsonObject> {
  const string = (description: string): JsonObject => ({ type: 'string', description });
  const schemas: Record<string, JsonObject> = {
    [OBJECT_META]: {
      ...(toJson(OBJECT_META_SCHEMA) as JsonObject),
      description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
    },
    [LIST_META]: {
      description: 'ListMeta describes metadata that synthetic resources must have, including lists.',
      type: 'object',
      properties: {
        continue: string('continue may be set if the user set a limit on the number of items returned.'),
        remainingItemCount: { type: 'integer', format: 'int64', description: 'The number of subsequent items in the list.' },
        resourceVersion: string('String that identifies the server\'s internal version of this object.'),
        selfLink: string('Deprecated.'),
      },
    },
    [STATUS_CAUSE]: {
      description: 'StatusCause provides more information about an api.Status failure.',
      type: 'object',
      properties: {
        field: string('The field of the resource that has caused this error, as named by its JSON serialization.'),
        message: string('A human-readable description of the cause of the error.'),
        reason: string('A machine-readable description of the cause of the error.'),
      },
    },
    [STATUS_DETAILS]: {
      description: 'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response.',
      type: 'object',
      properties: {
        causes: { type: 'array', description: 'The Causes array includes more details associated with the failure.', items: ref(STATUS_CAUSE) },
        group: string('The group attribute of the resource associated with the status StatusReason.'),
        kind: string('The kind attribute of the resource associated with the status StatusReason.'),
        name: string('The name attribute of the resource associated with the status StatusReason.'),
        retryAfterSeconds: { type: 'integer', format: 'int32', description: 'The number of seconds before the client should attempt to retry.' },
        uid: string('UID of the resource.'),
      },
    },
    [STATUS]: {
      description: 'Status is a return value for calls that don\'t return other objects.',
      type: 'object',
      properties: {
        apiVersion: string(API_VERSION_DESCRIPTION),
        code: { type: 'integer', format: 'int32', description: 'Suggested HTTP return code for this status, 0 if not set.' },
        details: refWith(STATUS_DETAILS, 'Extended data associated with the reason.'),
        kind: string(KIND_DESCRIPTION),
        message: string('A human-readable description of the status of this operation.'),
        metadata: refWith(LIST_META, LIST_METADATA_DESCRIPTION),
        reason: string('A machine-readable description of why this operation is in the "Failure" status.'),
        status: string('Status of the operation. One of: "Success" or "Failure".'),
      },
      [GVK_EXTENSION]: [gvk('', 'v1', 'Status')],
    },
    [DELETE_OPTIONS]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        apiVersion: string(API_VERSION_DESCRIPTION),
        dryRun: { type: 'array', description: 'When present, indicates that modifications should not be persisted.', items: { type: 'string' } },
        gracePeriodSeconds: { type: 'integer', format: 'int64', description: 'The duration in seconds before the object should be deleted.' },
        kind: string(KIND_DESCRIPTION),
        propagationPolicy: string('Whether and how garbage collection will be performed.'),
      },
    },
    [PATCH]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
  };
  if (withScale) {
    schemas[SCALE_SPEC] = {
      description: 'ScaleSpec describes the attributes of a scale subresource.',
      type: 'object',
      properties: { replicas: { type: 'integer', format: 'int32', description: 'The desired number of instances for the scaled object.' } },
    };
    schemas[SCALE_STATUS] = {
      description: 'ScaleStatus represents the current status of a scale subresource.',
      type: 'object',
      required: ['replicas'],
      properties: {
        replicas: { type: 'integer', format: 'int32', description: 'The actual number of observed instances of the scaled object.' },
        selector: string('The label query over pods that should match the replicas count.'),
      },
    };
    schemas[SCALE] = {
      description: 'Scale represents a scaling request for a resource.',
      type: 'object',
      properties: {
        apiVersion: string(API_VERSION_DESCRIPTION),
        kind: string(KIND_DESCRIPTION),
        metadata: refWith(OBJECT_META, METADATA_DESCRIPTION),
        spec: refWith(SCALE_SPEC, 'The desired behavior of the scale.'),
        status: refWith(SCALE_STATUS, 'The current status of the scale.'),
      },
      [GVK_EXTENSION]: [gvk('autoscaling', 'v1', 'Scale')],
    };
  }
  return schemas;
}

// -- operations (a neutral form both versions are rendered from) -----------------------------

interface Parameter {
  name: string;
  in: 'path' | 'query';
  description: string;
  type: 'string' | 'integer' | 'boolean';
  required?: boolean;
}

interface Operation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  operationId: string;
  description: string;
  action: string;
  gvk: JsonObject;
  parameters: Parameter[];
  /** Request body: the schema it must match and the content types accepted. */
  body?: { schema: string; contentTypes: string[]; required: boolean };
  responses: Array<{ code: string; description: string; schema: string }>;
}

interface PathItem {
  path: string;
  parameters: Parameter[];
  operations: Operation[];
}

const NAME_PARAM: Parameter = { name: 'name', in: 'path', description: 'name of the object', type: 'string', required: true };
const NAMESPACE_PARAM: Parameter = {
  name: 'namespace',
  in: 'path',
  description: 'object name and auth scope, such as for teams and projects',
  type: 'string',
  required: true,
};

const DRY_RUN: Parameter = {
  name: 'dryRun',
  in: 'query',
  description: 'When present, indicates that modifications should not be persisted. The only valid value is "All".',
  type: 'string',
};
const FIELD_MANAGER: Parameter = {
  name: 'fieldManager',
  in: 'query',
  description: 'A name associated with the actor or entity that is making these changes (accepted; fleetsim keeps no managed fields).',
  type: 'string',
};
const FIELD_VALIDATION: Parameter = {
  name: 'fieldValidation',
  in: 'query',
  description:
    'How the server treats fields the schema does not know: Ignore drops them, Warn accepts the request and names them in a warning, Strict (the default) rejects the request with a BadRequest naming them.',
  type: 'string',
};
const LIST_PARAMS: Parameter[] = [
  { name: 'fieldSelector', in: 'query', description: 'A selector to restrict the list of returned objects by their fields (metadata.name=NAME).', type: 'string' },
  { name: 'labelSelector', in: 'query', description: 'A selector to restrict the list of returned objects by their labels.', type: 'string' },
  { name: 'limit', in: 'query', description: 'The most items a list returns; when more remain, metadata.continue holds the token of the next page.', type: 'integer' },
  { name: 'continue', in: 'query', description: 'The metadata.continue token of the previous page of a list.', type: 'string' },
  { name: 'resourceVersion', in: 'query', description: 'For a watch, the resourceVersion to start from; for a list, the resourceVersion it is read at (see resourceVersionMatch).', type: 'string' },
  { name: 'resourceVersionMatch', in: 'query', description: 'How a list reads resourceVersion: NotOlderThan or Exact. Requires resourceVersion.', type: 'string' },
  { name: 'timeoutSeconds', in: 'query', description: 'Timeout for the watch call.', type: 'integer' },
  { name: 'watch', in: 'query', description: 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.', type: 'boolean' },
];
const WRITE_PARAMS = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];

function resourcePaths(definition: KindDefinition): PathItem[] {
  const { group, version, kind, plural, namespaced, verbs } = definition;
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const scope = namespaced ? `${base}/namespaces/{namespace}` : base;
  const scopeParams = namespaced ? [NAMESPACE_PARAM] : [];
  const id = `${operationGroup(group)}${pascal(version)}${namespaced ? 'Namespaced' : ''}`;
  const self = gvk(group, version, kind);
  const object = schemaName(group, version, kind);
  const list = schemaName(group, version, definition.listKind);
  const can = (verb: string) => verbs.includes(verb);
  const items: PathItem[] = [];

  const collection: Operation[] = [];
  if (can('list')) {
    collection.push({
      method: 'get',
      operationId: `list${id}${kind}`,
      description: `list or watch objects of kind ${kind}`,
      action: 'list',
      gvk: self,
      parameters: LIST_PARAMS,
      responses: [{ code: '200', description: 'OK', schema: list }],
    });
  }
  if (can('create')) {
    collection.push({
      method: 'post',
      operationId: `create${id}${kind}`,
      description: `create a ${kind}`,
      action: 'post',
      gvk: self,
      parameters: WRITE_PARAMS,
      body: { schema: object, contentTypes: ['application/json', 'application/yaml'], required: true },
      responses: [
        { code: '200', description: 'OK', schema: object },
        { code: '201', description: 'Created', schema: object },
      ],
    });
  }
  if (can('deletecollection')) {
    collection.push({
      method: 'delete',
      operationId: `deletecollection${id}${kind}`,
      description: `delete collection of ${kind}`,
      action: 'deletecollection',
      gvk: self,
      parameters: [DRY_RUN, ...LIST_PARAMS.filter((p) => p.name !== 'watch')],
      responses: [{ code: '200', description: 'OK', schema: STATUS }],
    });
  }
  if (collection.length) items.push({ path: `${scope}/${plural}`, parameters: scopeParams, operations: collection });

  const single: Operation[] = [];
  if (can('get')) {
    single.push({
      method: 'get',
      operationId: `read${id}${kind}`,
      description: `read the specified ${kind}`,
      action: 'get',
      gvk: self,
      parameters: [],
      responses: [{ code: '200', description: 'OK', schema: object }],
    });
  }
  if (can('update')) {
    single.push({
      method: 'put',
      operationId: `replace${id}${kind}`,
      description: `replace the specified ${kind}`,
      action: 'put',
      gvk: self,
      parameters: WRITE_PARAMS,
      body: { schema: object, contentTypes: ['application/json', 'application/yaml'], required: true },
      responses: [{ code: '200', description: 'OK', schema: object }],
    });
  }
  if (can('patch')) {
    single.push({
      method: 'patch',
      operationId: `patch${id}${kind}`,
      description: `partially update the specified ${kind}`,
      action: 'patch',
      gvk: self,
      parameters: WRITE_PARAMS,
      body: { schema: PATCH, contentTypes: PATCH_CONTENT_TYPES, required: true },
      responses: [{ code: '200', description: 'OK', schema: object }],
    });
  }
  if (can('delete')) {
    single.push({
      method: 'delete',
      operationId: `delete${id}${kind}`,
      description: `delete a ${kind}`,
      action: 'delete',
      gvk: self,
      parameters: [DRY_RUN],
      body: { schema: DELETE_OPTIONS, contentTypes: ['application/json'], required: false },
      responses: [{ code: '200', description: 'OK', schema: STATUS }],
    });
  }
  if (single.length) items.push({ path: `${scope}/${plural}/{name}`, parameters: [NAME_PARAM, ...scopeParams], operations: single });

  if (definition.subresources.status) {
    items.push({
      path: `${scope}/${plural}/{name}/status`,
      parameters: [NAME_PARAM, ...scopeParams],
      operations: [
        { method: 'get', operationId: `read${id}${kind}Status`, description: `read status of the specified ${kind}`, action: 'get', gvk: self, parameters: [], responses: [{ code: '200', description: 'OK', schema: object }] },
        {
          method: 'put',
          operationId: `replace${id}${kind}Status`,
          description: `replace status of the specified ${kind}`,
          action: 'put',
          gvk: self,
          parameters: WRITE_PARAMS,
          body: { schema: object, contentTypes: ['application/json'], required: true },
          responses: [{ code: '200', description: 'OK', schema: object }],
        },
        {
          method: 'patch',
          operationId: `patch${id}${kind}Status`,
          description: `partially update status of the specified ${kind}`,
          action: 'patch',
          gvk: self,
          parameters: WRITE_PARAMS,
          body: { schema: PATCH, contentTypes: ['application/merge-patch+json'], required: true },
          responses: [{ code: '200', description: 'OK', schema: object }],
        },
      ],
    });
  }
  if (definition.subresources.scale) {
    const scale = gvk('autoscaling', 'v1', 'Scale');
    items.push({
      path: `${scope}/${plural}/{name}/scale`,
      parameters: [NAME_PARAM, ...scopeParams],
      operations: [
        { method: 'get', operationId: `read${id}${kind}Scale`, description: `read scale of the specified ${kind}`, action: 'get', gvk: scale, parameters: [], responses: [{ code: '200', description: 'OK', schema: SCALE }] },
        {
          method: 'put',
          operationId: `replace${id}${kind}Scale`,
          description: `replace scale of the specified ${kind}`,
          action: 'put',
          gvk: scale,
          parameters: WRITE_PARAMS,
          body: { schema: SCALE, contentTypes: ['application/json'], required: true },
          responses: [{ code: '200', description: 'OK', schema: SCALE }],
        },
        {
          method: 'patch',
          operationId: `patch${id}${kind}Scale`,
          description: `partially update scale of the specified ${kind}`,
          action: 'patch',
          gvk: scale,
          parameters: WRITE_PARAMS,
          body: { schema: PATCH, contentTypes: PATCH_CONTENT_TYPES, required: true },
          responses: [{ code: '200', description: 'OK', schema: SCALE }],
        },
      ],
    });
  }
  if (namespaced && can('list')) {
    items.push({
      path: `${base}/${plural}`,
      parameters: [],
      operations: [
        {
          method: 'get',
          operationId: `list${operationGroup(group)}${pascal(version)}${kind}ForAllNamespaces`,
          description: `list or watch objects of kind ${kind} in every namespace`,
          action: 'list',
          gvk: self,
          parameters: LIST_PARAMS,
          responses: [{ code: '200', description: 'OK', schema: list }],
        },
      ],
    });
  }
  return items;
}

// -- group versions --------------------------------------------------------------------------

export interface GroupVersion {
  group: string;
  version: string;
}

export function groupVersions(): GroupVersion[] {
  const seen = new Map<string, GroupVersion>();
  for (const d of KIND_DEFINITIONS) seen.set(groupVersionPath(d.group, d.version), { group: d.group, version: d.version });
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, gv]) => gv);
}

function definitionsOf(group: string, version: string): KindDefinition[] {
  return KIND_DEFINITIONS.filter((d) => d.group === group && d.version === version);
}

/** Component schemas of a group version (or of every group version, for v2). */
function schemasFor(definitions: KindDefinition[]): Record<string, JsonObject> {
  const schemas = sharedSchemas(definitions.some((d) => d.subresources.scale));
  for (const d of definitions) {
    schemas[schemaName(d.group, d.version, d.kind)] = kindSchema(d);
    if (d.verbs.includes('list')) schemas[schemaName(d.group, d.version, d.listKind)] = listSchema(d);
  }
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

const INFO: JsonObject = { title: 'Kubernetes', version: VERSION_INFO.gitVersion };

// -- OpenAPI v3 ------------------------------------------------------------------------------

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
      op.responses.map((r) => [r.code, { description: r.description, content: content(r.schema, ['application/json']) }]),
    ),
    'x-kubernetes-action': op.action,
    [GVK_EXTENSION]: op.gvk,
  };
}

function tagOf(group: string, version: string): string {
  return `${group === '' ? 'core' : group.replace(/\./g, '_')}_${version}`;
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

// -- OpenAPI v2 ------------------------------------------------------------------------------

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
    produces: ['application/json'],
    schemes: ['http'],
    ...(parameters.length && { parameters }),
    responses: Object.fromEntries(op.responses.map((r) => [r.code, { description: r.description, schema: toV2Schema(ref(r.schema)) }])),
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

// -- the gnostic protobuf encoding of a v2 document ------------------------------------------

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

// -- serving ---------------------------------------------------------------------------------

interface Rendered {
  body: Buffer;
  hash: string;
}

function render(body: Buffer): Rendered {
  return { body, hash: createHash('sha256').update(body).digest('hex').toUpperCase() };
}

/** Media ranges of an Accept header, best first (RFC 9110 q-values; q=0 means "not this"). */
export function acceptedTypes(header: string | undefined): string[] {
  if (!header || header.trim() === '') return ['*/*'];
  return header
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.split(';').map((p) => p.trim());
      const q = params.map((p) => /^q=([0-9.]+)$/i.exec(p)).find((m) => m !== null);
      return { type: (type ?? '').toLowerCase(), q: q ? Number(q[1]) : 1, index };
    })
    .filter((r) => r.type !== '' && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((r) => r.type);
}

/** Which v2 representation an Accept header asks for, or undefined (406). */
export function negotiateV2(header: string | undefined): 'json' | 'protobuf' | undefined {
  for (const type of acceptedTypes(header)) {
    if (type === OPENAPI_V2_PROTOBUF_ACCEPT || type === OPENAPI_V2_PROTOBUF) return 'protobuf';
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return 'json';
  }
  return undefined;
}

function sendCached(req: Request, res: Response, rendered: Rendered, contentType: string): void {
  const etag = `"${rendered.hash}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept');
  const hash = typeof req.query.hash === 'string' ? req.query.hash : undefined;
  if (hash !== undefined && hash === rendered.hash) {
    // A URL naming its content never changes: the index hands out such URLs.
    res.setHeader('Cache-Control', 'public, immutable');
    res.setHeader('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
  } else {
    res.setHeader('Cache-Control', 'no-cache, private');
  }
  if (req.headers['if-none-match'] === etag) {
    res.status(304).end();
    return;
  }
  res.status(200).type(contentType).send(rendered.body);
}

/** 406, as the API server answers an Accept it cannot serve (apiErrors has no such helper). */
function notAcceptable(message: string): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'NotAcceptable', code: 406 });
}

function sendStatus(res: Response, error: ApiError): void {
  res.status(error.code).type('application/json').send(JSON.stringify(error.status));
}

/**
 * Routes of the OpenAPI documents. The documents do not change while the process runs, so each
 * is rendered once, on first use.
 */
export function openApiRouter(): Router {
  const router = express.Router();
  const v3 = new Map<string, Rendered>();
  let v2Json: Rendered | undefined;
  let v2Proto: Rendered | undefined;

  const v3Rendered = (group: string, version: string): Rendered | undefined => {
    const key = groupVersionPath(group, version);
    let rendered = v3.get(key);
    if (!rendered) {
      const doc = openApiV3Document(group, version);
      if (!doc) return undefined;
      rendered = render(Buffer.from(JSON.stringify(doc)));
      v3.set(key, rendered);
    }
    return rendered;
  };

  router.get('/openapi/v2', (req, res) => {
    const representation = negotiateV2(req.headers.accept);
    if (!representation) {
      return sendStatus(
        res,
        notAcceptable(`only application/json and ${OPENAPI_V2_PROTOBUF} are served, not "${req.headers.accept ?? ''}"`),
      );
    }
    if (representation === 'protobuf') {
      v2Proto ??= render(encodeOpenApiV2(openApiV2Document()));
      return sendCached(req, res, v2Proto, OPENAPI_V2_PROTOBUF);
    }
    v2Json ??= render(Buffer.from(JSON.stringify(openApiV2Document())));
    return sendCached(req, res, v2Json, 'application/json');
  });

  router.get('/openapi/v3', (_req, res) => {
    const paths: JsonObject = {};
    for (const { group, version } of groupVersions()) {
      const rendered = v3Rendered(group, version);
      if (rendered) paths[groupVersionPath(group, version)] = { serverRelativeURL: `/openapi/v3/${groupVersionPath(group, version)}?hash=${rendered.hash}` };
    }
    res.setHeader('Cache-Control', 'no-cache, private');
    res.status(200).type('application/json').send(JSON.stringify({ paths }));
  });

  const serveV3 = (req: Request, res: Response, group: string, version: string) => {
    const rendered = v3Rendered(group, version);
    if (!rendered) return sendStatus(res, apiErrors.pathNotFound());
    const hash = typeof req.query.hash === 'string' ? req.query.hash : undefined;
    if (hash !== undefined && hash !== rendered.hash) {
      // As the API server does: a stale hash is sent on to the current document.
      res.setHeader('Cache-Control', 'no-cache, private');
      return res.redirect(301, `/openapi/v3/${groupVersionPath(group, version)}?hash=${rendered.hash}`);
    }
    return sendCached(req, res, rendered, 'application/json');
  };
  router.get('/openapi/v3/api/:version', (req, res) => serveV3(req, res, '', req.params.version));
  router.get('/openapi/v3/apis/:group/:version', (req, res) => serveV3(req, res, req.params.group, req.params.version));
  return router;
}
