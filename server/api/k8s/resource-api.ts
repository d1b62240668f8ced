import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { findDefinition } from '../../kinds/definitions.js';
import { apiVersionOf } from '../../kinds/registry.js';
import { ApiError, apiErrors } from '../../k8s/status.js';
import { decodeKubernetesProtobuf, ProtobufBodyError, protobufKindSupported } from '../../k8s/protobuf.js';
import type { ResourceApiPort } from './ports.js';
import { type DeleteOptions, ResourceService, type WriteOptions } from '../../resources/service.js';
import { getScale, type SubresourceWrite, updateScale, writeStatus } from '../../resources/subresources.js';
import { httpRequestCause } from '../request-cause.js';
import { API_BODY_LIMIT, isClientMistake, parseRequestText } from '../request-body.js';
import {
  checkBodyMediaType,
  deleteOptionsOf,
  dryRunOf,
  fieldValidationOf,
  listOptionsOf,
  mediaTypeOf,
  OBJECT_MEDIA_TYPES,
  PROTOBUF_MEDIA_TYPE,
  queryText,
  writeOptionsKind,
} from '../request-options.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, VERSION_INFO } from './discovery.js';
import { openApiRouter } from './openapi/routes.js';
import { toTable } from './table.js';
import { servePods } from './pods.js';
import { listObjects, reachAskedResourceVersion, type Target, watchObjects } from './list-watch.js';
import { serveCustomResourceDefinitions } from './crds.js';
import { CRD_KIND } from '../../kinds/customresourcedefinition/definition.js';
import { POD_KIND } from '../../kinds/pod/pod.js';
import { fieldFilterOf, selectorOf, sendError, sendJson, wantsTable } from '../responses.js';

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

/** A PUT or PATCH of a subresource: the body, and for a PATCH its content type. */
function subresourceWrite(req: Request, namespace: string, name: string): SubresourceWrite {
  const contentType = req.method === 'PATCH' ? (req.headers['content-type'] ?? '') : undefined;
  return { namespace, name, body: parseBody(req), contentType, options: writeOptions(req) };
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

/**
 * Kinds served by routes of their own rather than the resource service: Pods, projected from their
 * GameServers (never stored) beside stored ones (a created pod goes through the resource service),
 * and CustomResourceDefinitions, built from the kinds' definitions.
 */
const OWN_ROUTES = new Map<string, (cluster: ResourceApiPort, service: ResourceService, target: Target, req: Request, res: Response) => Promise<void>>([
  [
    POD_KIND,
    async (cluster, service, target, req, res) => {
      if (req.method === 'GET') await reachAskedResourceVersion(cluster, req);
      const body = () => optionalBody(req);
      const create = () => serve(cluster, service, target, req, res);
      return req.method === 'GET' ? cluster.readCommitted(() => servePods(cluster, target, req, res, body, create)) : servePods(cluster, target, req, res, body, create);
    },
  ],
  [CRD_KIND, async (cluster, _service, target, req, res) => serveCustomResourceDefinitions(cluster, target.name, target.subresource, req, res)],
]);

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
export function resourceApi(cluster: ResourceApiPort, service = new ResourceService(cluster)): Router {
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
        // Create-only and never stored (GameServerAllocation): `allocationRoutes` serves the create before this router.
        if (target.definition.verbs.every((verb) => verb === 'create')) throw apiErrors.methodNotAllowed(`${target.definition.plural} support only create`);
        requireNamespaceUnlessListed(target, req.method);
        const ownRoute = OWN_ROUTES.get(target.definition.kind);
        if (ownRoute) return await ownRoute(cluster, service, target, req, res);
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

async function serve(cluster: ResourceApiPort, service: ResourceService, target: Target, req: Request, res: Response): Promise<void> {
  const { definition, name, subresource } = target;
  const namespace = target.namespace ?? 'default';
  const method = req.method;
  if (subresource === 'scale') {
    if (method === 'GET') return sendJson(res, 200, getScale(service, definition, namespace, name!));
    if (method === 'PUT' || method === 'PATCH') return sendJson(res, 200, await updateScale(service, definition, subresourceWrite(req, namespace, name!)));
    throw apiErrors.methodNotAllowed();
  }
  if (subresource === 'status') {
    if (!definition.subresources.status) throw apiErrors.pathNotFound();
    if (method === 'GET') return sendJson(res, 200, service.get(definition, namespace, name!));
    if (method === 'PUT' || method === 'PATCH') return sendJson(res, 200, await writeStatus(service, definition, subresourceWrite(req, namespace, name!)));
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
