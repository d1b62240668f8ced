import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { type Cluster, createCluster } from '../cluster.js';
import { parseFeatureGates } from '../features.js';
import { commitReadyFleet } from '../bench/ready-fleet.js';
import { settle } from '../sim/virtual-time.js';
import { AllocationService } from './allocation-service.js';
import type { AllocatorOptions } from './allocator.js';

/**
 * The agones-batch model piece by piece, on the virtual clock: one list per batch, the watch's
 * lag, conflicts between replicas and their retries. Each case also runs under `exact`, which
 * must answer as the store stands.
 */

const running: Array<{ cluster: Cluster; service: AllocationService }> = [];
afterEach(() => {
  for (const { cluster, service } of running.splice(0)) {
    service.stop();
    cluster.close();
  }
});

const FLEET = { matchLabels: { 'agones.dev/fleet': 'f' } };
const ROOMS_REQUEST = {
  spec: {
    selectors: [
      { ...FLEET, gameServerState: 'Allocated', counters: { rooms: { minAvailable: 1 } } },
      { ...FLEET, gameServerState: 'Ready', counters: { rooms: { minAvailable: 1 } } },
    ],
    counters: { rooms: { action: 'Increment', amount: 1 } },
  },
};

async function setup(model: AllocatorOptions, servers: number, spec?: Record<string, unknown>) {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('CountsAndLists=true'), seed: 7 });
  await commitReadyFleet(cluster, { size: servers, fleet: 'f', spec: { health: { disabled: true }, ...spec } });
  const service = new AllocationService(cluster, { allocator: model });
  running.push({ cluster, service });
  /** Sends the requests at once and runs the clock until all are answered. */
  const allocateAll = async (body: unknown, count: number) => {
    const gsa = service.prepare('default', body);
    const answers = Array.from({ length: count }, () => service.allocate(gsa));
    let done = 0;
    for (const answer of answers) void answer.finally(() => done++);
    await settle(clock);
    while (done < count && clock.step()) await settle(clock);
    return Promise.all(answers);
  };
  return { clock, cluster, service, allocateAll };
}

describe('agones-batch', () => {
  it('serves a batch from one list: a server taken is out of it, so a burst on one high-capacity server is mostly UnAllocated', async () => {
    const batch = await setup({ model: 'agones-batch', replicas: 1 }, 1, { counters: { rooms: { count: 0, capacity: 1000 } } });
    const results = await batch.allocateAll(ROOMS_REQUEST, 5);
    expect(results.map((r) => r.status.state)).toEqual(['Allocated', 'UnAllocated', 'UnAllocated', 'UnAllocated', 'UnAllocated']);
    expect(batch.service.batch!.stats).toMatchObject({ batches: 1, allocated: 1, unallocated: 4, conflicts: 0 });

    const exact = await setup({ model: 'exact' }, 1, { counters: { rooms: { count: 0, capacity: 1000 } } });
    const answered = await exact.allocateAll(ROOMS_REQUEST, 5);
    expect(answered.map((r) => r.status.state)).toEqual(Array(5).fill('Allocated'));
  });

  it('sees a change only once the watch delivers it: a server back to Ready stays unseen for the lag', async () => {
    const { cluster, clock, allocateAll } = await setup({ model: 'agones-batch', replicas: 1, informerLagMs: 2000, batchWaitMs: 500 }, 1);
    const [first] = await allocateAll({ spec: { selectors: [FLEET] } }, 1);
    expect(first!.status.state).toBe('Allocated');
    await cluster.actors.send('default', 'f-0', { type: 'sdk.ready' });
    await cluster.actors.send('default', 'f-0', { type: 'controller.ready' });
    await settle(clock);
    expect(cluster.gameServers.getByKey('default/f-0')!.status.state).toBe('Ready');
    // The replica's cache still holds it Allocated, as its own update left it.
    const [stale] = await allocateAll({ spec: { selectors: [FLEET] } }, 1);
    expect(stale!.status.state).toBe('UnAllocated');
    clock.advance(2000);
    await settle(clock);
    const [fresh] = await allocateAll({ spec: { selectors: [FLEET] } }, 1);
    expect(fresh!.status.state).toBe('Allocated');
  });

  it('counts a conflict when a replica updates a server another replica took, and its retry allocates another', async () => {
    // The watch lags more than a batch wait: whichever replica wakes second has not seen the first's pick.
    const { service, allocateAll } = await setup({ model: 'agones-batch', replicas: 2, informerLagMs: 1000, batchWaitMs: 500 }, 3);
    const results = await allocateAll({ spec: { selectors: [FLEET], scheduling: 'Packed' } }, 2);
    expect(results.map((r) => r.status.state)).toEqual(['Allocated', 'Allocated']);
    expect(new Set(results.map((r) => r.status.gameServerName)).size).toBe(2);
    expect(results.map((r) => r.attempts).sort()).toEqual([1, 2]);
    expect(service.batch!.stats).toMatchObject({ requests: 2, attempts: 3, conflicts: 1, allocated: 2 });
  });

  it('has no conflicts with one replica, and none under exact', async () => {
    for (const model of [{ model: 'agones-batch', replicas: 1, informerLagMs: 1000 }, { model: 'exact' }] as const) {
      const { service, allocateAll } = await setup(model, 10);
      const results = await allocateAll({ spec: { selectors: [FLEET] } }, 8);
      expect(results.every((r) => r.status.state === 'Allocated' && (r.attempts ?? 1) === 1)).toBe(true);
      expect(service.batch?.stats.conflicts ?? 0).toBe(0);
    }
  });

  it('answers after the replica wakes, not before', async () => {
    const { service, clock } = await setup({ model: 'agones-batch', replicas: 1, batchWaitMs: 500 }, 2);
    let answered = false;
    const pending = service.allocate(service.prepare('default', { spec: {} })).then((r) => {
      answered = true;
      return r;
    });
    await settle(clock);
    expect(answered).toBe(false);
    clock.advance(500);
    await settle(clock);
    expect((await pending).status.state).toBe('Allocated');
  });
});

describe('allocator options given in code', () => {
  it('are refused by name before anything runs, as the flags and scenarios refuse them', () => {
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates('') });
    try {
      expect(() => new AllocationService(cluster, { allocator: { model: 'agones-batch', replicas: 0 } })).toThrow(/replicas must be a whole number from 1 to 64, not 0/);
      expect(() => new AllocationService(cluster, { allocator: { model: 'agones-batch', batchWaitMs: 0 } })).toThrow(/batchWaitMs must be above 0/);
      expect(() => new AllocationService(cluster, { allocator: { model: 'agones-batch', informerLagMs: -1 } })).toThrow(/informerLagMs must be 0 or more/);
      expect(() => new AllocationService(cluster, { allocator: { model: 'exact', replicas: 2 } })).toThrow(/go with the agones-batch model/);
      expect(() => new AllocationService(cluster, { allocator: { model: 'fast' as 'exact' } })).toThrow(/must be exact or agones-batch, not "fast"/);
    } finally {
      cluster.close();
    }
  });
});
