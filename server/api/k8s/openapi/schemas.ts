import { apiVersionOf, type KindDefinition } from '../../../kinds/registry.js';
import { jsonEqual } from '../../../kinds/common.js';
import { OBJECT_META_SCHEMA } from '../../../k8s/schema.js';
import { isJsonObject, type JsonObject, toJson } from './json.js';
import {
  DELETE_OPTIONS,
  EVICTION,
  GVK_EXTENSION,
  LIST_META,
  OBJECT_META,
  PATCH,
  SCALE,
  SCALE_SPEC,
  SCALE_STATUS,
  STATUS,
  STATUS_CAUSE,
  STATUS_DETAILS,
  gvk,
  ref,
  refWith,
  schemaName,
} from './names.js';

/** The component schemas: each kind's own schema as published, its list, and the apimachinery types operations refer to. */

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
function sharedSchemas(withScale: boolean, withEviction: boolean): Record<string, JsonObject> {
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
  if (withEviction) {
    schemas[EVICTION] = {
      description: 'Eviction evicts a pod from its node subject to certain policies and safety constraints.',
      type: 'object',
      properties: {
        apiVersion: string(API_VERSION_DESCRIPTION),
        deleteOptions: refWith(DELETE_OPTIONS, 'DeleteOptions may be provided'),
        kind: string(KIND_DESCRIPTION),
        metadata: refWith(OBJECT_META, 'ObjectMeta describes the pod that is being evicted.'),
      },
      [GVK_EXTENSION]: [gvk('policy', 'v1', 'Eviction')],
    };
  }
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

/** Component schemas of a group version (or of every group version, for v2). */
export function schemasFor(definitions: KindDefinition[]): Record<string, JsonObject> {
  const schemas = sharedSchemas(definitions.some((d) => d.subresources.scale), definitions.some((d) => d.subresources.eviction));
  for (const d of definitions) {
    schemas[schemaName(d.group, d.version, d.kind)] = kindSchema(d);
    if (d.verbs.includes('list')) schemas[schemaName(d.group, d.version, d.listKind)] = listSchema(d);
  }
  return Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}
