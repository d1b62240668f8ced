import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  CustomObjectsApi,
  type Informer,
  type ObjectCache,
  KubeConfig,
  type KubernetesObject,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * The official JavaScript client (@kubernetes/client-node 1.x) against `fleetsim serve`, through
 * its custom objects API as one drives Agones from code: create the project's example Fleet (examples/fleet.yaml), list it,
 * patch replicas (JSON merge patch, and the client's default JSON patch), the scale subresource,
 * a raw watch and an informer on GameServers, errors as ApiException with the Status body, and
 * delete with cascading.
 */

const EXAMPLE = fileURLToPath(new URL('../examples/fleet.yaml', import.meta.url));
const AGONES = { group: 'agones.dev', version: 'v1', namespace: 'default' };
const FLEETS = { ...AGONES, plural: 'fleets' };
const GAMESERVERS = { ...AGONES, plural: 'gameservers' };
const FLEET = 'simple-game-server';
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STRATEGIC_MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

interface Fleet extends KubernetesObject {
  metadata: { name: string; uid: string; generation: number; resourceVersion: string; labels?: Record<string, string> };
  spec: { replicas: number; template: { metadata?: { labels?: Record<string, string> } } };
  status?: { replicas?: number; readyReplicas?: number };
}
interface GameServer extends KubernetesObject {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string }> };
  status?: { state?: string };
}
interface List<T> {
  kind: string;
  metadata: { resourceVersion: string };
  items: T[];
}
interface Status {
  kind: 'Status';
  code: number;
  reason: string;
  message: string;
  details?: { causes?: Array<{ field?: string; reason: string; message: string }> };
}

function exampleFleet(name = FLEET): Fleet {
  const fleet = parseYaml(readFileSync(EXAMPLE, 'utf8')) as Fleet;
  fleet.metadata.name = name;
  return fleet;
}

/** The Status a failed call carried, from the ApiException it threw. */
async function statusOf(call: Promise<unknown>): Promise<Status> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = error.body;
    return (typeof body === 'string' ? JSON.parse(body) : body) as Status;
  }
  throw new Error('the call succeeded');
}

describe.sequential('@kubernetes/client-node against fleetsim serve', () => {
  let serve: ServeProcess;
  let api: CustomObjectsApi;
  let kc: KubeConfig;
  const watched: Array<{ type: string; name: string; state: string | undefined }> = [];
  let watchAbort: AbortController | undefined;
  let watchError: unknown;
  let informer: (Informer<GameServer> & ObjectCache<GameServer>) | undefined;

  const getFleet = async () => (await api.getNamespacedCustomObject({ ...FLEETS, name: FLEET })) as Fleet;
  const listGameServers = async () => ((await api.listNamespacedCustomObject(GAMESERVERS)) as List<GameServer>).items;
  const waitForReady = (replicas: number, labels: Record<string, string> = {}) =>
    waitFor(
      async () => {
        const fleet = await getFleet();
        const servers = await listGameServers();
        return (
          fleet.status?.readyReplicas === replicas &&
          servers.length === replicas &&
          servers.every((gs) => gs.status?.state === 'Ready' && Object.entries(labels).every(([k, v]) => gs.metadata.labels?.[k] === v)) &&
          servers
        );
      },
      { timeoutMs: seconds(30), intervalMs: 200, what: `${replicas} Ready GameServers` },
    );

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '--feature-gates', 'CountsAndLists=true', '--no-listen']);
    kc = new KubeConfig();
    kc.loadFromOptions({
      // client-node 1.x refuses a plain http:// server unless skipTLSVerify is set ("HTTP
      // protocol is not allowed when skipTLSVerify is not set or false"); there is no TLS here.
      clusters: [{ name: 'fleetsim', server: serve.baseUrl, skipTLSVerify: true }],
      users: [{ name: 'tester' }],
      contexts: [{ name: 'fleetsim', cluster: 'fleetsim', user: 'tester', namespace: 'default' }],
      currentContext: 'fleetsim',
    });
    api = kc.makeApiClient(CustomObjectsApi);
  });

  afterAll(async () => {
    watchAbort?.abort();
    await informer?.stop();
    await killAll();
  });

  it('watches GameServers (a raw watch and an informer) from before the Fleet exists', async () => {
    watchAbort = await new Watch(kc).watch(
      '/apis/agones.dev/v1/namespaces/default/gameservers',
      {},
      (type: string, object: GameServer) => watched.push({ type, name: object.metadata.name, state: object.status?.state }),
      (error: unknown) => {
        watchError = error;
      },
    );
    informer = makeInformer<GameServer>(kc, '/apis/agones.dev/v1/namespaces/default/gameservers', async () =>
      (await api.listNamespacedCustomObject(GAMESERVERS)) as List<GameServer>,
    );
    await informer.start();
    expect(informer.list()).toEqual([]);
  });

  it('creates the example Fleet through the custom objects API', async () => {
    const created = (await api.createNamespacedCustomObject({ ...FLEETS, body: exampleFleet() })) as Fleet;
    expect(created.apiVersion).toBe('agones.dev/v1');
    expect(created.kind).toBe('Fleet');
    expect(created.metadata).toMatchObject({ name: FLEET, generation: 1 });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.spec.replicas).toBe(2);
  });

  it('lists it, and it reaches 2 Ready GameServers', async () => {
    const list = (await api.listNamespacedCustomObject(FLEETS)) as List<Fleet>;
    expect(list.kind).toBe('FleetList');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.items.map((f) => f.metadata.name)).toEqual([FLEET]);
    const servers = await waitForReady(2);
    expect(servers.every((gs) => gs.metadata.ownerReferences?.[0]?.kind === 'GameServerSet')).toBe(true);
  });

  it('patches replicas with a JSON merge patch → 4 Ready', async () => {
    const patched = (await api.patchNamespacedCustomObject({ ...FLEETS, name: FLEET, body: { spec: { replicas: 4 } } }, MERGE_PATCH)) as Fleet;
    expect(patched.spec.replicas).toBe(4);
    expect(patched.metadata.generation).toBe(2);
    await waitForReady(4);
  });

  it("patches with the client's default JSON patch and through the scale subresource", async () => {
    const patched = (await api.patchNamespacedCustomObject({
      ...FLEETS,
      name: FLEET,
      body: [{ op: 'replace', path: '/spec/template/metadata/labels/mode', value: 'ranked' }],
    })) as Fleet;
    expect(patched.spec.template.metadata?.labels).toEqual({ mode: 'ranked' });
    const scale = (await api.patchNamespacedCustomObjectScale({ ...FLEETS, name: FLEET, body: { spec: { replicas: 3 } } }, MERGE_PATCH)) as {
      kind: string;
      spec: { replicas: number };
    };
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 3 } });
    const servers = await waitForReady(3, { mode: 'ranked' });
    expect(servers).toHaveLength(3);
  });

  it('the watch and the informer saw every GameServer come and the replaced ones go', async () => {
    const current = (await listGameServers()).map((gs) => gs.metadata.name).sort();
    await waitFor(
      () =>
        informer!
          .list()
          .map((gs) => gs.metadata.name)
          .sort()
          .join() === current.join(),
      { timeoutMs: seconds(10), what: 'the informer cache to match the list' },
    );
    await waitFor(() => current.every((n) => watched.some((e) => e.name === n && e.type === 'MODIFIED' && e.state === 'Ready')), {
      timeoutMs: seconds(10),
      what: 'the watch to see every current GameServer Ready',
    });
    const added = new Set(watched.filter((e) => e.type === 'ADDED').map((e) => e.name));
    const deleted = new Set(watched.filter((e) => e.type === 'DELETED').map((e) => e.name));
    for (const name of current) expect(added.has(name), name).toBe(true);
    // 4 with mode=casual were replaced by 3 with mode=ranked: at least the 4 old ones were deleted.
    expect(deleted.size).toBeGreaterThanOrEqual(4);
    for (const name of deleted) expect(current.includes(name), name).toBe(false);
    expect(watchError).toBeUndefined();
  });

  it('errors come back as ApiException with the Status: unknown field 400, invalid 422, conflict 409, strategic merge patch 415', async () => {
    const unknown = exampleFleet('fleet-unknown') as Fleet & { spec: Record<string, unknown> };
    unknown.spec.replicaz = 3;
    expect(await statusOf(api.createNamespacedCustomObject({ ...FLEETS, body: unknown }))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'strict decoding error: unknown field "spec.replicaz"',
    });

    const invalid = exampleFleet('fleet-invalid') as Fleet & { spec: { strategy: { rollingUpdate: { maxSurge: string } } } };
    invalid.spec.strategy.rollingUpdate.maxSurge = '150%';
    const status = await statusOf(api.createNamespacedCustomObject({ ...FLEETS, body: invalid }));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.details?.causes?.map((c) => c.field)).toContain('spec.strategy.rollingUpdate.maxSurge');

    expect(await statusOf(api.createNamespacedCustomObject({ ...FLEETS, body: exampleFleet() }))).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    expect(
      await statusOf(api.patchNamespacedCustomObject({ ...FLEETS, name: FLEET, body: { spec: { replicas: 1 } } }, STRATEGIC_MERGE_PATCH)),
    ).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });

    const names = ((await api.listNamespacedCustomObject(FLEETS)) as List<Fleet>).items.map((f) => f.metadata.name);
    expect(names).toEqual([FLEET]);
    expect((await getFleet()).spec.replicas).toBe(3);
  });

  it('deletes the Fleet: its GameServers go, and the watch sees them go', async () => {
    const before = (await listGameServers()).map((gs) => gs.metadata.name);
    const status = (await api.deleteNamespacedCustomObject({ ...FLEETS, name: FLEET })) as { kind: string; status: string };
    expect(status).toMatchObject({ kind: 'Status', status: 'Success' });
    await waitFor(async () => (await listGameServers()).length === 0, { timeoutMs: seconds(15), intervalMs: 200, what: 'no GameServers' });
    expect(await statusOf(getFleet())).toMatchObject({ code: 404, reason: 'NotFound' });
    expect(((await api.listNamespacedCustomObject({ ...AGONES, plural: 'gameserversets' })) as List<unknown>).items).toEqual([]);
    await waitFor(() => before.every((n) => watched.some((e) => e.type === 'DELETED' && e.name === n)), {
      timeoutMs: seconds(10),
      what: 'DELETED events for every GameServer',
    });
    await waitFor(() => informer!.list().length === 0, { timeoutMs: seconds(10), what: 'an empty informer cache' });
  });
});
