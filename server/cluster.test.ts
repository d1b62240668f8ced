import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from './clock.js';
import { parseFeatureGates } from './features.js';
import { gameServerEvent } from './kinds/gameserver/events.js';
import { defaultLocalGameServer } from './sidecar/local-gameserver.js';
import { Sidecar } from './sidecar/sidecar.js';
import { type Cluster, createCluster } from './cluster.js';

const gates = parseFeatureGates('');
const dirs: string[] = [];
const clusters: Cluster[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const cluster of clusters.splice(0)) cluster.close();
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-cluster-'));
  dirs.push(dir);
  return join(dir, 'events.db');
}

function open(db: string, seed = 7): Cluster {
  const cluster = createCluster({ db, clock: new VirtualClock(), gates, seed });
  clusters.push(cluster);
  return cluster;
}

async function createLocal(cluster: Cluster): Promise<void> {
  const gs = defaultLocalGameServer({ uid: cluster.rng.uid(), now: cluster.clock.now(), gates });
  await cluster.commit([gameServerEvent('GameServerCreated', 'default', 'local', { object: gs })]);
}

/** Holds every group commit until `release()`: what a slow disk, or a crash, looks like to readers. */
function holdCommits(cluster: Cluster): { release: () => void } {
  const flush = cluster.log.flush.bind(cluster.log);
  const spy = vi.spyOn(cluster.log, 'flush').mockImplementation(() => undefined);
  return {
    release: () => {
      spy.mockRestore();
      flush();
    },
  };
}

describe('reads show committed state only', () => {
  it('a reader waits for the commit in flight and then sees it, never before', async () => {
    const cluster = open(':memory:');
    await createLocal(cluster);
    const held = holdCommits(cluster);
    const written = cluster.commit([gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'b' } })]);
    // The read model has moved (a decider needs that), but the event is not durable yet.
    expect(cluster.gameServers.get('default', 'local')!.metadata.labels.a).toBe('b');

    const seen: Array<string | undefined> = [];
    const read = cluster.readCommitted(() => seen.push(cluster.gameServers.get('default', 'local')!.metadata.labels.a));
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([]);

    held.release();
    await Promise.all([written, read]);
    expect(seen).toEqual(['b']);
  });

  it('a read queued behind a commit that fails is never answered with its state', async () => {
    const cluster = open(':memory:');
    await createLocal(cluster);
    const held = holdCommits(cluster);
    const written = cluster.commit([gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'b' } })]);
    written.catch(() => undefined);
    const read = vi.fn();
    void cluster.readCommitted(read);
    // The disk refuses the write: the process would stop here, and the reader must not have read.
    cluster.log.database.exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => held.release()).toThrow('disk full');
    await expect(written).rejects.toThrow('disk full');
    expect(read).not.toHaveBeenCalled();
  });

  it("the sidecar's GET /gameserver and watch wait for the commit", async () => {
    const cluster = open(':memory:');
    await createLocal(cluster);
    const sidecar = new Sidecar(cluster, 'default', 'local');
    const held = holdCommits(cluster);
    void cluster.commit([gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'b' } })]);

    const got = vi.fn();
    void sidecar.getGameServer().then(got);
    const watched: Array<string | undefined> = [];
    const subscription = sidecar.watchGameServer().subscribe((gs) => watched.push(gs.object_meta.labels.a));
    await new Promise((r) => setImmediate(r));
    expect(got).not.toHaveBeenCalled();
    expect(watched).toEqual([]);

    held.release();
    await new Promise((r) => setImmediate(r));
    expect(got.mock.calls[0]![0].object_meta.labels.a).toBe('b');
    // The watch starts from the committed state and misses nothing after it.
    expect(watched).toEqual(['b']);
    await cluster.commit([gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'c' } })]);
    expect(watched).toEqual(['b', 'c']);
    subscription.unsubscribe();
  });

  it('a write that changes nothing answers only once the state it rests on is durable', async () => {
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates('CountsAndLists=true'), seed: 7 });
    clusters.push(cluster);
    const gs = defaultLocalGameServer({ uid: cluster.rng.uid(), now: cluster.clock.now(), gates: cluster.gates });
    await cluster.commit([gameServerEvent('GameServerCreated', 'default', 'local', { object: gs })]);
    const sidecar = new Sidecar(cluster, 'default', 'local');
    const held = holdCommits(cluster);
    void cluster.commit([gameServerEvent('GameServerCounterSet', 'default', 'local', { counter: 'rooms', count: 5, capacity: 10 })]);

    const answered = vi.fn();
    // The same count again: nothing to write, but "5" is not durable yet.
    void sidecar.updateCounter({ name: 'rooms', count: 5, countDiff: 0 }).then(answered);
    await new Promise((r) => setImmediate(r));
    expect(answered).not.toHaveBeenCalled();
    held.release();
    await new Promise((r) => setImmediate(r));
    expect(answered).toHaveBeenCalledWith({ name: 'rooms', count: 5, capacity: 10 });
  });

  it('commitAndRead answers with the state right after its own events, not a later writer\u2019s', async () => {
    const cluster = open(':memory:');
    await createLocal(cluster);
    const answer = cluster.commitAndRead(
      [gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'mine' } })],
      () => cluster.gameServers.get('default', 'local')!.metadata.labels.a,
    );
    void cluster.commit([gameServerEvent('GameServerMetadataPatched', 'default', 'local', { labels: { a: 'later' } })]);
    await expect(answer).resolves.toBe('mine');
  });
});

describe('uids and generated names across restarts', () => {
  const draw = (cluster: Cluster) => Array.from({ length: 200 }, () => `${cluster.rng.uid()} ${cluster.rng.suffix()}`);

  it('a restart never draws what an earlier start of the same log drew', async () => {
    const db = tempDb();
    const first = open(db);
    await createLocal(first);
    const before = draw(first);
    first.close();
    clusters.splice(clusters.indexOf(first), 1);

    const second = open(db);
    const after = draw(second);
    const uids = (draws: string[]) => draws.map((d) => d.split(' ')[0]);
    expect(new Set([...uids(before), ...uids(after)]).size).toBe(before.length + after.length);
    expect(after).not.toEqual(before);
  });

  it('a fresh log with the same seed draws the same uids', () => {
    expect(draw(open(':memory:', 3))).toEqual(draw(open(':memory:', 3)));
    expect(draw(open(':memory:', 3))).not.toEqual(draw(open(':memory:', 4)));
  });
});
