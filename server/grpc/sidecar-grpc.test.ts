import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import AgonesSDK from '@google-cloud/agones-sdk';
import { finalize } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WallClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { type Cluster, createCluster } from '../cluster.js';
import { GrpcCode } from '../grpc-status.js';
import { sdkErrors } from '../sidecar/errors.js';
import { defaultLocalGameServer } from '../sidecar/local-gameserver.js';
import { Sidecar } from '../sidecar/sidecar.js';
import type { PbMessage, PbMessageClass, sdk } from './agones-sdk.js';
import { type SidecarGrpcServer, startSidecarGrpc } from './sidecar-grpc-port.js';
import type { GameServerObject, OfficialSdk, PbMapEntries } from '../../test/helpers/agones-sdk.js';
import { seconds } from '../../test/helpers/time-scale.js';

// -- the official client, typed by test/helpers/agones-sdk.ts -------------------------------------

const OfficialSdkClass = AgonesSDK as unknown as new () => OfficialSdk;

function connectOfficialSdk(port: number): OfficialSdk {
  process.env.AGONES_SDK_GRPC_PORT = String(port);
  return new OfficialSdkClass();
}

/** `AgonesSDK.close()` leaves the alpha and beta channels open; close them too. */
function closeOfficialSdk(client: OfficialSdk): void {
  client.close();
  client.alpha.client.close();
  client.beta.client.close();
}

// -- a raw client on the package's own service definition, for what the official one hides -----

const require = createRequire(import.meta.url);
const sdkPb = require('@google-cloud/agones-sdk/lib/sdk_pb.js') as sdk.Module;
const sdkGrpc = require('@google-cloud/agones-sdk/lib/sdk_grpc_pb.js') as sdk.GrpcModule;
const RawClient = grpc.makeGenericClientConstructor(sdkGrpc['agones.dev.sdk.SDK'], 'agones.dev.sdk.SDK');

interface RawSdkClient extends grpc.Client {
  health(callback: (error: grpc.ServiceError | null, response?: PbMessage) => void): grpc.ClientWritableStream<PbMessage>;
  watchGameServer(request: PbMessage): grpc.ClientReadableStream<sdk.GameServer>;
  getGameServer(request: PbMessage, callback: (error: grpc.ServiceError | null, response?: PbMessage) => void): void;
}

function rawClient(port: number): RawSdkClient {
  return new RawClient(`localhost:${port}`, grpc.credentials.createInsecure()) as unknown as RawSdkClient;
}

function empty(): PbMessage {
  const Empty: PbMessageClass<PbMessage> = sdkPb.Empty;
  return new Empty();
}

// -- helpers ---------------------------------------------------------------------------------------

function expectGrpcError(error: unknown, code: number, details: string): void {
  expect(error).toMatchObject({ code, details });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

/** Collects a stream's messages; `until` resolves with the first one (past or future) matching. */
class Inbox<T> {
  readonly received: T[] = [];
  private waiters: { match: (m: T) => boolean; resolve: (m: T) => void }[] = [];

  push(message: T): void {
    this.received.push(message);
    this.waiters = this.waiters.filter((w) => {
      if (!w.match(message)) return true;
      w.resolve(message);
      return false;
    });
  }

  until(match: (m: T) => boolean): Promise<T> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

function mapOf<V>(entries: PbMapEntries<V>): Record<string, V> {
  return Object.fromEntries(entries);
}

const NAMESPACE = 'default';
const NAME = 'local';

async function localCluster(): Promise<Cluster> {
  const gates = parseFeatureGates('CountsAndLists=true&PlayerTracking=true');
  const cluster = createCluster({ db: ':memory:', clock: new WallClock(), gates });
  const object = defaultLocalGameServer({ uid: '1234', now: cluster.clock.now(), gates });
  await cluster.commit([gameServerEvent('GameServerCreated', NAMESPACE, NAME, { object })]);
  return cluster;
}

// -- the official client against a served GameServer -----------------------------------------------

describe('sidecar gRPC with the official Node SDK', () => {
  let cluster: Cluster;
  let server: SidecarGrpcServer;
  let client: OfficialSdk;
  const state = () => cluster.gameServers.get(NAMESPACE, NAME)?.status.state;

  beforeAll(async () => {
    cluster = await localCluster();
    server = await startSidecarGrpc({ address: '127.0.0.1', port: 0, sidecar: () => new Sidecar(cluster, NAMESPACE, NAME) });
    expect(server.port).toBeGreaterThan(0);
    client = connectOfficialSdk(server.port);
    await client.connect();
  });

  afterAll(async () => {
    closeOfficialSdk(client);
    await server.close();
    cluster.close();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('GetGameServer returns the record as an sdk.GameServer', async () => {
    const gs = await client.getGameServer();
    const record = cluster.gameServers.get(NAMESPACE, NAME)!;
    expect(gs.objectMeta).toMatchObject({
      name: NAME,
      namespace: NAMESPACE,
      uid: '1234',
      resourceVersion: record.metadata.resourceVersion,
      generation: 1,
      creationTimestamp: Math.floor(Date.parse(record.metadata.creationTimestamp) / 1000),
      deletionTimestamp: 0,
    });
    expect(mapOf(gs.objectMeta.labelsMap)).toEqual({ islocal: 'true' });
    expect(mapOf(gs.objectMeta.annotationsMap)).toEqual({ annotation: 'true' });
    expect(gs.spec.health).toEqual({ disabled: false, periodSeconds: 3, failureThreshold: 5, initialDelaySeconds: 10 });
    expect(gs.status.state).toBe('Scheduled');
    expect(gs.status.address).toBe('127.0.0.1');
    expect(gs.status.portsList).toEqual([{ name: 'default', port: 7777 }]);
    expect(gs.status.players).toEqual({ count: 0, capacity: 0, idsList: [] });
    expect(mapOf(gs.status.countersMap)).toEqual({ rooms: { count: 1, capacity: 10 } });
    expect(mapOf(gs.status.listsMap)).toEqual({ players: { capacity: 100, valuesList: ['test0', 'test1', 'test2'] } });
  });

  it('WatchGameServer sends the current state first, then each change', async () => {
    const inbox = new Inbox<GameServerObject>();
    const errors: unknown[] = [];
    client.watchGameServer(
      (gs) => inbox.push(gs),
      (error) => errors.push(error),
    );
    const first = await inbox.until(() => true);
    expect(first.status.state).toBe('Scheduled');
    expect(mapOf(first.objectMeta.annotationsMap)).not.toHaveProperty('agones.dev/sdk-watched');

    await client.setAnnotation('watched', 'yes');
    const changed = await inbox.until((gs) => mapOf(gs.objectMeta.annotationsMap)['agones.dev/sdk-watched'] === 'yes');
    expect(inbox.received.indexOf(changed)).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it('Ready moves the record to RequestReady', async () => {
    await expect(client.ready()).resolves.toEqual({});
    expect(state()).toBe('RequestReady');
    expect((await client.getGameServer()).status.state).toBe('RequestReady');
  });

  it('SetLabel stores the label with the SDK prefix', async () => {
    await client.setLabel('team', 'blue');
    expect(cluster.gameServers.get(NAMESPACE, NAME)?.metadata.labels['agones.dev/sdk-team']).toBe('blue');
    expect(mapOf((await client.getGameServer()).objectMeta.labelsMap)).toMatchObject({ 'agones.dev/sdk-team': 'blue' });
  });

  it('SetLabel with an invalid key fails with INVALID_ARGUMENT and the Agones message', async () => {
    const error = await rejection(client.setLabel('bad key', 'x'));
    expectGrpcError(
      error,
      grpc.status.INVALID_ARGUMENT,
      'invalid label key "bad key": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', ' +
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', " +
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
    expect(cluster.gameServers.get(NAMESPACE, NAME)?.metadata.labels).not.toHaveProperty('agones.dev/sdk-bad key');
  });

  it('counters: get, increment, decrement, set count and capacity', async () => {
    const counter = () => cluster.gameServers.get(NAMESPACE, NAME)?.status.counters?.rooms;
    await expect(client.beta.getCounterCount('rooms')).resolves.toBe(1);
    await expect(client.beta.getCounterCapacity('rooms')).resolves.toBe(10);

    await client.beta.incrementCounter('rooms', 9);
    expect(counter()).toEqual({ count: 10, capacity: 10 });
    const over = await rejection(client.beta.incrementCounter('rooms', 1));
    expectGrpcError(over, grpc.status.UNKNOWN, sdkErrors.countOutOfRange(11, 10).message);

    await client.beta.decrementCounter('rooms', 10);
    expect(counter()).toEqual({ count: 0, capacity: 10 });

    await client.beta.setCounterCount('rooms', 10);
    expect(counter()).toEqual({ count: 10, capacity: 10 });
    await expect(client.beta.getCounterCount('rooms')).resolves.toBe(10);

    await client.beta.setCounterCapacity('rooms', 20);
    expect(counter()).toEqual({ count: 10, capacity: 20 });
    await expect(client.beta.getCounterCapacity('rooms')).resolves.toBe(20);

    // A zero Int64Value is present, not absent: the count is set to 0.
    await client.beta.setCounterCount('rooms', 0);
    expect(counter()).toEqual({ count: 0, capacity: 20 });
  });

  it('an unknown counter fails with UNKNOWN and "counter not found"', async () => {
    expectGrpcError(await rejection(client.beta.getCounterCount('nope')), GrpcCode.UNKNOWN, 'counter not found: nope');
    expectGrpcError(await rejection(client.beta.incrementCounter('nope', 1)), GrpcCode.UNKNOWN, 'counter not found: nope');
  });

  it('lists: contains, append, delete, and setListCapacity with the SDK\'s empty mask', async () => {
    const list = () => cluster.gameServers.get(NAMESPACE, NAME)?.status.lists?.players;
    await expect(client.beta.listContains('players', 'test1')).resolves.toBe(true);
    await expect(client.beta.listContains('players', 'test9')).resolves.toBe(false);
    await expect(client.beta.getListCapacity('players')).resolves.toBe(100);
    await expect(client.beta.getListLength('players')).resolves.toBe(3);

    await client.beta.appendListValue('players', 'test3');
    expect(list()?.values).toEqual(['test0', 'test1', 'test2', 'test3']);
    expectGrpcError(
      await rejection(client.beta.appendListValue('players', 'test3')),
      GrpcCode.UNKNOWN,
      sdkErrors.valueExists('test3', 'players').message,
    );

    await client.beta.deleteListValue('players', 'test0');
    await expect(client.beta.getListValues('players')).resolves.toEqual(['test1', 'test2', 'test3']);
    expectGrpcError(
      await rejection(client.beta.deleteListValue('players', 'test0')),
      GrpcCode.UNKNOWN,
      sdkErrors.valueMissing('test0', 'players').message,
    );

    const updateList = vi.spyOn(Sidecar.prototype, 'updateList');
    await client.beta.setListCapacity('players', 2);
    expect(updateList).toHaveBeenCalledWith({ name: 'players', capacity: 2, values: [] }, []);
    expect(list()).toEqual({ capacity: 2, values: ['test1', 'test2'] });
    await expect(client.beta.getListCapacity('players')).resolves.toBe(2);
    await expect(client.beta.getListValues('players')).resolves.toEqual(['test1', 'test2']);
  });

  it('UpdateList refuses the mask path "" (no field to change) and a missing mask, and changes nothing', async () => {
    interface Settable extends PbMessage {
      setName(v: string): Settable;
      setCapacity(v: number): Settable;
      setValuesList(v: string[]): Settable;
      setList(v: PbMessage): Settable;
      setUpdateMask(v: PbMessage): Settable;
      setPathsList(v: string[]): Settable;
    }
    const betaPb = require('@google-cloud/agones-sdk/lib/beta/beta_pb.js') as Record<'List' | 'UpdateListRequest', new () => Settable>;
    const fieldMaskPb = require('google-protobuf/google/protobuf/field_mask_pb.js') as { FieldMask: new () => Settable };
    const raw = client.beta.client as unknown as {
      updateList(request: PbMessage, callback: (error: grpc.ServiceError | null) => void): void;
    };
    const updateList = (paths: string[] | undefined) => {
      const request = new betaPb.UpdateListRequest().setList(new betaPb.List().setName('players').setCapacity(5).setValuesList(['x']));
      if (paths) request.setUpdateMask(new fieldMaskPb.FieldMask().setPathsList(paths));
      return new Promise<grpc.ServiceError | null>((resolve) => raw.updateList(request, resolve));
    };
    const before = cluster.gameServers.get(NAMESPACE, NAME)?.status.lists?.players;
    for (const paths of [[''], ['capacity', '']]) {
      const error = await updateList(paths);
      expect(error).toMatchObject({ code: GrpcCode.UNKNOWN });
      expect(error?.details).toMatch(/^invalid argument\. Field Mask Path\(s\): \[.*\] are invalid for List\./);
    }
    expect(await updateList(undefined)).toMatchObject({ code: GrpcCode.UNKNOWN, details: expect.stringMatching(/cannot be nil/) });
    expect(cluster.gameServers.get(NAMESPACE, NAME)?.status.lists?.players).toEqual(before);
  });

  it('players: capacity, connect, disconnect, count', async () => {
    await client.alpha.setPlayerCapacity(2);
    await expect(client.alpha.getPlayerCapacity()).resolves.toBe(2);

    await expect(client.alpha.playerConnect('alice')).resolves.toBe(true);
    await expect(client.alpha.playerConnect('alice')).resolves.toBe(false);
    await expect(client.alpha.playerConnect('bob')).resolves.toBe(true);
    expectGrpcError(
      await rejection(client.alpha.playerConnect('carol')),
      GrpcCode.UNKNOWN,
      sdkErrors.playersAtCapacity().message,
    );
    await expect(client.alpha.getPlayerCount()).resolves.toBe(2);
    await expect(client.alpha.isPlayerConnected('alice')).resolves.toBe(true);
    await expect(client.alpha.getConnectedPlayers()).resolves.toEqual(['alice', 'bob']);

    await expect(client.alpha.playerDisconnect('alice')).resolves.toBe(true);
    await expect(client.alpha.playerDisconnect('alice')).resolves.toBe(false);
    await expect(client.alpha.getPlayerCount()).resolves.toBe(1);
    await expect(client.alpha.isPlayerConnected('alice')).resolves.toBe(false);
    expect(cluster.gameServers.get(NAMESPACE, NAME)?.status.players).toEqual({ count: 1, capacity: 2, ids: ['bob'] });
  });

  it('Health pings reach the sidecar, one per message', async () => {
    const health = vi.spyOn(Sidecar.prototype, 'health');
    const errors: unknown[] = [];
    for (let i = 0; i < 3; i++) client.health((error) => errors.push(error));
    await vi.waitFor(() => expect(health).toHaveBeenCalledTimes(3), { timeout: seconds(10), interval: 5 });
    expect(health.mock.calls).toEqual([[1], [1], [1]]);
    expect(errors).toEqual([]);
  });

  it('Reserve and Allocate go through', async () => {
    await client.reserve(30);
    expect(state()).toBe('Reserved');
    await client.allocate();
    expect(state()).toBe('Allocated');
  });

  it('Shutdown moves the record to Shutdown', async () => {
    await expect(client.shutdown()).resolves.toEqual({});
    expect(state()).toBe('Shutdown');
  });
});

// -- streams and errors, with a raw client -------------------------------------------------------

describe('sidecar gRPC streams and failures', () => {
  let cluster: Cluster;
  let server: SidecarGrpcServer;
  let raw: RawSdkClient;
  let gone = false;

  beforeAll(async () => {
    cluster = await localCluster();
    server = await startSidecarGrpc({
      address: '',
      port: 0,
      sidecar: () => {
        if (gone) throw sdkErrors.gameServerGone(NAMESPACE, NAME);
        return new Sidecar(cluster, NAMESPACE, NAME);
      },
    });
    raw = rawClient(server.port);
  });

  afterAll(async () => {
    raw.close();
    await server.close();
    cluster.close();
  });

  afterEach(() => {
    gone = false;
    vi.restoreAllMocks();
  });

  it('Health answers Empty when the client half-closes, after one ping per message', async () => {
    const health = vi.spyOn(Sidecar.prototype, 'health');
    const response = await new Promise<PbMessage | undefined>((resolve, reject) => {
      const stream = raw.health((error, reply) => (error ? reject(error) : resolve(reply)));
      stream.write(empty());
      stream.write(empty());
      stream.end();
    });
    expect(response).toBeInstanceOf(sdkPb.Empty);
    expect(health.mock.calls).toEqual([[1], [1]]);
  });

  it('a sidecar that cannot be resolved fails unary and streaming calls with its code', async () => {
    gone = true;
    const message = sdkErrors.gameServerGone(NAMESPACE, NAME).message;

    const unaryError = await new Promise<unknown>((resolve) => raw.getGameServer(empty(), (error) => resolve(error)));
    expectGrpcError(unaryError, grpc.status.NOT_FOUND, message);

    const healthError = await new Promise<unknown>((resolve) => {
      const stream = raw.health((error) => resolve(error));
      stream.on('error', () => {});
      stream.write(empty());
    });
    expectGrpcError(healthError, grpc.status.NOT_FOUND, message);

    const watchError = await new Promise<unknown>((resolve) => {
      raw.watchGameServer(empty()).on('error', resolve);
    });
    expectGrpcError(watchError, grpc.status.NOT_FOUND, message);
  });

  it('a handler that throws a plain error answers INTERNAL', async () => {
    vi.spyOn(Sidecar.prototype, 'getGameServer').mockImplementation(() => {
      throw new Error('boom');
    });
    const error = await new Promise<unknown>((resolve) => raw.getGameServer(empty(), (e) => resolve(e)));
    expectGrpcError(error, grpc.status.INTERNAL, 'boom');
  });

  it('a cancelled watch unsubscribes from the GameServer', async () => {
    let unsubscribed!: () => void;
    const finalized = new Promise<void>((resolve) => (unsubscribed = resolve));
    const original = Sidecar.prototype.watchGameServer;
    vi.spyOn(Sidecar.prototype, 'watchGameServer').mockImplementation(function (this: Sidecar) {
      return original.call(this).pipe(finalize(unsubscribed));
    });
    const stream = raw.watchGameServer(empty());
    stream.on('error', () => {});
    await new Promise((resolve) => stream.once('data', resolve));
    stream.cancel();
    await finalized;
  });

  it('close() ends open watch streams with OK', async () => {
    const stream = raw.watchGameServer(empty());
    const inbox = new Inbox<sdk.GameServer>();
    stream.on('data', (gs: sdk.GameServer) => inbox.push(gs));
    await inbox.until(() => true);
    const status = new Promise<grpc.StatusObject>((resolve) => stream.on('status', resolve));
    const ended = new Promise<void>((resolve) => stream.on('end', () => resolve()));
    await server.close();
    expect((await status).code).toBe(grpc.status.OK);
    await ended;
  });
});
