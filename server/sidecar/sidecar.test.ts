import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GameServerController } from '../controllers/gameserver-controller.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { type Cluster, createCluster } from '../cluster.js';
import { replayLog } from '../replay.js';
import { ConformanceRecorder } from './conformance.js';
import { defaultLocalGameServer } from './local-gameserver.js';
import { Sidecar } from './sidecar.js';

const ALL_GATES = parseFeatureGates('CountsAndLists=true&PlayerTracking=true');
const clusters: Cluster[] = [];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDb(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return join(dir, 'events.db');
}

async function setup(options: { gates?: string; db?: string } = {}) {
  const gates = options.gates === undefined ? ALL_GATES : parseFeatureGates(options.gates);
  const clock = new VirtualClock();
  const cluster = createCluster({ db: options.db ?? ':memory:', clock, gates });
  clusters.push(cluster);
  const gs = defaultLocalGameServer({ uid: '1234', now: clock.now(), gates });
  await cluster.commit([gameServerEvent('GameServerCreated', 'default', 'local', { object: gs })]);
  const recorder = new ConformanceRecorder([]);
  const sidecar = new Sidecar(cluster, 'default', 'local', { recorder });
  const state = () => cluster.gameServers.get('default', 'local')!.status.state;
  return { cluster, clock, sidecar, recorder, state };
}

afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

describe('Sidecar lifecycle', () => {
  it('reaches Ready through RequestReady and the controller', async () => {
    const { cluster, clock, sidecar, state } = await setup();
    const controller = new GameServerController(cluster);
    controller.start();
    await sidecar.ready();
    expect(state()).toBe('RequestReady');
    clock.advance(0);
    await new Promise((r) => setImmediate(r));
    expect(state()).toBe('Ready');
    controller.stop();
  });

  it('answers a refused call with success and changes nothing (Shutdown is final)', async () => {
    const { cluster, sidecar, state } = await setup();
    await sidecar.shutdown();
    const seq = cluster.log.lastSeq;
    await sidecar.ready();
    await sidecar.allocate();
    expect(state()).toBe('Shutdown');
    expect(cluster.log.lastSeq).toBe(seq);
  });

  it('streams the current GameServer and then each committed change', async () => {
    const { sidecar } = await setup();
    const messages = firstValueFrom(sidecar.watchGameServer().pipe(take(3), toArray()));
    await sidecar.allocate();
    await sidecar.setLabel('mode', 'ctf');
    const [first, second, third] = await messages;
    expect(first!.status.state).toBe('Scheduled');
    expect(second!.status.state).toBe('Allocated');
    expect(third!.object_meta.labels['agones.dev/sdk-mode']).toBe('ctf');
    expect(Number(third!.object_meta.resource_version)).toBeGreaterThan(Number(second!.object_meta.resource_version));
  });
});

describe('Sidecar metadata', () => {
  it('stores labels and annotations with the SDK prefix', async () => {
    const { cluster, sidecar } = await setup();
    await sidecar.setLabel('map', 'dust2');
    await sidecar.setAnnotation('note', 'anything: at all / really');
    const gs = cluster.gameServers.get('default', 'local')!;
    expect(gs.metadata.labels['agones.dev/sdk-map']).toBe('dust2');
    expect(gs.metadata.annotations['agones.dev/sdk-note']).toBe('anything: at all / really');
  });

  it('refuses invalid keys and values with INVALID_ARGUMENT and appends nothing', async () => {
    const { cluster, sidecar } = await setup();
    const seq = cluster.log.lastSeq;
    await expect(sidecar.setLabel('bad key', 'v')).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/^invalid label key "bad key": name part must consist of/) });
    await expect(sidecar.setLabel('k', 'no spaces')).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/^invalid label value "no spaces" for key "k"/) });
    await expect(sidecar.setLabel('a'.repeat(63), 'v')).rejects.toMatchObject({ code: 3, message: expect.stringContaining('must be no more than 63 characters') });
    await expect(sidecar.setAnnotation('a'.repeat(64), 'v')).rejects.toMatchObject({ code: 3 });
    expect(cluster.log.lastSeq).toBe(seq);
  });
});

describe('Sidecar counters', () => {
  it('follows the real sidecar: capacity, then count, then diff; clamps a lowered capacity', async () => {
    const { sidecar } = await setup();
    await expect(sidecar.getCounter('rooms')).resolves.toEqual({ name: 'rooms', count: 1, capacity: 10 });
    expect(await sidecar.updateCounter({ name: 'rooms', countDiff: 9 })).toMatchObject({ count: 10 });
    expect(await sidecar.updateCounter({ name: 'rooms', capacity: 42, countDiff: -1 })).toMatchObject({ count: 9, capacity: 42 });
    expect(await sidecar.updateCounter({ name: 'rooms', count: 40, capacity: 42, countDiff: 0 })).toMatchObject({ count: 40 });
    expect(await sidecar.updateCounter({ name: 'rooms', capacity: 5, countDiff: 0 })).toEqual({ name: 'rooms', count: 5, capacity: 5 });
    expect(await sidecar.updateCounter({ name: 'rooms', capacity: 25, count: 0, countDiff: 25 })).toMatchObject({ count: 25, capacity: 25 });
  });

  it('rejects out-of-range requests whole, with Agones messages, and appends nothing', async () => {
    const { cluster, sidecar } = await setup();
    const seq = cluster.log.lastSeq;
    await expect(sidecar.updateCounter({ name: 'rooms', countDiff: 100 })).rejects.toMatchObject({
      code: 2,
      message: 'out of range. Count must be within range [0,Capacity]. Found Count: 101, Capacity: 10',
    });
    await expect(sidecar.updateCounter({ name: 'rooms', countDiff: -2 })).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.updateCounter({ name: 'rooms', count: 11, countDiff: 0 })).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.updateCounter({ name: 'rooms', capacity: -1, countDiff: 0 })).rejects.toMatchObject({
      message: 'out of range. Capacity must be greater than or equal to 0. Found Capacity: -1',
    });
    await expect(sidecar.updateCounter({ name: 'rooms', capacity: 0, countDiff: 1 })).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.updateCounter({ name: 'nope', countDiff: 1 })).rejects.toMatchObject({ message: 'counter not found: nope' });
    await expect(sidecar.getCounter('nope')).rejects.toThrow('counter not found: nope');
    await expect(sidecar.updateCounter({ name: 'rooms', countDiff: 0 })).rejects.toMatchObject({ message: /Malformed CounterUpdateRequest/ });
    await expect(sidecar.getCounter('rooms')).resolves.toEqual({ name: 'rooms', count: 1, capacity: 10 });
    expect(cluster.log.lastSeq).toBe(seq);
  });
});

describe('Sidecar lists', () => {
  it('adds, removes and refuses duplicates and overflow in Agones order', async () => {
    const { sidecar } = await setup();
    expect((await sidecar.addListValue('players', 'test3')).values).toEqual(['test0', 'test1', 'test2', 'test3']);
    await expect(sidecar.addListValue('players', 'test3')).rejects.toMatchObject({ message: 'already exists. Value: test3 already in List: players' });
    expect((await sidecar.removeListValue('players', 'test2')).values).toEqual(['test0', 'test1', 'test3']);
    await expect(sidecar.removeListValue('players', 'test2')).rejects.toMatchObject({ message: 'not found: value test2 not in list players' });
    await sidecar.updateList({ name: 'players', capacity: 3, values: [] }, ['capacity']);
    // Full: the capacity check comes before the duplicate check.
    await expect(sidecar.addListValue('players', 'test0')).rejects.toMatchObject({ message: 'out of range. No available capacity. Current Capacity: 3, List Size: 3' });
  });

  it('updates by mask; an empty mask merges (capacity overwrites, values append) then truncates', async () => {
    const { sidecar } = await setup();
    expect(await sidecar.updateList({ name: 'players', capacity: 10, values: ['a', 'b'] }, ['capacity', 'values'])).toEqual({ name: 'players', capacity: 10, values: ['a', 'b'] });
    expect(await sidecar.updateList({ name: 'players', capacity: 0, values: ['c'] }, [])).toEqual({ name: 'players', capacity: 10, values: ['a', 'b', 'c'] });
    expect(await sidecar.updateList({ name: 'players', capacity: 2, values: [] }, [])).toEqual({ name: 'players', capacity: 2, values: ['a', 'b'] });
  });

  it('rejects bad masks, capacities over 1000, more than 1000 values and unknown lists', async () => {
    const { cluster, sidecar } = await setup();
    const seq = cluster.log.lastSeq;
    await expect(sidecar.updateList({ name: 'players', capacity: 1, values: [] }, ['bogus'])).rejects.toMatchObject({ message: /Field Mask Path\(s\): \[bogus\] are invalid/ });
    await expect(sidecar.updateList({ name: 'players', capacity: 1001, values: [] }, ['capacity'])).rejects.toMatchObject({ message: 'out of range. Capacity must be within range [0,1000]. Found Capacity: 1001' });
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}`);
    await expect(sidecar.updateList({ name: 'players', capacity: 1000, values: many }, ['values'])).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.updateList({ name: 'nope', capacity: 1, values: [] }, ['capacity'])).rejects.toMatchObject({ message: 'not found. nope List not found' });
    await expect(sidecar.updateList(undefined, undefined)).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.getList('nope')).rejects.toThrow('list not found: nope');
    expect(cluster.log.lastSeq).toBe(seq);
  });
});

describe('Sidecar players', () => {
  it('tracks connections against the capacity', async () => {
    const { sidecar } = await setup();
    await expect(sidecar.playerConnect('1')).rejects.toMatchObject({ message: 'players are already at capacity' });
    await sidecar.setPlayerCapacity(2);
    await expect(sidecar.getPlayerCapacity()).resolves.toBe(2);
    expect(await sidecar.playerConnect('1')).toBe(true);
    expect(await sidecar.playerConnect('1')).toBe(false);
    expect(await sidecar.playerConnect('2')).toBe(true);
    await expect(sidecar.playerConnect('3')).rejects.toMatchObject({ code: 2 });
    await expect(sidecar.getConnectedPlayers()).resolves.toEqual(['1', '2']);
    await expect(sidecar.isPlayerConnected('2')).resolves.toBe(true);
    expect(await sidecar.playerDisconnect('1')).toBe(true);
    expect(await sidecar.playerDisconnect('1')).toBe(false);
    await expect(sidecar.getPlayerCount()).resolves.toBe(1);
  });
});

describe('feature gates', () => {
  it('answers gated calls with "<Gate> not enabled" when the gate is off (the default)', async () => {
    const { sidecar } = await setup({ gates: '' });
    await expect(sidecar.getCounter('rooms')).rejects.toThrow('CountsAndLists not enabled');
    await expect(sidecar.playerConnect('1')).rejects.toMatchObject({ code: 2, message: 'PlayerTracking not enabled' });
    const gs = await sidecar.getGameServer();
    expect(gs.status.counters).toEqual({});
    expect(gs.status.lists).toEqual({});
    expect(gs.status.players).toBeNull();
  });
});

describe('replay', () => {
  it('rebuilds exactly the live state from the log file', async () => {
    const db = tempDb('fleetsim-replay-');
    const { cluster, clock, sidecar } = await setup({ db });
    await sidecar.setLabel('a', 'b');
    await sidecar.reserve(5);
    const reservedAt = cluster.resourceVersion;
    clock.advance(5000);
    await sidecar.updateCounter({ name: 'rooms', countDiff: 3 });
    await sidecar.addListValue('players', 'x');
    await sidecar.setPlayerCapacity(4);
    await sidecar.playerConnect('p1');
    await sidecar.allocate();
    await new Promise((r) => setImmediate(r));
    const live = [...cluster.gameServers.values()];
    expect(replayLog(db).gameServers.get('default', 'local')).toEqual(live[0]);
    // And up to a point in the past.
    const atReserve = replayLog(db, { toSeq: reservedAt }).gameServers.get('default', 'local')!;
    expect(atReserve.status.state).toBe('Reserved');
  });

  it('restarts from the file and carries on where it stopped, timers included', async () => {
    const db = tempDb('fleetsim-restart-');
    const first = await setup({ db });
    await first.sidecar.reserve(10);
    const before = first.cluster.gameServers.get('default', 'local');
    first.cluster.close();
    clusters.length = 0;

    const clock = new VirtualClock();
    const cluster = createCluster({ db, clock, gates: ALL_GATES });
    clusters.push(cluster);
    expect(cluster.gameServers.get('default', 'local')).toEqual(before);
    clock.advance(10_000);
    await new Promise((r) => setImmediate(r));
    expect(cluster.gameServers.get('default', 'local')!.status.state).toBe('RequestReady');
  });
});
