import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import { AllocationService } from '../allocation/allocation-service.js';
import { resourceApi } from '../api/k8s/resource-api.js';
import { VirtualClock } from '../clock.js';
import { createCluster } from '../cluster.js';
import { type FeatureGates, parseFeatureGates } from '../features.js';
import { KIND_DEFINITIONS } from '../kinds/definitions.js';
import { FLEET_DEFINITION } from '../kinds/fleet/definition.js';
import { FLEETAUTOSCALER_DEFINITION } from '../kinds/fleetautoscaler/definition.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { GAMESERVERALLOCATIONPOLICY_DEFINITION } from '../kinds/gameserverallocationpolicy/definition.js';
import { GAMESERVERSET_DEFINITION } from '../kinds/gameserverset/definition.js';
import { SECRET_DEFINITION } from '../kinds/secret/definition.js';
import type { Resource } from '../kinds/resource.js';
import { EventLog, LogClosedError, type NewEvent } from '../log/event-log.js';
import { ObjectHeads } from '../log/object-index.js';
import { gameServerEvent, gameServersCreated } from '../kinds/gameserver/events.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { replayLog } from '../replay.js';
import { Sidecar } from '../sidecar/sidecar.js';
import type { Change } from './read-model.js';
import { OBJECT_EVENTS, Store, WATCH_WINDOW } from './store.js';
import { listenLocally } from '../../test/helpers/local-server.js';
import { testCluster } from '../../test/helpers/cluster.js';

const START = Date.UTC(2026, 0, 1);
const dirs: string[] = [];
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-store-'));
  dirs.push(dir);
  return join(dir, 'events.db');
}

const STORED_KINDS = ['GameServer', 'GameServerSet', 'Fleet', 'FleetAutoscaler', 'GameServerAllocationPolicy', 'Secret', 'Node', 'Event'];

/** Every stored object of every kind, as the API lists it, in a stable order. */
function listEveryKind(list: (kind: string) => Resource[]): Record<string, Resource[]> {
  const byKind: Record<string, Resource[]> = {};
  for (const { kind } of KIND_DEFINITIONS) {
    const key = (o: Resource) => `${o.metadata.namespace}/${o.metadata.name}`;
    byKind[kind] = [...list(kind)].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  }
  return byKind;
}

/**
 * A log with events of every stored kind, written the way the server writes them: resources
 * through the ResourceService, GameServers by the controllers, the simulated processes and the
 * sidecar, an allocation through the allocator, Kubernetes Events by the recorders.
 */
async function writeMixedLog(db: string, gates: FeatureGates): Promise<{ live: Record<string, Resource[]>; lastSeq: number }> {
  const counting = gates.CountsAndLists;
  const gameServerSpec = {
    ports: [{ name: 'default', containerPort: 7654 }],
    ...(counting && { counters: { rooms: { count: 0, capacity: 4 } }, lists: { players: { capacity: 8 } } }),
    template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
  };
  const clock = new VirtualClock(START);
  const plane = await testCluster({ db, clock, gates, seed: 11, nodes: 2, maxPodsPerNode: 8 });
  const { cluster, service } = plane;
  let closed = false;
  cleanups.push(() => {
    plane.stop();
    if (!closed) cluster.close();
  });
  const settle = async (rounds: number) => {
    for (let round = 0; round < rounds; round++) {
      clock.advance(250);
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    }
  };

  await service.create(SECRET_DEFINITION, 'default', { metadata: { name: 'token' }, stringData: { key: 'one' } });
  await service.create(GAMESERVERALLOCATIONPOLICY_DEFINITION, 'default', {
    metadata: { name: 'local' },
    spec: { priority: 1, weight: 100, connectionInfo: { allocationEndpoints: ['127.0.0.1'], clusterName: 'local', secretName: 'token', namespace: 'default' } },
  });
  await service.create(FLEET_DEFINITION, 'default', { metadata: { name: 'f' }, spec: { replicas: 3, template: { spec: gameServerSpec } } });
  await service.create(FLEETAUTOSCALER_DEFINITION, 'default', {
    metadata: { name: 'f-autoscaler' },
    spec: { fleetName: 'f', policy: { type: 'Buffer', buffer: { bufferSize: 2, minReplicas: 3, maxReplicas: 6 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 5 } } },
  });
  await service.create(GAMESERVERSET_DEFINITION, 'default', { metadata: { name: 'loose-set' }, spec: { replicas: 1, template: { spec: gameServerSpec } } });
  await service.create(GAMESERVER_DEFINITION, 'default', { metadata: { name: 'solo' }, spec: gameServerSpec });
  await settle(40);

  // The GameServers' own lifecycle through the sidecar, and an allocation through the allocator.
  const fleetServers = () => [...cluster.gameServers.values()].filter((gs) => gs.metadata.labels['agones.dev/fleet'] === 'f');
  expect(fleetServers().filter((gs) => gs.status.state === 'Ready').length).toBeGreaterThanOrEqual(3);
  const allocations = new AllocationService(cluster);
  const allocated = await allocations.create('default', {
    spec: {
      selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }],
      metadata: { labels: { mode: 'ctf' } },
      ...(counting && { counters: { rooms: { action: 'Increment', amount: 1 } } }),
    },
  });
  expect(allocated.status?.state).toBe('Allocated');
  const player = new Sidecar(cluster, 'default', allocated.status!.gameServerName!);
  await player.setLabel('round', '1');
  if (counting) await player.addListValue('players', 'alice');
  await new Sidecar(cluster, 'default', 'solo').reserve(10);
  await new Sidecar(cluster, 'default', 'solo').setAnnotation('note', 'reserved');
  await service.patch(SECRET_DEFINITION, 'default', 'token', { stringData: { key: 'two' } }, 'application/merge-patch+json');
  // The autoscaler keeps two Ready beside the allocated one; then a shutdown, and time passes.
  await settle(40);
  await player.shutdown();
  await settle(60);
  plane.stop();
  await cluster.settled();

  const kindsInLog = new Set([...cluster.log.read()].map((event) => event.kind));
  for (const kind of STORED_KINDS) expect(kindsInLog, kind).toContain(kind);
  const live = listEveryKind((kind) => cluster.readModel.list(kind));
  for (const kind of STORED_KINDS) expect(live[kind]!.length, kind).toBeGreaterThan(0);
  const lastSeq = cluster.log.lastSeq;
  cluster.close();
  closed = true;
  return { live, lastSeq };
}

describe('Store: a replay of the log rebuilds exactly the live read model', () => {
  // `fleetsim replay` builds its read model with the default gates, so it is held to the log
  // written with them; a fresh Store opened with the writer's gates is held to both.
  it.each([
    { gatesText: '', replay: true },
    { gatesText: 'CountsAndLists=true', replay: false },
  ])('holds over a mixed log of every kind (gates "$gatesText")', async ({ gatesText, replay }) => {
    const db = tempDb();
    const gates = parseFeatureGates(gatesText);
    const { live, lastSeq } = await writeMixedLog(db, gates);
    const reopened = new Store({ db, clock: new VirtualClock(START), gates });
    cleanups.push(() => reopened.close());
    expect(reopened.resourceVersion).toBe(lastSeq);
    expect(listEveryKind((kind) => reopened.readModel.list(kind))).toEqual(live);
    if (!replay) return;
    const replayed = replayLog(db);
    expect(listEveryKind((kind) => replayed.list(kind))).toEqual(live);
  });
});

function secret(name: string, value: string): Resource {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '0', generation: 1, creationTimestamp: '', labels: {}, annotations: {} },
    stringData: { value },
  } as Resource;
}

const created = (kind: string, object: Resource): NewEvent => ({ type: 'ResourceCreated', kind, namespace: 'default', name: object.metadata.name, payload: { object } });
const updated = (object: Resource): NewEvent => ({ type: 'ResourceUpdated', kind: 'Secret', namespace: 'default', name: object.metadata.name, payload: { object } });
const deleted = (name: string): NewEvent => ({ type: 'ResourceDeleted', kind: 'Secret', namespace: 'default', name, payload: {} });
const policy = (name: string) => ({ ...secret(name, ''), apiVersion: 'multicluster.agones.dev/v1', kind: 'GameServerAllocationPolicy' }) as Resource;

/** What a watch hears synchronously on subscribing (the window's changes), plus `after` (live ones). */
function heard(changes: ReturnType<Store['changesSince']>, after: () => Promise<void> = async () => undefined): Promise<Array<Pick<Change, 'seq' | 'name' | 'type'>>> {
  const seen: Array<Pick<Change, 'seq' | 'name' | 'type'>> = [];
  const subscription = changes!.subscribe(({ seq, name, type }) => seen.push({ seq, name, type }));
  return after().then(() => {
    subscription.unsubscribe();
    return seen;
  });
}

describe('Store: the watch window', () => {
  it('answers a watch from before the window with nothing to resume (410 Expired), and one inside it with exactly the changes after it', async () => {
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(START), gates: parseFeatureGates('') });
    cleanups.push(() => cluster.close());
    await cluster.commit([created('Secret', secret('churn', 'v0'))]);
    const beforeWindow = cluster.resourceVersion;
    // Twice the window's worth of changes in one commit: the first ones leave the window.
    const churn: NewEvent[] = [];
    for (let i = 1; i <= 2 * WATCH_WINDOW; i++) churn.push(updated(secret('churn', `v${i}`)));
    await cluster.commit(churn);
    const afterChurn = cluster.resourceVersion;
    expect(afterChurn).toBe(beforeWindow + 2 * WATCH_WINDOW);

    expect(cluster.changesSince(beforeWindow, 'Secret')).toBeUndefined();
    // The window reaches at least WATCH_WINDOW changes back, each one there, in order.
    const windowBack = afterChurn - WATCH_WINDOW;
    const whole = await heard(cluster.changesSince(windowBack, 'Secret'));
    expect(whole).toHaveLength(WATCH_WINDOW);
    expect(whole.every((change, i) => change.seq === windowBack + 1 + i && change.type === 'MODIFIED')).toBe(true);

    // Inside the window: exactly the changes of the kind after the resourceVersion, then live ones.
    await cluster.commit([
      created('GameServerAllocationPolicy', policy('p')),
      created('Secret', secret('b', 'one')),
      updated(secret('churn', 'last')),
      deleted('b'),
    ]);
    const mark = afterChurn + 2;
    const inWindow = await heard(cluster.changesSince(mark, 'Secret'), async () => {
      await cluster.commit([created('GameServerAllocationPolicy', policy('q')), updated(secret('churn', 'live'))]);
    });
    expect(inWindow).toEqual([
      { seq: afterChurn + 3, name: 'churn', type: 'MODIFIED' },
      { seq: afterChurn + 4, name: 'b', type: 'DELETED' },
      { seq: afterChurn + 6, name: 'churn', type: 'MODIFIED' },
    ]);
    // A watch from the newest resourceVersion hears only what comes later.
    expect(await heard(cluster.changesSince(cluster.resourceVersion, 'Secret'))).toEqual([]);

    // Over the resource API: the expired watch is a 410 Expired Status; one inside the window streams.
    const server = createServer(express().use(resourceApi(cluster)));
    cleanups.push(() => server.close());
    const base = `${await listenLocally(server)}/api/v1/namespaces/default/secrets?watch=true`;
    const expired = await fetch(`${base}&resourceVersion=${beforeWindow}`);
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });

    const abort = new AbortController();
    const watch = await fetch(`${base}&resourceVersion=${mark}`, { signal: abort.signal });
    expect(watch.status).toBe(200);
    const reader = watch.body!.getReader();
    let text = '';
    while (text.split('\n').length <= 3) text += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as { type: string; object: Resource });
    // A MODIFIED line carries the object as it is now (no snapshots are kept); DELETED its last state.
    expect(lines.map(({ type, object }) => [type, object.metadata.name])).toEqual([
      ['MODIFIED', 'churn'],
      ['DELETED', 'b'],
      ['MODIFIED', 'churn'],
    ]);
    expect(lines[1]!.object.metadata.resourceVersion).toBe(String(afterChurn + 4));
  });
});

describe('Store: closed', () => {
  it('refuses a commit after close with a rejected promise, applying nothing', async () => {
    const store = new Store({ db: ':memory:', clock: new VirtualClock(START), gates: parseFeatureGates('') });
    await store.commit([{ type: 'ResourceCreated', kind: 'Secret', namespace: 'default', name: 'a', payload: { object: { metadata: { name: 'a', namespace: 'default' } } } }]);
    store.close();
    const late = store.commit([{ type: 'ResourceCreated', kind: 'Secret', namespace: 'default', name: 'b', payload: { object: { metadata: { name: 'b', namespace: 'default' } } } }]);
    await expect(late).rejects.toThrow(LogClosedError);
    expect(store.get('Secret', 'default', 'b')).toBeUndefined();
  });
});

describe("Store: the log's index by object", () => {
  /** Each row's links as the heads alone find them, walking the rows in order: the index a log writes without a store. */
  function linksByHeads(db: string): Array<{ seq: number; prev: number; member_prev: string | null }> {
    const heads = new ObjectHeads();
    const reader = new EventLog(db, { readonly: true, objectEvents: OBJECT_EVENTS });
    const links = [...reader.read()].map((e) => {
      const prev = heads.advance(e.kind, e.namespace, e.name, e.seq);
      if (e.name !== '' && OBJECT_EVENTS.ends(e)) heads.end(e.kind, e.namespace, e.name, e.seq);
      const members = OBJECT_EVENTS.membersOf(e);
      return { seq: e.seq, prev, member_prev: members ? heads.advanceMembers(e.kind, e.namespace, members, e.seq) : null };
    });
    reader.close();
    return links;
  }

  it("links each GameServer's events as the heads alone would, whether the committer held its entry or not, across deletions and names used again", async () => {
    const db = tempDb();
    const store = new Store({ db, clock: new VirtualClock(START), gates: parseFeatureGates('') });
    cleanups.push(() => store.close());
    const state = (name: string, state: 'Allocated' | 'Ready') => gameServerEvent('GameServerStateChanged', 'default', name, { state, cause: 'sdk', reason: state, message: '', eventType: 'Normal' });
    const entry = (name: string) => store.gameServers.entry(`default/${name}`);
    const history = (name: string) => [...store.log.history('GameServer', 'default', name)].map((e) => e.seq);

    await store.commit(gameServersCreated('default', [gameServer('x'), gameServer('y'), gameServer('z')]));
    await store.commit([state('x', 'Allocated'), state('x', 'Ready')], undefined, entry('x'));
    await store.commit([gameServerEvent('GameServerCreated', 'default', 'a', { object: gameServer('a') }), state('y', 'Allocated')]);
    await store.commit([gameServerEvent('GameServerDeleted', 'default', 'y', {})], undefined, entry('y'));
    // An event of a GameServer no longer stored, then the name used again.
    await store.commit([state('y', 'Ready')]);
    await store.commit([gameServerEvent('GameServerCreated', 'default', 'y', { object: gameServer('y') }), state('y', 'Allocated')]);
    // Several commits of one GameServer before the log writes them, and a history read meanwhile.
    void store.commit([state('x', 'Allocated')], undefined, entry('x'));
    void store.commit([gameServerEvent('GameServerDeleted', 'default', 'x', {})], undefined, entry('x'));
    expect(history('x')).toEqual([11, 10, 3, 2, 1]);
    void store.commit(gameServersCreated('default', [gameServer('x'), gameServer('w')]));
    void store.commit([state('x', 'Allocated')], undefined, entry('x'));
    void store.commit([state('z', 'Allocated'), state('a', 'Allocated')]);
    expect(history('y')).toEqual([9, 8, 7, 6, 5, 1]);
    await store.commit([state('x', 'Ready')], undefined, entry('x'));
    expect(history('x')).toEqual([16, 13, 12, 11, 10, 3, 2, 1]);
    expect(history('a')).toEqual([15, 4]);

    const written = store.log.database.prepare('SELECT events.seq AS seq, COALESCE(events.prev, links.prev) AS prev, links.member_prev AS member_prev FROM events LEFT JOIN event_links AS links ON links.seq = events.seq ORDER BY events.seq');
    expect(written.all()).toEqual(linksByHeads(db));
    // Started again, the store goes on linking from what it replayed.
    store.close();
    const again = new Store({ db, clock: new VirtualClock(START), gates: parseFeatureGates('') });
    cleanups.push(() => again.close());
    await again.commit([state('z', 'Ready')], undefined, again.gameServers.entry('default/z'));
    await again.commit([gameServerEvent('GameServerDeleted', 'default', 'w', {})]);
    expect([...again.log.history('GameServer', 'default', 'z')].map((e) => e.seq)).toEqual([17, 14, 1]);
    expect(again.log.database.prepare('SELECT seq, prev FROM events WHERE seq > 16').all()).toEqual([{ seq: 17, prev: 14 }, { seq: 18, prev: 12 }]);
  });
});
