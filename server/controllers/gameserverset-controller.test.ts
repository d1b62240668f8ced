import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GAMESERVERSET_DEFINITION } from '../kinds/gameserverset/definition.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { type GameServersCreated, gameServerEvent } from '../kinds/gameserver/events.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import type { NewEvent } from '../log/event-log.js';
import { ResourceService } from '../resources/service.js';
import { type Cluster, createCluster } from '../cluster.js';
import { GameServerSetController } from './gameserverset-controller.js';
import type { KubernetesEvent } from '../kinds/event/event.js';
import { countPerNode, sortForScaleDown } from '../../machines/scale-down-order.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

const TEMPLATE = {
  metadata: { labels: { game: 'demo' }, annotations: { note: 'from-template' } },
  spec: {
    ports: [],
    health: { disabled: true },
    template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
  },
};

interface Harness {
  clock: VirtualClock;
  cluster: Cluster;
  service: ResourceService;
  controller: GameServerSetController;
  /** Batches committed that create GameServers. */
  creationCommits: number[];
  /** Runs the clock (in `stepMs` steps) until `done()` holds. */
  until(done: () => boolean, stepMs?: number): Promise<void>;
  settle(rounds?: number): Promise<void>;
  gameServers(set: string): GameServer[];
  events(reason?: string): KubernetesEvent[];
  createSet(name: string, spec: Record<string, unknown>): Promise<Resource>;
  scaleSet(name: string, replicas: number): Promise<void>;
  /** Walks a GameServer to Ready through its machine (what the GameServer controller and the SDK would do). */
  makeReady(gs: GameServer, node: string): void;
  /** Pods: every new GameServer becomes Ready on the node `placement` picks; Shutdown ones are deleted. */
  simulatePods(placement: (gs: GameServer, index: number) => string): void;
}

const harnesses: Array<{ cluster: Cluster; controller: GameServerSetController; subscriptions: Subscription[] }> = [];

afterEach(() => {
  for (const h of harnesses.splice(0)) {
    for (const s of h.subscriptions) s.unsubscribe();
    h.controller.stop();
    h.cluster.close();
  }
});

function harness(gates = ''): Harness {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(gates) });
  const service = new ResourceService(cluster);
  const controller = new GameServerSetController(cluster, service);
  const subscriptions: Subscription[] = [];
  harnesses.push({ cluster, controller, subscriptions });
  const creationCommits: number[] = [];
  const commit = cluster.commit.bind(cluster);
  cluster.commit = (events: readonly NewEvent[]) => {
    let created = 0;
    for (const e of events) {
      if (e.type === 'GameServerCreated') created++;
      if (e.type === 'GameServersCreated') {
        const batch = e.payload as GameServersCreated;
        created += (batch.members ?? batch.objects ?? []).length;
      }
    }
    if (created) creationCommits.push(created);
    return commit(events);
  };
  controller.start();

  const settle = async (rounds = 20) => {
    for (let i = 0; i < rounds; i++) {
      clock.advance(0);
      await flush();
    }
  };
  const until = async (done: () => boolean, stepMs = 0) => {
    for (let i = 0; i < 2000; i++) {
      if (done()) return;
      clock.advance(stepMs);
      await flush();
    }
    throw new Error('condition not reached');
  };
  const gameServers = (set: string) =>
    [...cluster.gameServers.values()].filter((gs) => gs.metadata.labels['agones.dev/gameserverset'] === set);
  const makeReady = (gs: GameServer, node: string) => {
    const { namespace, name } = gs.metadata;
    const send = (command: Parameters<Cluster['actors']['send']>[2]) => cluster.actors.send(namespace, name, command);
    const state = () => cluster.gameServers.get(namespace, name)?.status.state;
    if (state() === 'Creating') send({ type: 'controller.podCreated' });
    if (state() === 'Starting') {
      send({ type: 'controller.scheduled', nodeName: node, address: '10.0.0.1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], ports: [] });
    }
    if (state() === 'Scheduled') send({ type: 'sdk.ready' });
    if (state() === 'RequestReady') send({ type: 'controller.ready' });
  };
  return {
    clock,
    cluster,
    service,
    controller,
    creationCommits,
    until,
    settle,
    gameServers,
    events: (reason) =>
      (cluster.readModel.list('Event', 'default') as KubernetesEvent[]).filter((e) => reason === undefined || e.reason === reason),
    createSet: (name, spec) =>
      service.create(GAMESERVERSET_DEFINITION, 'default', { apiVersion: 'agones.dev/v1', kind: 'GameServerSet', metadata: { name }, spec }),
    scaleSet: async (name, replicas) => {
      await service.patch(GAMESERVERSET_DEFINITION, 'default', name, { spec: { replicas } }, 'application/merge-patch+json');
    },
    makeReady,
    simulatePods: (placement) => {
      let index = 0;
      const placed = new Map<string, string>();
      subscriptions.push(
        cluster.gameServerChanges$.subscribe(({ object }) => {
          if (!object) return;
          const key = `${object.metadata.namespace}/${object.metadata.name}`;
          if (object.status.state === 'Shutdown') {
            void cluster.commit([gameServerEvent('GameServerDeleted', object.metadata.namespace, object.metadata.name, {})]);
            return;
          }
          if (!placed.has(key)) placed.set(key, placement(object, index++));
          makeReady(object, placed.get(key)!);
        }),
      );
    },
  };
}

const readyCount = (list: GameServer[]) => list.filter((gs) => gs.status.state === 'Ready').length;
const live = (list: GameServer[]) => list.filter((gs) => gs.status.state !== 'Shutdown');

describe('GameServerSet controller', () => {
  it('creates GameServers from the template, owned and labelled, with SuccessfulCreate events', async () => {
    const h = harness();
    const set = await h.createSet('web', { replicas: 3, scheduling: 'Distributed', template: TEMPLATE });
    await h.until(() => h.gameServers('web').length === 3);
    await h.settle();
    expect(h.gameServers('web')).toHaveLength(3);
    expect(h.creationCommits).toEqual([3]);
    for (const gs of h.gameServers('web')) {
      expect(gs.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(gs.metadata.generateName).toBe('web-');
      expect(gs.metadata.labels).toEqual({ game: 'demo', 'agones.dev/gameserverset': 'web', 'agones.dev/fleet': '' });
      expect(gs.metadata.annotations.note).toBe('from-template');
      expect(gs.metadata.ownerReferences).toEqual([
        { apiVersion: 'agones.dev/v1', kind: 'GameServerSet', name: 'web', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(gs.spec.scheduling).toBe('Distributed');
      // GameServer defaults were applied.
      expect(gs.spec.sdkServer.grpcPort).toBe(9357);
      expect(gs.status.state).toBe('Creating');
    }
    const created = h.events('SuccessfulCreate');
    expect(created.map((e) => e.message).sort()).toEqual(h.gameServers('web').map((gs) => `Created gameserver: ${gs.metadata.name}`).sort());
    expect(created[0]).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      type: 'Normal',
      count: 1,
      source: { component: 'gameserverset-controller' },
      involvedObject: { kind: 'GameServerSet', name: 'web', namespace: 'default', uid: set.metadata.uid, apiVersion: 'agones.dev/v1' },
    });
    const status = h.cluster.get('GameServerSet', 'default', 'web')!.status as { replicas: number };
    expect(status.replicas).toBe(3);
  });

  it('creates in batches of 64, one commit per batch, re-queueing itself', async () => {
    const h = harness();
    await h.createSet('big', { replicas: 150, template: TEMPLATE });
    await h.until(() => h.gameServers('big').length === 150);
    await h.settle();
    expect(h.creationCommits).toEqual([64, 64, 22]);
    expect(h.gameServers('big')).toHaveLength(150);
  });

  it('scales up and down; Packed shuts down the servers on the emptiest node first', async () => {
    const h = harness();
    // 4 servers on node-a, 2 on node-b.
    h.simulatePods((_gs, index) => (index < 4 ? 'node-a' : 'node-b'));
    await h.createSet('packed', { replicas: 6, scheduling: 'Packed', template: TEMPLATE });
    await h.until(() => readyCount(h.gameServers('packed')) === 6);
    const onB = h.gameServers('packed').filter((gs) => gs.status.nodeName === 'node-b').map((gs) => gs.metadata.name).sort();
    expect(onB).toHaveLength(2);

    await h.scaleSet('packed', 4);
    await h.until(() => h.gameServers('packed').length === 4);
    expect(h.gameServers('packed').every((gs) => gs.status.nodeName === 'node-a' && gs.status.state === 'Ready')).toBe(true);
    const deleted = h.events('SuccessfulDelete');
    expect(deleted.map((e) => e.message).sort()).toEqual(onB.map((n) => `Deleted gameserver in state Ready: ${n}`));
    expect(deleted[0]!.metadata.name).toMatch(/^packed\.[0-9a-f]+$/);
    expect(deleted[0]).toMatchObject({
      type: 'Normal',
      source: { component: 'gameserverset-controller' },
      involvedObject: { kind: 'GameServerSet', name: 'packed', namespace: 'default' },
    });

    await h.scaleSet('packed', 7);
    await h.until(() => readyCount(h.gameServers('packed')) === 7);
    await h.settle();
    expect(h.gameServers('packed')).toHaveLength(7);
  });

  it('Distributed shuts down the oldest servers first', async () => {
    const h = harness();
    h.simulatePods((_gs, index) => `node-${index}`);
    await h.createSet('dist', { replicas: 2, scheduling: 'Distributed', template: TEMPLATE });
    await h.until(() => readyCount(h.gameServers('dist')) === 2);
    const oldest = h.gameServers('dist').map((gs) => gs.metadata.name);
    h.clock.advance(5000);
    await h.scaleSet('dist', 5);
    await h.until(() => readyCount(h.gameServers('dist')) === 5);
    await h.scaleSet('dist', 3);
    await h.until(() => h.gameServers('dist').length === 3);
    const left = h.gameServers('dist').map((gs) => gs.metadata.name);
    for (const name of oldest) expect(left).not.toContain(name);
  });

  it('replaces an Unhealthy server', async () => {
    const h = harness();
    h.simulatePods(() => 'node-a');
    await h.createSet('heal', { replicas: 3, template: TEMPLATE });
    await h.until(() => readyCount(h.gameServers('heal')) === 3);
    const sick = h.gameServers('heal')[1]!;
    h.cluster.actors.send('default', sick.metadata.name, { type: 'controller.unhealthy', message: 'Pod is missing' });
    await h.until(() => readyCount(h.gameServers('heal')) === 3 && !h.gameServers('heal').some((gs) => gs.metadata.name === sick.metadata.name));
    await h.settle();
    expect(h.gameServers('heal')).toHaveLength(3);
    expect(h.events('SuccessfulDelete').map((e) => e.message)).toEqual([`Deleted gameserver in state Unhealthy: ${sick.metadata.name}`]);
    expect(h.events('SuccessfulCreate')).toHaveLength(4);
  });

  it('keeps an Error server for 30 s, then replaces it', async () => {
    const h = harness();
    await h.createSet('err', { replicas: 2, template: TEMPLATE });
    await h.until(() => h.gameServers('err').length === 2);
    const broken = h.gameServers('err')[0]!;
    h.cluster.actors.send('default', broken.metadata.name, { type: 'controller.error', message: 'pod is invalid' });
    const start = h.clock.now();
    await h.settle();
    h.clock.advance(29_000);
    await h.settle();
    expect(h.cluster.gameServers.get('default', broken.metadata.name)!.status.state).toBe('Error');
    expect(h.gameServers('err')).toHaveLength(2);
    await h.until(() => h.cluster.gameServers.get('default', broken.metadata.name)!.status.state === 'Shutdown', 100);
    expect(h.clock.now() - start).toBeGreaterThanOrEqual(30_000);
    expect(h.clock.now() - start).toBeLessThanOrEqual(31_000);
    await h.until(() => live(h.gameServers('err')).length === 2);
    expect(h.events('SuccessfulDelete').map((e) => e.message)).toEqual([`Deleted gameserver in state Error: ${broken.metadata.name}`]);
  });

  it('never shuts down Allocated servers, and labels the overflow', async () => {
    const h = harness();
    h.simulatePods((_gs, index) => (index % 2 ? 'node-b' : 'node-a'));
    await h.createSet('ovf', {
      replicas: 4,
      template: TEMPLATE,
      allocationOverflow: { labels: { overflow: 'yes' }, annotations: { 'overflow/why': 'scaled-down' } },
    });
    await h.until(() => readyCount(h.gameServers('ovf')) === 4);
    const allocated = h.gameServers('ovf').slice(0, 3);
    for (const gs of allocated) h.cluster.actors.send('default', gs.metadata.name, { type: 'sdk.allocate' });
    await h.settle();
    await h.scaleSet('ovf', 1);
    await h.until(() => h.gameServers('ovf').length === 3);
    await h.settle();
    const left = h.gameServers('ovf');
    expect(left.every((gs) => gs.status.state === 'Allocated')).toBe(true);
    const marked = left.filter((gs) => gs.metadata.labels.overflow === 'yes');
    expect(marked).toHaveLength(2);
    for (const gs of marked) expect(gs.metadata.annotations['overflow/why']).toBe('scaled-down');
    // Nothing more to mark once the excess carries the labels.
    const version = h.cluster.log.lastSeq;
    h.controller.enqueue('default', 'ovf');
    await h.settle();
    expect(h.cluster.log.lastSeq).toBe(version);
  });

  it('leaves overflow alone when the FleetAllocationOverflow gate is off', async () => {
    const h = harness('FleetAllocationOverflow=false');
    h.simulatePods(() => 'node-a');
    // The API refuses allocationOverflow with the gate off: this set predates the gate change.
    const { object } = h.service.prepareCreate(GAMESERVERSET_DEFINITION, 'default', {
      metadata: { name: 'ovf' },
      spec: { replicas: 2, template: TEMPLATE },
    });
    const withOverflow = { ...object, spec: { ...(object.spec as object), allocationOverflow: { labels: { overflow: 'yes' } } } };
    await h.cluster.commit([resourceEvent('ResourceCreated', 'GameServerSet', 'default', 'ovf', { object: withOverflow })]);
    await h.until(() => readyCount(h.gameServers('ovf')) === 2);
    for (const gs of h.gameServers('ovf')) h.cluster.actors.send('default', gs.metadata.name, { type: 'sdk.allocate' });
    await h.scaleSet('ovf', 0);
    await h.settle();
    expect(h.gameServers('ovf').filter((gs) => gs.metadata.labels.overflow)).toHaveLength(0);
  });

  it('ignores GameServers with the label but another owner, and picks up sets that exist at start', async () => {
    const h = harness();
    h.controller.stop();
    const set = await h.createSet('pre', { replicas: 2, template: TEMPLATE });
    // A stray GameServer claiming the set by label only.
    await h.service.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name: 'stray', labels: { 'agones.dev/gameserverset': 'pre' } },
      spec: TEMPLATE.spec,
    });
    const controller = new GameServerSetController(h.cluster, h.service);
    harnesses.push({ cluster: h.cluster, controller, subscriptions: [] });
    controller.start();
    await h.until(() => h.gameServers('pre').length === 3);
    await h.settle();
    const owned = h.gameServers('pre').filter((gs) => gs.metadata.ownerReferences?.[0]?.uid === set.metadata.uid);
    expect(owned).toHaveLength(2);
    expect(h.cluster.gameServers.get('default', 'stray')!.status.state).toBe('Creating');
  });
});

describe('GameServerSet controller, large scale-downs', () => {
  /** A set of `count` Ready GameServers placed by `node(i)`, made directly (no lifecycle). */
  async function readySet(h: Harness, name: string, count: number, node: (i: number) => string, scheduling = 'Packed') {
    h.controller.stop();
    const set = await h.createSet(name, { replicas: count, scheduling, template: TEMPLATE });
    const bodies = Array.from({ length: count }, (_, i) => ({
      metadata: {
        name: `${name}-${String(i).padStart(4, '0')}`,
        labels: { 'agones.dev/gameserverset': name, 'agones.dev/fleet': '' },
        ownerReferences: [{ apiVersion: 'agones.dev/v1', kind: 'GameServerSet', name, uid: set.metadata.uid, controller: true }],
      },
      spec: TEMPLATE.spec,
      status: { state: 'Ready', nodeName: node(i) },
    }));
    await h.cluster.commit(h.service.prepareGameServerBatch('default', bodies).events);
    const controller = new GameServerSetController(h.cluster, h.service);
    harnesses.push({ cluster: h.cluster, controller, subscriptions: [] });
    controller.start();
    await h.settle();
    return controller;
  }

  const nodeOf = (i: number) => `node-${[0, 0, 0, 1, 1, 2, 3, 3, 3, 3][i % 10]}-${Math.floor(i / 40)}`;

  it('shuts down exactly the first servers of the scale-down order, 64 per batch', async () => {
    const h = harness();
    await readySet(h, 'big', 200, nodeOf);
    const all = h.gameServers('big');
    const expected = sortForScaleDown(all, { scheduling: 'Packed', nodeCounts: countPerNode(all) })
      .slice(0, 150)
      .map((gs) => gs.metadata.name)
      .sort();
    await h.scaleSet('big', 50);
    await h.until(() => live(h.gameServers('big')).length === 50);
    await h.settle();
    const down = h.gameServers('big').filter((gs) => gs.status.state === 'Shutdown').map((gs) => gs.metadata.name).sort();
    expect(down).toEqual(expected);
    expect(h.events('SuccessfulDelete')).toHaveLength(150);
  });

  it('re-orders when something else changes mid-way, and never shuts down a server allocated meanwhile', async () => {
    const h = harness();
    await readySet(h, 'busy', 200, nodeOf);
    const all = h.gameServers('busy');
    const order = sortForScaleDown(all, { scheduling: 'Packed', nodeCounts: countPerNode(all) }).map((gs) => gs.metadata.name);
    await h.scaleSet('busy', 50);
    // One batch.
    h.clock.advance(0);
    await flush();
    expect(h.gameServers('busy').filter((gs) => gs.status.state === 'Shutdown')).toHaveLength(64);
    const allocated = order.slice(100, 103);
    for (const name of allocated) h.cluster.actors.send('default', name, { type: 'sdk.allocate' });
    await h.until(() => live(h.gameServers('busy')).length === 50);
    await h.settle();
    for (const name of allocated) expect(h.cluster.gameServers.get('default', name)!.status.state).toBe('Allocated');
    expect(live(h.gameServers('busy'))).toHaveLength(50);
  });

  it('Distributed: the oldest go first across batches', async () => {
    const h = harness();
    await readySet(h, 'dist', 150, (i) => `node-${i % 7}`, 'Distributed');
    await h.scaleSet('dist', 10);
    await h.until(() => live(h.gameServers('dist')).length === 10);
    // Same creation second: name is the tie-break, so the last ten names survive.
    expect(live(h.gameServers('dist')).map((gs) => gs.metadata.name).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `dist-${String(140 + i).padStart(4, '0')}`),
    );
  });
});
