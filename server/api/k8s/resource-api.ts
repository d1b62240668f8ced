import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Subscription } from 'rxjs';
import { findDefinition } from '../../kinds/definitions.js';
import type { KindDefinition } from '../../kinds/registry.js';
import { apiVersionOf } from '../../kinds/registry.js';
import type { Resource } from '../../kinds/resource.js';
import { ApiError, apiErrors } from '../../k8s/status.js';
import { decodeKubernetesProtobuf, ProtobufBodyError, protobufKindSupported } from '../../k8s/protobuf.js';
import type { Cluster } from '../../cluster.js';
import type { Change } from '../../runtime/read-model.js';
import { type DeleteOptions, ResourceService, type WriteOptions } from '../../resources/service.js';
import { httpRequestCause } from '../request-cause.js';
import { matchesSelector } from '../../kinds/label-selector.js';
import { API_BODY_LIMIT, isClientMistake, parseRequestText } from '../request-body.js';
import {
  checkBodyMediaType,
  deleteOptionsOf,
  dryRunOf,
  fieldValidationOf,
  encodeContinue,
  type ListOptions,
  listOptionsOf,
  mediaTypeOf,
  OBJECT_MEDIA_TYPES,
  parseResourceVersion,
  PROTOBUF_MEDIA_TYPE,
  queryText,
  writeOptionsKind,
} from '../request-options.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, VERSION_INFO } from './discovery.js';
import { openApiRouter } from './openapi/routes.js';
import { toTable } from './table.js';
import { stringifyJsonExact } from '../../log/json.js';
import { servePods } from './pods.js';
import { serveCustomResourceDefinitions } from './crds.js';
import { CRD_KIND } from '../../kinds/customresourcedefinition/definition.js';
import { POD_KIND } from '../../kinds/pod/pod.js';
import { fieldFilterOf, selectorOf, sendError, sendJson, wantsTable } from '../responses.js';


interface Target {
  definition: KindDefinition;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** `/api/v1/...` or `/apis/<group>/<version>/...` → the kind, namespace, name and subresource addressed. */
function resolveTarget(group: string, version: string, rest: string[]): Target | undefined {
  let namespace: string | undefined;
  let parts = rest;
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [plural, name, subresource, ...extra] = parts;
  if (!plural || extra.length) return undefined;
  const definition = findDefinition(group, version, plural);
  if (!definition) return undefined;
  if (!definition.namespaced && namespace !== undefined) return undefined;
  return { definition, namespace, name, subresource };
}

/**
 * A namespaced kind addressed without a namespace is only the list (and watch) across all
 * namespaces: the API server serves no other verb there. The CRD handler passes any other request
 * on, to end in a 404; go-restful, for a built-in kind, answers a 405 for another method on the
 * collection and a 404 for a path it has no route for.
 */
function requireNamespaceUnlessListed(target: Target, method: string): void {
  const { definition, namespace, name, subresource } = target;
  if (!definition.namespaced || namespace !== undefined) return;
  if ((method === 'GET' || method === 'HEAD') && name === undefined) return;
  if (definition.customResource || name !== undefined || subresource !== undefined) throw apiErrors.pathNotFound();
  throw apiErrors.methodNotAllowed();
}

function bodyBytes(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

function parseBody(req: Request): unknown {
  if (mediaTypeOf(req.headers['content-type']) === PROTOBUF_MEDIA_TYPE) return parseProtobufBody(req);
  return parseRequestText(bodyBytes(req).toString('utf8'), req.headers['content-type']);
}

/** The body of a request that may have none (a DELETE's DeleteOptions): undefined when empty. */
function optionalBody(req: Request): unknown {
  return bodyBytes(req).length > 0 ? parseBody(req) : undefined;
}

/**
 * A Kubernetes protobuf body, read into the document a JSON client would have sent. A malformed
 * body is a 400; a well-formed one of a kind the decoder does not know is a 415, as the API
 * server answers a protobuf body it has no decoder for (a custom resource's), with the kind named.
 */
function parseProtobufBody(req: Request): Record<string, unknown> {
  const body = bodyBytes(req);
  if (body.length === 0) throw apiErrors.badRequest('the request body is empty');
  try {
    return decodeKubernetesProtobuf(body);
  } catch (error) {
    if (!(error instanceof ProtobufBodyError)) throw error;
    if (error.reason === 'malformed') throw apiErrors.badRequest(error.message);
    const refused = apiErrors.unsupportedMediaType(req.headers['content-type'] ?? '', OBJECT_MEDIA_TYPES);
    throw new ApiError({ ...refused.status, message: error.message });
  }
}

function writeOptions(req: Request): WriteOptions {
  return {
    dryRun: dryRunOf(req.query, writeOptionsKind(req.method)),
    fieldValidation: fieldValidationOf(queryText(req.query, 'fieldValidation')),
    warnings: [],
    cause: httpRequestCause(req),
  };
}

/** A DELETE's options (DeleteOptions from its body, or else its query) and what asked for it. */
function deleteOptions(req: Request): DeleteOptions {
  return { ...deleteOptionsOf(req.query, optionalBody(req)), cause: httpRequestCause(req) };
}

/** Sends what a write decided, with its warnings as `Warning: 299` headers (kubectl prints them). */
function sendWritten(res: Response, status: number, body: unknown, options: WriteOptions): void {
  if (options.warnings?.length) res.setHeader('Warning', options.warnings.map((w) => `299 - ${JSON.stringify(w)}`));
  sendJson(res, status, body);
}


/** A request's error in the resource API's format: a Status, never Express's HTML page. */
export function apiErrorHandler(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(error);
  if ((error as { type?: unknown } | null)?.type === 'entity.too.large') return sendError(res, apiErrors.tooLarge(API_BODY_LIMIT));
  if (!(error instanceof ApiError) && isClientMistake(error)) {
    return sendError(res, apiErrors.badRequest(error instanceof Error ? error.message : String(error)));
  }
  sendError(res, error);
}

/**
 * The Kubernetes-style resource API that kubectl and client libraries drive: discovery, get,
 * list, create, update, patch, delete, watch, the scale and status subresources, and Table
 * output with Agones's printer columns.
 */
export function resourceApi(cluster: Cluster, service = new ResourceService(cluster)): Router {
  const router = express.Router();
  router.use(express.raw({ type: () => true, limit: API_BODY_LIMIT }));

  router.get('/version', (_req, res) => sendJson(res, 200, VERSION_INFO));
  router.get('/api', (_req, res) => sendJson(res, 200, apiVersions()));
  router.get('/apis', (_req, res) => sendJson(res, 200, apiGroupList()));
  router.get('/api/v1', (_req, res) => sendJson(res, 200, apiResourceList('', 'v1')));
  router.get('/apis/:group', (req, res) => {
    const group = apiGroup(req.params.group);
    if (group) sendJson(res, 200, group);
    else sendError(res, apiErrors.pathNotFound());
  });
  router.get('/apis/:group/:version', (req, res) => {
    const list = apiResourceList(req.params.group, req.params.version);
    if (list) sendJson(res, 200, list);
    else sendError(res, apiErrors.pathNotFound());
  });
  router.use(openApiRouter());

  const handle = (group: (req: Request) => string, version: (req: Request) => string) =>
    async (req: Request, res: Response) => {
      const rest = (req.params as Record<string, string | string[]>).rest;
      const parts = (Array.isArray(rest) ? rest : String(rest ?? '').split('/')).filter((p) => p !== '');
      const target = resolveTarget(group(req), version(req), parts);
      if (!target) return sendError(res, apiErrors.pathNotFound());
      try {
        // Protobuf only for the built-in kinds the decoder reads: a custom resource's protobuf body is a 415, as from the API server.
        const protobuf =
          target.subresource === 'eviction' && target.definition.subresources.eviction
            ? protobufKindSupported('policy/v1', 'Eviction')
            : protobufKindSupported(apiVersionOf(target.definition), target.definition.kind);
        checkBodyMediaType(req.method, req.headers['content-type'], { protobuf });
        // Create-only and never stored: `allocationRoutes` serves the create before this router.
        if (target.definition.kind === 'GameServerAllocation') throw apiErrors.methodNotAllowed('gameserverallocations support only create');
        requireNamespaceUnlessListed(target, req.method);
        // Pods are projected from GameServers, not stored: their own routes build them.
        if (target.definition.kind === POD_KIND) {
          if (req.method === 'GET') await reachAskedResourceVersion(cluster, req);
          const body = () => optionalBody(req);
          return await (req.method === 'GET' ? cluster.readCommitted(() => servePods(cluster, target, req, res, body)) : servePods(cluster, target, req, res, body));
        }
        if (target.definition.kind === CRD_KIND) return serveCustomResourceDefinitions(cluster, target.name, target.subresource, req, res);
        if (req.method === 'GET') {
          await reachAskedResourceVersion(cluster, req);
          // A read answers from durable state only (a GET's answer is built before its first await).
          await cluster.readCommitted(() => serve(cluster, service, target, req, res));
        } else {
          await serve(cluster, service, target, req, res);
        }
      } catch (error) {
        if (!res.headersSent) sendError(res, error);
        else res.end();
      }
    };
  router.all('/api/v1/*rest', handle(() => '', () => 'v1'));
  router.all('/apis/:group/:version/*rest', handle((req) => req.params.group as string, (req) => req.params.version as string));

  // Whatever no route took is answered as the API server answers an unknown path.
  router.use((_req: Request, res: Response) => sendError(res, apiErrors.pathNotFound()));
  router.use(apiErrorHandler);
  return router;
}



async function serve(cluster: Cluster, service: ResourceService, target: Target, req: Request, res: Response): Promise<void> {
  const { definition, name, subresource } = target;
  const namespace = target.namespace ?? 'default';
  const method = req.method;
  if (subresource === 'scale') {
    if (method === 'GET') return sendJson(res, 200, service.getScale(definition, namespace, name!));
    if (method === 'PUT') return sendJson(res, 200, await service.updateScale(definition, namespace, name!, parseBody(req), undefined, writeOptions(req)));
    if (method === 'PATCH') {
      return sendJson(res, 200, await service.updateScale(definition, namespace, name!, parseBody(req), req.headers['content-type'] ?? '', writeOptions(req)));
    }
    throw apiErrors.methodNotAllowed();
  }
  if (subresource === 'status') {
    if (!definition.subresources.status) throw apiErrors.pathNotFound();
    if (method === 'GET') return sendJson(res, 200, service.get(definition, namespace, name!));
    if (method === 'PUT' || method === 'PATCH') {
      const contentType = method === 'PATCH' ? (req.headers['content-type'] ?? '') : undefined;
      return sendJson(res, 200, await service.writeStatus(definition, namespace, name!, parseBody(req), contentType, writeOptions(req)));
    }
    throw apiErrors.methodNotAllowed();
  }
  if (subresource !== undefined) throw apiErrors.pathNotFound();

  if (name === undefined) {
    if (method === 'GET') {
      const options = listOptionsOf(req.query);
      if (options.watch) return watchObjects(cluster, service, target, req, res, options);
      const { items, metadata } = await listObjects(cluster, service, target, req, options);
      if (wantsTable(req)) {
        const table = toTable(definition, items, cluster.clock.now(), { includeObject: req.query.includeObject as string });
        return sendJson(res, 200, { ...table, metadata });
      }
      return sendJson(res, 200, { apiVersion: apiVersionOf(definition), kind: definition.listKind, metadata, items });
    }
    if (method === 'POST') {
      const options = writeOptions(req);
      const created = await service.create(definition, namespace, parseBody(req), options);
      return sendWritten(res, 201, created, options);
    }
    if (method === 'DELETE') {
      // deletecollection: what the selectors match, each deleted as by its own DELETE; the answer lists them.
      const fieldFilter = fieldFilterOf(req, definition.kind);
      const deleted = await service.deleteCollection(definition, target.namespace, selectorOf(req), deleteOptions(req), fieldFilter ?? undefined);
      const metadata = { resourceVersion: String(cluster.resourceVersion) };
      return sendJson(res, 200, { apiVersion: apiVersionOf(definition), kind: definition.listKind, metadata, items: deleted });
    }
    throw apiErrors.methodNotAllowed();
  }

  switch (method) {
    case 'GET': {
      const object = service.get(definition, namespace, name);
      if (wantsTable(req)) {
        return sendJson(res, 200, toTable(definition, [object], cluster.clock.now(), { resourceVersion: object.metadata.resourceVersion, includeObject: req.query.includeObject as string }));
      }
      return sendJson(res, 200, object);
    }
    case 'PUT': {
      const options = writeOptions(req);
      return sendWritten(res, 200, await service.update(definition, namespace, name, parseBody(req), options), options);
    }
    case 'PATCH': {
      const options = writeOptions(req);
      const patched = await service.patch(definition, namespace, name, parseBody(req), req.headers['content-type'] ?? '', options);
      return sendWritten(res, 200, patched, options);
    }
    case 'DELETE': {
      const deleted = await service.delete(definition, namespace, name, deleteOptions(req));
      // Still there (terminating: a namespace emptying, a process taking its grace period): the
      // API server answers with the object as it now is.
      const lingering = cluster.get(definition.kind, definition.namespaced ? namespace : '', name);
      if (lingering) return sendJson(res, 200, lingering);
      return sendJson(res, 200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group: definition.group, kind: definition.plural, uid: deleted.metadata.uid },
      });
    }
    default:
      throw apiErrors.methodNotAllowed();
  }
}

/** How long a request for a resourceVersion not yet reached waits for it (the API server's 3 s). */
const RESOURCE_VERSION_WAIT_MS = 3_000;

/**
 * A read asking for a resourceVersion the log has not reached waits for it (504
 * ResourceVersionTooLarge when it does not come in time) before it is served; a continue token
 * carries its own, older version.
 */
async function reachAskedResourceVersion(cluster: Cluster, req: Request): Promise<void> {
  const asked = queryText(req.query, 'resourceVersion');
  if (!asked || queryText(req.query, 'continue')) return;
  const wanted = parseResourceVersion(asked);
  if (wanted > cluster.resourceVersion) await waitForResourceVersion(cluster, wanted);
}

/** Waits until the log has reached `wanted`; 504 ResourceVersionTooLarge when it does not in time. */
async function waitForResourceVersion(cluster: Cluster, wanted: number): Promise<void> {
  const deadline = Date.now() + RESOURCE_VERSION_WAIT_MS;
  while (cluster.resourceVersion < wanted) {
    if (Date.now() >= deadline) throw apiErrors.tooLargeResourceVersion(wanted, cluster.resourceVersion);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether any committed change of `kind` came after `from`; undefined when `from` left the watch window. */
function changedSince(cluster: Cluster, kind: string, from: number): boolean | undefined {
  const changes = cluster.changesSince(from, kind);
  if (!changes) return undefined;
  let changed = false;
  // The window's changes come synchronously on subscribe; live ones are not waited for.
  changes.subscribe(() => (changed = true)).unsubscribe();
  return changed;
}

const TOO_OLD = 'The resourceVersion for the provided list is too old.';
const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue ' +
  'parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided ' +
  'token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was ' +
  'returned and now may show up in the list.';

/** etcd's key order: namespace, then name, by code unit (what a continue token points into). */
function compareKeys(a: Resource, b: Resource): number {
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * A list, as the API server answers it: at the resourceVersion asked for (waiting briefly for
 * one not reached yet), in pages of `limit` items with a continue token when more remain.
 *
 * fleetsim keeps no snapshots: a page after the first lists the objects as they are now, after
 * the previous page's last key, and carries the first page's resourceVersion, so a client that
 * watches from it is told of every change made while it paged. A token older than the watch
 * window is refused (410, with a token that continues at the latest state), as after an etcd
 * compaction.
 */
async function listObjects(
  cluster: Cluster,
  service: ResourceService,
  target: Target,
  req: Request,
  options: ListOptions,
): Promise<{ items: Resource[]; metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } }> {
  const { definition } = target;
  const selector = selectorOf(req);
  const fieldFilter = fieldFilterOf(req, definition.kind);
  const token = options.continueToken;
  let resourceVersion = cluster.resourceVersion;
  if (token) {
    if (token.resourceVersion !== -1) {
      // Only whether the window still reaches back to the token (no scan of the changes since).
      if (cluster.changesSince(token.resourceVersion, definition.kind) === undefined) {
        const error = apiErrors.gone(CONTINUE_TOO_OLD);
        error.status.metadata.continue = encodeContinue({ resourceVersion: -1, after: token.after });
        throw error;
      }
      resourceVersion = token.resourceVersion;
    }
  } else {
    const asked = parseResourceVersion(options.resourceVersion);
    // With a limit, a resourceVersion without a match is read exactly (the API server's rule).
    const exact = options.resourceVersionMatch === 'Exact' || (options.resourceVersionMatch === undefined && options.limit > 0 && asked > 0);
    if (exact && asked > 0) {
      // Only the present is kept: an older state is served only when nothing of the kind changed since.
      if (asked < cluster.resourceVersion && changedSince(cluster, definition.kind, asked) !== false) throw apiErrors.gone(TOO_OLD);
      resourceVersion = asked;
    }
  }
  const listed = service.list(definition, target.namespace, selector);
  let items = fieldFilter ? listed.filter(fieldFilter) : listed;
  if (!token && options.limit === 0) return { items, metadata: { resourceVersion: String(resourceVersion) } };

  items = [...items].sort(compareKeys);
  if (token) {
    const slash = token.after.indexOf('/');
    const after = { metadata: { namespace: token.after.slice(0, slash), name: token.after.slice(slash + 1) } } as Resource;
    const start = items.findIndex((o) => compareKeys(o, after) > 0);
    items = start < 0 ? [] : items.slice(start);
  }
  const metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(resourceVersion) };
  if (options.limit > 0 && items.length > options.limit) {
    const last = items[options.limit - 1]!;
    metadata.continue = encodeContinue({ resourceVersion, after: `${last.metadata.namespace}/${last.metadata.name}` });
    // Counted only for an unfiltered list, as the API server does.
    if (!selector && !fieldFilter) metadata.remainingItemCount = items.length - options.limit;
    items = items.slice(0, options.limit);
  }
  return { items, metadata };
}

/** `?watch=true`: a stream of `{"type": ..., "object": ...}` lines from a resourceVersion. */
async function watchObjects(cluster: Cluster, service: ResourceService, target: Target, req: Request, res: Response, options: ListOptions): Promise<void> {
  const { definition } = target;
  const selector = selectorOf(req);
  const table = wantsTable(req);
  const fromText = options.resourceVersion;
  const fieldFilter = fieldFilterOf(req, definition.kind);
  const inScope = (namespace: string, name: string) =>
    (target.namespace === undefined || !definition.namespaced || namespace === target.namespace) &&
    (target.name === undefined || name === target.name);
  const wanted = (object: Resource) =>
    (!selector || matchesSelector(selector, object.metadata.labels ?? {})) && (!fieldFilter || fieldFilter(object));
  const render = (object: Resource) =>
    table ? toTable(definition, [object], cluster.clock.now(), { includeObject: req.query.includeObject as string, withHeaders: false }) : object;

  let changes;
  const initial: Resource[] = [];
  if (fromText === '' || fromText === '0') {
    // No resourceVersion: start with the current objects as ADDED, then what follows.
    for (const object of service.list(definition, target.namespace, selector)) {
      if (inScope(object.metadata.namespace, object.metadata.name) && wanted(object)) initial.push(object);
    }
    changes = cluster.changesSince(cluster.resourceVersion, definition.kind);
  } else {
    const from = parseResourceVersion(fromText);
    changes = cluster.changesSince(from, definition.kind);
    if (!changes) throw apiErrors.gone(`too old resource version: ${from} (${cluster.resourceVersion})`);
  }

  res.status(200).type('application/json');
  res.setHeader('Transfer-Encoding', 'chunked');
  res.flushHeaders();
  const write = (type: string, object: unknown) => res.write(`${stringifyJsonExact({ type, object })}\n`);
  for (const object of initial) write('ADDED', render(object));

  const subscription: Subscription = changes!.subscribe((change: Change) => {
    if (!inScope(change.namespace, change.name)) return;
    if (change.type === 'DELETED') {
      // The object as it last was, at the deletion's resourceVersion.
      const last = change.last as Resource | undefined;
      const gone = {
        ...(last ?? { apiVersion: apiVersionOf(definition), kind: definition.kind }),
        metadata: { ...(last?.metadata ?? { name: change.name, namespace: change.namespace }), resourceVersion: String(change.seq) },
      } as Resource;
      if (last && !wanted(gone)) return;
      write('DELETED', render(gone));
      return;
    }
    const object = cluster.get(change.kind, change.namespace, change.name);
    if (!object || !wanted(object)) return;
    write(change.type, render(object));
  });
  const timeout = options.timeoutSeconds;
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  res.on('close', () => {
    subscription.unsubscribe();
    if (timer) clearTimeout(timer);
  });
}
