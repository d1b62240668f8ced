import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Subscription } from 'rxjs';
import { findDefinition } from '../kinds/definitions.js';
import type { KindDefinition } from '../kinds/registry.js';
import { apiVersionOf } from '../kinds/registry.js';
import type { Resource } from '../kinds/resource.js';
import { ApiError, apiErrors } from '../k8s/status.js';
import type { Cluster } from '../runtime/cluster.js';
import type { Change } from '../runtime/read-model.js';
import { type FieldValidation, ResourceService, type WriteOptions } from '../resources/service.js';
import { type LabelSelector, matchesSelector, parseFieldSelector, parseLabelSelector } from '../resources/selectors.js';
import { mergePatch } from '../resources/patch.js';
import { parseRequestText } from './request-body.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, VERSION_INFO } from './discovery.js';
import { openApiRouter } from './openapi.js';
import { toTable } from './table.js';
import { stringifyJsonExact } from '../log/json.js';

/** Largest request body the API reads (the Kubernetes API server's limit is 3 MiB). */
export const API_BODY_LIMIT = 3 * 1024 * 1024;

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

function wantsTable(req: Request): boolean {
  return (req.headers.accept ?? '').includes('as=Table');
}

function sendJson(res: Response, status: number, body: unknown): void {
  res.status(status).type('application/json').send(stringifyJsonExact(body));
}

function sendError(res: Response, error: unknown): void {
  const apiError =
    error instanceof ApiError ? error : apiErrors.internal(error instanceof Error ? error.message : String(error));
  sendJson(res, apiError.code, apiError.status);
}

function parseBody(req: Request): unknown {
  return parseRequestText(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '', req.headers['content-type']);
}

/** The `fieldValidation` query parameter: Strict when absent; anything else than the three is a 400. */
export function fieldValidationOf(value: unknown): FieldValidation {
  const validation = String(value ?? 'Strict');
  if (!['Strict', 'Warn', 'Ignore'].includes(validation)) {
    throw apiErrors.badRequest(`fieldValidation must be Strict, Warn or Ignore, not "${validation}"`);
  }
  return validation as FieldValidation;
}

function writeOptions(req: Request): WriteOptions {
  return { dryRun: req.query.dryRun === 'All', fieldValidation: fieldValidationOf(req.query.fieldValidation), warnings: [] };
}

/** Sends what a write decided, with its warnings as `Warning: 299` headers (kubectl prints them). */
function sendWritten(res: Response, status: number, body: unknown, options: WriteOptions): void {
  if (options.warnings?.length) res.setHeader('Warning', options.warnings.map((w) => `299 - ${JSON.stringify(w)}`));
  sendJson(res, status, body);
}

function fieldFilterOf(req: Request, kind: string): ((object: object) => boolean) | undefined {
  const text = req.query.fieldSelector;
  return typeof text === 'string' && text !== '' ? parseFieldSelector(text, kind) : undefined;
}

function selectorOf(req: Request): LabelSelector | undefined {
  const text = req.query.labelSelector;
  return typeof text === 'string' && text !== '' ? parseLabelSelector(text) : undefined;
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
        // Create-only and never stored: `allocationRoutes` serves the create before this router.
        if (target.definition.kind === 'GameServerAllocation') throw apiErrors.methodNotAllowed('gameserverallocations support only create');
        await serve(cluster, service, target, req, res);
      } catch (error) {
        if (!res.headersSent) sendError(res, error);
        else res.end();
      }
    };
  router.all('/api/v1/*rest', handle(() => '', () => 'v1'));
  router.all('/apis/:group/:version/*rest', handle((req) => req.params.group as string, (req) => req.params.version as string));

  router.use((error: Error & { type?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (error.type === 'entity.too.large') return sendError(res, apiErrors.tooLarge(API_BODY_LIMIT));
    next(error);
  });
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
      const current = service.get(definition, namespace, name!);
      const body = parseBody(req);
      const status = method === 'PUT' ? (body as Resource).status : (mergePatch(current, body) as Resource).status;
      return sendJson(res, 200, await service.updateStatus(definition, namespace, name!, status));
    }
    throw apiErrors.methodNotAllowed();
  }
  if (subresource !== undefined) throw apiErrors.pathNotFound();

  if (name === undefined) {
    if (method === 'GET') {
      const watch = req.query.watch === 'true' || req.query.watch === '1';
      if (watch) return watchObjects(cluster, service, target, req, res);
      const fieldFilter = fieldFilterOf(req, definition.kind);
      const listed = service.list(definition, target.namespace, selectorOf(req));
      const items = fieldFilter ? listed.filter(fieldFilter) : listed;
      const resourceVersion = String(cluster.resourceVersion);
      if (wantsTable(req)) {
        return sendJson(res, 200, toTable(definition, items, cluster.clock.now(), { resourceVersion, includeObject: req.query.includeObject as string }));
      }
      return sendJson(res, 200, { apiVersion: apiVersionOf(definition), kind: definition.listKind, metadata: { resourceVersion }, items });
    }
    if (method === 'POST') {
      const options = writeOptions(req);
      const created = await service.create(definition, namespace, parseBody(req), options);
      return sendWritten(res, 201, created, options);
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
      const deleted = await service.delete(definition, namespace, name, writeOptions(req));
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

/** `?watch=true`: a stream of `{"type": ..., "object": ...}` lines from a resourceVersion. */
function watchObjects(cluster: Cluster, service: ResourceService, target: Target, req: Request, res: Response): void {
  const { definition } = target;
  const selector = selectorOf(req);
  const table = wantsTable(req);
  const fromText = typeof req.query.resourceVersion === 'string' ? req.query.resourceVersion : '';
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
    const from = Number(fromText);
    if (!Number.isInteger(from)) throw apiErrors.badRequest(`invalid resourceVersion "${fromText}"`);
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
  const timeout = Number(req.query.timeoutSeconds ?? 0);
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  res.on('close', () => {
    subscription.unsubscribe();
    if (timer) clearTimeout(timer);
  });
}
