import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GameServerController } from '../controllers/gameserver-controller.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { ApiError } from '../k8s/status.js';
import { ResourceService } from '../resources/service.js';
import { type Cluster, createCluster } from '../cluster.js';
import { ensureNodes } from '../sim/nodes.js';
import { AllocationService } from './allocation-service.js';
import { readyGameServers, settler } from '../../test/helpers/cluster.js';

const clusters: Cluster[] = [];
afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

async function setup(gates = 'CountsAndLists=true', count = 6, model: 'exact' | 'agones-batch' = 'exact') {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(gates) });
  clusters.push(cluster);
  await ensureNodes(cluster, 2);
  new GameServerController(cluster, { maxPodsPerNode: 4 }).start();
  const resources = new ResourceService(cluster);
  for (let i = 0; i < count; i++) {
    await resources.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name: `gs-${i}`, labels: { 'agones.dev/fleet': 'f', team: i % 2 ? 'red' : 'blue' } },
      spec: {
        ports: [{ name: 'default', containerPort: 7654 }],
        template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
        ...(gates.includes('CountsAndLists=true') && { counters: { rooms: { count: 0, capacity: 2 } }, lists: { players: { capacity: 3 } } }),
      },
    });
  }
  const settle = settler(clock);
  await readyGameServers(cluster, settle, count);
  const service = new AllocationService(cluster, { allocator: { model } });
  return { cluster, clock, service, settle };
}

describe('AllocationService', () => {
  it('answers UnAllocated only once the allocations it saw are durable', async () => {
    const { service, cluster } = await setup('', 1);
    const request = { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }] } };
    const flush = cluster.log.flush.bind(cluster.log);
    const hold = vi.spyOn(cluster.log, 'flush').mockImplementation(() => undefined);
    const first = service.create('default', request);
    let refused = false;
    const second = service.create('default', request).then((gsa) => {
      refused = true;
      return gsa;
    });
    await new Promise((r) => setImmediate(r));
    // The only server is taken by an allocation a crash could still take back: no answer yet.
    expect(refused).toBe(false);
    hold.mockRestore();
    flush();
    expect((await first).status?.state).toBe('Allocated');
    expect((await second).status?.state).toBe('UnAllocated');
  });

  it('allocates Packed from the busiest node, each server once, and answers UnAllocated when none is left', async () => {
    const { service, cluster } = await setup();
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const gsa = await service.create('default', { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }] } });
      expect(gsa.status?.state).toBe('Allocated');
      names.push(gsa.status!.gameServerName!);
      expect(gsa.metadata?.name).toBe(gsa.status!.gameServerName);
    }
    expect(new Set(names).size).toBe(6);
    // node-1 held four servers and was filled first; its four go before node-2's two.
    const nodes = names.map((n) => cluster.gameServers.get('default', n)!.status.nodeName);
    expect(nodes.slice(0, 4).every((n) => n === nodes[0])).toBe(true);
    const none = await service.create('default', { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }] } });
    expect(none.status).toEqual({ state: 'UnAllocated', gameServerName: '', source: '' });
  });

  it('tries selectors in order, patches metadata and applies counter and list actions with clamping', async () => {
    const { service, cluster } = await setup();
    const gsa = await service.create('default', {
      spec: {
        selectors: [{ matchLabels: { team: 'green' } }, { matchLabels: { team: 'red' } }],
        metadata: { labels: { mode: 'ctf' }, annotations: { map: 'dust2' } },
        counters: { rooms: { action: 'Increment', amount: 5 } },
        lists: { players: { addValues: ['a', 'b', 'c', 'd'] } },
      },
    });
    const gs = cluster.gameServers.get('default', gsa.status!.gameServerName!)!;
    expect(gs.metadata.labels.team).toBe('red');
    expect(gs.metadata.labels.mode).toBe('ctf');
    expect(gs.metadata.annotations.map).toBe('dust2');
    expect(gs.metadata.annotations['agones.dev/last-allocated']).toBeDefined();
    expect(gs.status.counters?.rooms).toEqual({ count: 2, capacity: 2 });
    expect(gs.status.lists?.players).toEqual({ capacity: 3, values: ['a', 'b', 'c'] });
    expect(gsa.status?.counters?.rooms).toEqual({ count: 2, capacity: 2 });
  });

  it('re-allocates an Allocated server when the selector asks for Allocated with room', async () => {
    const { service } = await setup('CountsAndLists=true', 1);
    const first = await service.create('default', { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }], counters: { rooms: { action: 'Increment', amount: 1 } } } });
    const again = await service.create('default', {
      spec: {
        selectors: [{ gameServerState: 'Allocated', counters: { rooms: { minAvailable: 1 } } }],
        counters: { rooms: { action: 'Increment', amount: 1 } },
      },
    });
    expect(again.status?.gameServerName).toBe(first.status?.gameServerName);
    expect(again.status?.counters?.rooms).toEqual({ count: 2, capacity: 2 });
    const full = await service.create('default', { spec: { selectors: [{ gameServerState: 'Allocated', counters: { rooms: { minAvailable: 1 } } }] } });
    expect(full.status?.state).toBe('UnAllocated');
  });

  it('refuses invalid requests with 422 causes and gated fields when the gate is off, allocating nothing', async () => {
    const { service, cluster } = await setup('', 2);
    const seq = cluster.log.lastSeq;
    const invalid = async (body: unknown) => {
      try {
        await service.create('default', body);
      } catch (error) {
        return (error as ApiError).status;
      }
      throw new Error('expected a refusal');
    };
    const bad = await invalid({ spec: { scheduling: 'Sideways', selectors: [{ gameServerState: 'Shutdown' }] } });
    expect(bad.code).toBe(422);
    expect(bad.details?.causes?.map((c) => c.field)).toEqual(expect.arrayContaining(['spec.scheduling', 'spec.selectors[0].gameServerState']));
    const gated = await invalid({ spec: { counters: { rooms: { action: 'Increment', amount: 1 } } } });
    expect(gated.code).toBe(422);
    expect(gated.message).toContain('CountsAndLists');
    const unknown = await invalid({ spec: { selectorz: [] } });
    expect(unknown.code).toBe(400);
    expect(unknown.message).toContain('unknown field "spec.selectorz"');
    expect(cluster.log.lastSeq).toBe(seq);
  });

  it('converts the deprecated required/preferred fields', async () => {
    const { service } = await setup('', 2);
    const gsa = await service.create('default', {
      spec: {
        required: { matchLabels: { 'agones.dev/fleet': 'f' }, gameServerState: 'Ready' },
        preferred: [{ matchLabels: { team: 'red' } }],
        scheduling: 'Packed',
        metadata: { labels: { mode: 'duel' }, annotations: { arena: 'harbour' } },
      },
    });
    expect(gsa.status?.state).toBe('Allocated');
  });

  it("allocates with the project's example (examples/gameserverallocation.yaml): fallback selector, then labels the server", async () => {
    const { service, cluster } = await setup('', 2);
    const text = readFileSync(new URL('../../examples/gameserverallocation.yaml', import.meta.url), 'utf8');
    const example = parseAllDocuments(text)[0]!.toJS() as { spec: { selectors: Array<{ matchLabels: Record<string, string> }> } };
    // The example names the fleet of examples/fleet.yaml; here the servers belong to fleet `f`.
    for (const selector of example.spec.selectors) selector.matchLabels['agones.dev/fleet'] = 'f';
    const first = await service.create('default', example);
    expect(first.status?.state).toBe('Allocated');
    const gs = cluster.gameServers.get('default', first.status!.gameServerName!)!;
    expect(gs.metadata.labels).toMatchObject({ queue: 'ranked' });
    expect(gs.metadata.annotations).toMatchObject({ 'match-id': 'example-0001' });
    // The labelled server is Allocated now, so the first selector finds nothing Ready and the
    // second request falls back to the other server.
    const second = await service.create('default', example);
    expect(second.status?.state).toBe('Allocated');
    expect(second.status?.gameServerName).not.toBe(first.status?.gameServerName);
  });

  it('agones-batch waits for the dispatcher to wake, then allocates as exact does', async () => {
    const { service, clock, settle } = await setup('', 2, 'agones-batch');
    let answered = false;
    const pending = service.create('default', { spec: {} }).then((r) => {
      answered = true;
      return r;
    });
    await settle();
    expect(answered).toBe(false);
    clock.advance(500);
    await settle();
    expect((await pending).status?.state).toBe('Allocated');
  });

  it('reads and prepares a request text once: later ones share the frozen result, a refused one is read again', async () => {
    const { service } = await setup('', 2);
    let reads = 0;
    const received = (body: unknown, strict = true) => {
      const text = JSON.stringify(body);
      const read = () => {
        reads++;
        return JSON.parse(text) as unknown;
      };
      return { via: 'resource-api', namespace: 'default', strict, contentType: 'application/json', body: text, read } as const;
    };
    const good = { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }] } };
    // Both allocate, each its own server, from one reading.
    const a = await service.createReceived(received(good));
    const b = await service.createReceived(received(good));
    expect(reads).toBe(1);
    expect(a.status?.state).toBe('Allocated');
    expect(b.status?.gameServerName).not.toBe(a.status?.gameServerName);
    expect(Object.isFrozen(b.spec!.selectors![0]!.matchLabels)).toBe(true);
    // The key holds how it was read: the same text, not strict, is read apart.
    await service.createReceived(received(good, false));
    expect(reads).toBe(2);

    const bad = { spec: { selectors: [{ matchLabels: { 'bad key!': 'x' } }] } };
    await expect(service.createReceived(received(bad))).rejects.toThrow(ApiError);
    await expect(service.createReceived(received(bad))).rejects.toThrow(ApiError);
    expect(reads).toBe(4);
  });
});
