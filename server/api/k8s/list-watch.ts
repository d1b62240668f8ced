import type { Request, Response } from 'express';
import type { Subscription } from 'rxjs';
import type { Resource } from '../../kinds/resource.js';
import { apiVersionOf } from '../../kinds/registry.js';
import { matchesSelector } from '../../kinds/label-selector.js';
import { apiErrors } from '../../k8s/status.js';
import { stringifyJsonExact } from '../../log/json.js';
import type { ListWatchPort } from './ports.js';
import type { Change } from '../../runtime/read-model.js';
import type { ResourceService } from '../../resources/service.js';
import { encodeContinue, type ListOptions, parseResourceVersion, queryText } from '../request-options.js';
import { fieldFilterOf, selectorOf, wantsTable } from '../responses.js';
import { toTable } from './table.js';
import type { KindDefinition } from '../../kinds/registry.js';

/** Lists and watches as the API server serves them: at a resourceVersion, in pages, from a resourceVersion on. */

/** What a request's path addresses: a kind, and the namespace, name and subresource when it names them. */
export interface Target {
  definition: KindDefinition;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** How long a request for a resourceVersion not yet reached waits for it (the API server's 3 s). */
const RESOURCE_VERSION_WAIT_MS = 3_000;

/**
 * A read asking for a resourceVersion the log has not reached waits for it (504
 * ResourceVersionTooLarge when it does not come in time) before it is served; a continue token
 * carries its own, older version.
 */
export async function reachAskedResourceVersion(cluster: ListWatchPort, req: Request): Promise<void> {
  const asked = queryText(req.query, 'resourceVersion');
  if (!asked || queryText(req.query, 'continue')) return;
  const wanted = parseResourceVersion(asked);
  if (wanted > cluster.resourceVersion) await waitForResourceVersion(cluster, wanted);
}

/** Waits until the log has reached `wanted`; 504 ResourceVersionTooLarge when it does not in time. */
async function waitForResourceVersion(cluster: ListWatchPort, wanted: number): Promise<void> {
  const deadline = Date.now() + RESOURCE_VERSION_WAIT_MS;
  while (cluster.resourceVersion < wanted) {
    if (Date.now() >= deadline) throw apiErrors.tooLargeResourceVersion(wanted, cluster.resourceVersion);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether any committed change of `kind` came after `from`; undefined when `from` left the watch window. */
function changedSince(cluster: ListWatchPort, kind: string, from: number): boolean | undefined {
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
export async function listObjects(
  cluster: ListWatchPort,
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
export async function watchObjects(cluster: ListWatchPort, service: ResourceService, target: Target, req: Request, res: Response, options: ListOptions): Promise<void> {
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
