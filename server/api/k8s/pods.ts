import type { Request, Response } from 'express';
import { EMPTY, merge, type Subscription } from 'rxjs';
import type { GameServer } from '../../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../../kinds/agones.js';
import { matchesSelector } from '../../kinds/label-selector.js';
import { objectKey, rfc3339Nano } from '../../kinds/meta.js';
import { POD_DEFINITION } from '../../kinds/pod/definition.js';
import { POD_KIND, SIDECAR_CONTAINER, hasPod, podOf } from '../../kinds/pod/pod.js';
import type { Resource } from '../../kinds/resource.js';
import { apiErrors } from '../../k8s/status.js';
import { stringifyJsonExact } from '../../log/json.js';
import type { PodsPort } from './ports.js';
import type { LogLine, PodContainer } from '../../runtime/pod-runtime.js';
import { type DeleteRequestOptions, deleteOptionsOf, dryRunOf, listOptionsOf, parseResourceVersion, podLogOptionsOf } from '../request-options.js';
import { requireDeletePreconditions } from '../../resources/deletion.js';
import { requireBodyType } from '../../k8s/decoding.js';
import { KIND_DEFINITIONS } from '../../kinds/definitions.js';
import { apiVersionOf } from '../../kinds/registry.js';
import { isJsonObject, objectAt } from '../../kinds/common.js';
import { fieldFilterOf, selectorOf, sendJson, wantsTable } from '../responses.js';
import type { Cause } from '../../log/cause.js';
import { httpRequestCause } from '../request-cause.js';
import { toTable } from './table.js';
import { losePod } from '../../lifecycle/pod-loss.js';
import { storedPodDeletion } from '../../resources/control-plane.js';

/**
 * Pods through the resource API: one per GameServer, built on read (server/kinds/pod/pod.ts)
 * from the GameServer and what the kubelet knows of its container (`cluster.pods`), and Agones's
 * own in agones-system, stored (server/resources/control-plane.ts), and those clients create
 * (server/kinds/pod/created-pod.ts), stored. They are read, watched, created and
 * deleted — deleting a GameServer's makes it Unhealthy, as Agones's health controller does; a
 * control-plane pod is replaced, as its ReplicaSet does — and `pods/{name}/log` serves the game
 * container's output and, for the sidecar's container, the SDK calls it answered.
 */

/** The group versions an Eviction is read in (EvictionREST.AcceptsGroupVersion). */
const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1'];

export interface PodTarget {
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** The pod of a GameServer, if it has one now. */
function podOfKey(cluster: PodsPort, key: string, gs: GameServer | undefined): Resource | undefined {
  if (!gs || !hasPod(gs) || cluster.pods.isDeleted(key)) return undefined;
  return podOf(gs, cluster.pods.container(key));
}

/** The pod at `namespace/name`: a GameServer's, or a stored one. */
function podAt(cluster: PodsPort, namespace: string, name: string): Resource | undefined {
  const key = objectKey(namespace, name);
  return podOfKey(cluster, key, cluster.gameServers.getByKey(key)) ?? cluster.get(POD_KIND, namespace, name);
}

function getPod(cluster: PodsPort, namespace: string, name: string): Resource {
  const pod = podAt(cluster, namespace, name);
  if (!pod) throw apiErrors.notFound('pods', '', name);
  return pod;
}

function listPods(cluster: PodsPort, namespace: string | undefined): Resource[] {
  const pods: Resource[] = [];
  for (const [key, gs] of cluster.gameServers.entries()) {
    if (namespace !== undefined && gs.metadata.namespace !== namespace) continue;
    const pod = podOfKey(cluster, key, gs);
    if (pod) pods.push(pod);
  }
  pods.push(...cluster.readModel.list(POD_KIND, namespace));
  return pods.sort((a, b) => (objectKey(a.metadata.namespace, a.metadata.name) < objectKey(b.metadata.namespace, b.metadata.name) ? -1 : 1));
}

/**
 * `body` reads the request's body: undefined when it has none. `create` creates a pod from it as
 * the resource service creates any stored object (defaults, validation, dry run).
 */
export async function servePods(
  cluster: PodsPort,
  target: PodTarget,
  req: Request,
  res: Response,
  body: () => unknown,
  create: () => Promise<void>,
): Promise<void> {
  const namespace = target.namespace ?? 'default';
  const { name, subresource } = target;
  if (subresource === 'log' && name !== undefined) {
    if (req.method !== 'GET') throw apiErrors.methodNotAllowed();
    return serveLog(cluster, getPod(cluster, namespace, name), req, res);
  }
  if (subresource === 'eviction' && name !== undefined) {
    if (req.method !== 'POST') throw apiErrors.methodNotAllowed();
    return evictPod(cluster, namespace, name, req, body(), res);
  }
  if (subresource !== undefined) throw apiErrors.pathNotFound();
  if (req.method === 'POST' && name === undefined) {
    // A GameServer's pod holds its name already, though it is not stored.
    const requested = objectAt(objectAt(body())?.metadata)?.name;
    if (typeof requested === 'string' && cluster.gameServers.getByKey(objectKey(namespace, requested))) throw apiErrors.alreadyExists('pods', '', requested);
    return create();
  }
  if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
    throw apiErrors.methodNotAllowed('pods are created and deleted through the API, never updated');
  }
  const now = cluster.clock.now();
  const includeObject = req.query.includeObject as string;
  if (name !== undefined) {
    if (req.method === 'DELETE') return deletePod(cluster, namespace, name, deleteOptionsOf(req.query, body()), res, httpRequestCause(req));
    if (req.method !== 'GET') throw apiErrors.methodNotAllowed();
    const pod = getPod(cluster, namespace, name);
    return sendJson(res, 200, wantsTable(req) ? toTable(POD_DEFINITION, [pod], now, { includeObject }) : pod);
  }
  if (req.method !== 'GET') throw apiErrors.methodNotAllowed();
  const selector = selectorOf(req);
  const fieldFilter = fieldFilterOf(req, POD_DEFINITION.kind);
  const wanted = (pod: Resource) =>
    (!selector || matchesSelector(selector, pod.metadata.labels ?? {})) && (!fieldFilter || fieldFilter(pod));
  const options = listOptionsOf(req.query);
  if (options.watch) return watchPods(cluster, target.namespace, wanted, req, res, options.resourceVersion, options.timeoutSeconds);
  const items = listPods(cluster, target.namespace).filter(wanted);
  const metadata = { resourceVersion: String(cluster.resourceVersion) };
  if (wantsTable(req)) return sendJson(res, 200, { ...toTable(POD_DEFINITION, items, now, { includeObject }), metadata });
  sendJson(res, 200, { apiVersion: 'v1', kind: POD_DEFINITION.listKind, metadata, items });
}

/**
 * The pod goes: a GameServer's as server/lifecycle/pod-loss.ts says, a stored one with its
 * replacement, if a Deployment keeps it; answered once what that makes happen is committed.
 */
async function removePod(cluster: PodsPort, namespace: string, name: string, why: string, cause: Cause): Promise<Resource> {
  const pod = getPod(cluster, namespace, name);
  const key = objectKey(namespace, name);
  if (podOfKey(cluster, key, cluster.gameServers.getByKey(key))) await losePod(cluster, key, why, cause);
  else await cluster.commit(storedPodDeletion(cluster, pod), cause);
  await cluster.settled();
  return pod;
}

async function deletePod(cluster: PodsPort, namespace: string, name: string, options: DeleteRequestOptions, res: Response, cause: Cause): Promise<void> {
  const pod = getPod(cluster, namespace, name);
  requireDeletePreconditions(POD_DEFINITION, pod, options.preconditions);
  sendJson(res, 200, options.dryRun ? pod : await removePod(cluster, namespace, name, 'the pod was deleted', cause));
}

/**
 * `pods/{name}/eviction` (policy/v1 Eviction): the pod is deleted as a drained node's would be —
 * fleetsim has no PodDisruptionBudgets to refuse it — and the API server's 201 Success is the answer.
 * The body is decoded as the API server's create handler and EvictionREST read it: an Eviction
 * (policy/v1 or v1beta1; another built-in kind is decoded, then refused for its group version)
 * whose name is the pod's.
 */
async function evictPod(cluster: PodsPort, namespace: string, name: string, req: Request, eviction: unknown, res: Response): Promise<void> {
  const dryRun = dryRunOf(req.query, 'CreateOptions');
  if (!isJsonObject(eviction)) throw apiErrors.badRequest('the body must be a policy/v1 Eviction');
  requireBodyType(eviction, {
    kind: 'Eviction',
    apiVersion: EVICTION_VERSIONS[0]!,
    accepts: (apiVersion) => EVICTION_VERSIONS.includes(apiVersion),
    // The built-in kinds' scheme: any of them decodes, to be refused for its group version.
    registered: (kind, apiVersion) =>
      kind === 'Eviction' ? EVICTION_VERSIONS.includes(apiVersion) : KIND_DEFINITIONS.some((d) => !d.customResource && d.kind === kind && apiVersionOf(d) === apiVersion),
  });
  const metadata = objectAt(eviction.metadata) ?? {};
  if (metadata.namespace !== undefined && metadata.namespace !== '' && metadata.namespace !== namespace) {
    throw apiErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if ((metadata.name ?? '') !== name) throw apiErrors.badRequest('name in URL does not match name in Eviction object');
  if (!dryRun) await removePod(cluster, namespace, name, 'the pod was evicted', httpRequestCause(req));
  else getPod(cluster, namespace, name);
  sendJson(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

/** `?watch=true`: the pods' changes follow their GameServers' and their containers', and the stored pods'. */
function watchPods(
  cluster: PodsPort,
  namespace: string | undefined,
  wanted: (pod: Resource) => boolean,
  req: Request,
  res: Response,
  resourceVersion: string,
  timeoutSeconds: number,
): void {
  const table = wantsTable(req);
  const includeObject = req.query.includeObject as string;
  const from = resourceVersion === '' || resourceVersion === '0' ? cluster.resourceVersion : parseResourceVersion(resourceVersion);
  const gameServerChanges = cluster.changesSince(from, GAMESERVER_KIND);
  const storedChanges = cluster.changesSince(from, POD_KIND);
  if (!gameServerChanges || !storedChanges) throw apiErrors.gone(`too old resource version: ${from} (${cluster.resourceVersion})`);
  res.status(200).type('application/json');
  res.setHeader('Transfer-Encoding', 'chunked');
  res.flushHeaders();
  // Which pods this watcher has been shown, so a change reads as ADDED, MODIFIED or DELETED.
  const shown = new Map<string, Resource>();
  const write = (type: string, pod: Resource) =>
    res.write(`${stringifyJsonExact({ type, object: table ? toTable(POD_DEFINITION, [pod], cluster.clock.now(), { includeObject, withHeaders: false }) : pod })}\n`);
  const update = (key: string) => {
    const [ns = '', name = ''] = key.split('/');
    if (namespace !== undefined && ns !== namespace) return;
    const pod = podAt(cluster, ns, name);
    const before = shown.get(key);
    if (pod && wanted(pod)) {
      shown.set(key, pod);
      write(before ? 'MODIFIED' : 'ADDED', pod);
    } else if (before) {
      shown.delete(key);
      write('DELETED', { ...before, metadata: { ...before.metadata, resourceVersion: String(cluster.resourceVersion) } });
    }
  };
  if (resourceVersion === '' || resourceVersion === '0') {
    for (const pod of listPods(cluster, namespace)) if (wanted(pod)) update(objectKey(pod.metadata.namespace, pod.metadata.name));
  } else {
    for (const pod of listPods(cluster, namespace)) if (wanted(pod)) shown.set(objectKey(pod.metadata.namespace, pod.metadata.name), pod);
  }
  const subscription: Subscription = merge(cluster.pods.containerChanges$, gameServerChanges, storedChanges).subscribe((change) =>
    update(typeof change === 'string' ? change : objectKey(change.namespace, change.name)),
  );
  const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
  res.on('close', () => {
    subscription.unsubscribe();
    clearTimeout(timer);
  });
}

/** Output a follower may have waiting to be sent before more is skipped for it. */
const FOLLOW_BACKLOG_BYTES = 1024 * 1024;

/** `GET pods/{name}/log`, with kubectl's options: container, tailLines, sinceSeconds or sinceTime, timestamps, limitBytes, follow, previous. */
function serveLog(cluster: PodsPort, pod: Resource, req: Request, res: Response): void {
  const key = objectKey(pod.metadata.namespace, pod.metadata.name);
  const game = String(pod.metadata.annotations?.['agones.dev/container'] ?? '');
  const containers = [
    ...((pod.spec as { containers?: Array<{ name?: string }> }).containers ?? []).map((c) => String(c.name)),
    ...((pod.spec as { initContainers?: Array<{ name?: string }> }).initContainers ?? []).map((c) => String(c.name)),
  ];
  const { container = game, tailLines, sinceSeconds, sinceTime, limitBytes, timestamps, follow, previous } = podLogOptionsOf(req.query, pod.metadata.name);
  if (!containers.includes(container)) {
    throw apiErrors.badRequest(`container ${container} is not valid for pod ${pod.metadata.name}`);
  }
  if (previous) {
    const status = cluster.pods.container(key);
    if (container !== game || !status?.lastState) {
      throw apiErrors.badRequest(`previous terminated container "${container}" in pod "${pod.metadata.name}" not found`);
    }
  }
  // The game container's output, or the SDK calls the sidecar answered; any other container of
  // the template runs nothing here, so its log is empty.
  const output: PodContainer | undefined = container === game ? 'game' : container === SIDECAR_CONTAINER ? 'sidecar' : undefined;
  let lines: readonly LogLine[] = output ? cluster.pods.logs(key, output) : [];
  const since = sinceSeconds !== undefined ? cluster.clock.now() - sinceSeconds * 1000 : sinceTime;
  if (since !== undefined) lines = lines.filter((l) => l.time >= since);
  if (tailLines !== undefined) lines = tailLines === 0 ? [] : lines.slice(-tailLines);
  // A partial line's pieces run on, as the kubelet shows them.
  const format = (time: number, text: string, partial: boolean | undefined) => `${timestamps ? `${rfc3339Nano(time)} ` : ''}${text}${partial ? '' : '\n'}`;
  let budget = limitBytes ?? Infinity;
  const send = (text: string): boolean => {
    const bytes = Buffer.from(text);
    if (bytes.length >= budget) {
      res.write(bytes.subarray(0, budget));
      budget = 0;
      return false;
    }
    budget -= bytes.length;
    res.write(bytes);
    return true;
  };
  res.status(200).type('text/plain');
  if (!follow) {
    for (const line of lines) if (!send(format(line.time, line.text, line.partial))) break;
    res.end();
    return;
  }
  res.setHeader('Transfer-Encoding', 'chunked');
  res.flushHeaders();
  for (const line of lines) if (!send(format(line.time, line.text, line.partial))) return void res.end();
  // Follows until the pod goes (its GameServer is deleted) or the client leaves.
  const subscription = merge(output ? cluster.pods.follow(key, output) : EMPTY, cluster.watchGameServer(pod.metadata.namespace, pod.metadata.name)).subscribe((item) => {
    if ('lines' in item) {
      // A client reading slower than the process prints misses what it cannot take (as one
      // following a rotated log file does) rather than piling it up in the server.
      if (res.writableLength > FOLLOW_BACKLOG_BYTES) return;
      if (!send(item.lines.map((text) => format(item.time, text, item.partial)).join(''))) res.end();
    } else if (!item.object) res.end();
  });
  res.on('close', () => subscription.unsubscribe());
}
