import type { KindDefinition } from '../../../kinds/registry.js';
import type { JsonObject } from './json.js';
import { DELETE_OPTIONS, EVICTION, PATCH, SCALE, STATUS, gvk, schemaName } from './names.js';

/** A resource's paths and operations in a neutral form, which the v2 and v3 documents are rendered from. */

/** Patch content types the resource service applies (it answers others with 415). */
export const PATCH_CONTENT_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

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

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  description: string;
  type: 'string' | 'integer' | 'boolean';
  required?: boolean;
}

export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  operationId: string;
  description: string;
  action: string;
  gvk: JsonObject;
  parameters: Parameter[];
  /** Request body: the schema it must match and the content types accepted. */
  body?: { schema: string; contentTypes: string[]; required: boolean };
  /** `schema` names a component; `text` answers a plain string instead (a pod's log). */
  responses: Array<{ code: string; description: string; schema: string; text?: boolean }>;
}

export interface PathItem {
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

export function resourcePaths(definition: KindDefinition): PathItem[] {
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
  if (definition.subresources.log) {
    const query = (name: string, type: Parameter['type'], description: string): Parameter => ({ name, in: 'query', description, type });
    items.push({
      path: `${scope}/${plural}/{name}/log`,
      parameters: [NAME_PARAM, ...scopeParams],
      operations: [
        {
          method: 'get',
          operationId: `read${id}${kind}Log`,
          description: `read log of the specified ${kind}`,
          action: 'get',
          gvk: self,
          parameters: [
            query('container', 'string', 'The container for which to stream logs. Defaults to the game server container.'),
            query('follow', 'boolean', 'Follow the log stream of the pod.'),
            query('limitBytes', 'integer', 'The number of bytes to read from the server before terminating the log output.'),
            query('previous', 'boolean', 'Return previous terminated container logs.'),
            query('sinceSeconds', 'integer', 'A relative time in seconds before the current time from which to show logs.'),
            query('tailLines', 'integer', 'The number of lines from the end of the logs to show.'),
            query('timestamps', 'boolean', 'Prefix every line of log output with an RFC3339 timestamp.'),
          ],
          responses: [{ code: '200', description: 'OK', schema: '', text: true }],
        },
      ],
    });
  }
  if (definition.subresources.eviction) {
    items.push({
      path: `${scope}/${plural}/{name}/eviction`,
      parameters: [NAME_PARAM, ...scopeParams],
      operations: [
        {
          method: 'post',
          operationId: `create${id}${kind}Eviction`,
          description: `create eviction of a ${kind}`,
          action: 'post',
          gvk: gvk('policy', 'v1', 'Eviction'),
          parameters: WRITE_PARAMS,
          body: { schema: EVICTION, contentTypes: ['application/json'], required: true },
          responses: [{ code: '201', description: 'Created', schema: STATUS }],
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
