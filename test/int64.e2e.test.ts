import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { parse as parseLossless } from 'lossless-json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliProcess, type SidecarProcess, killAll, startSidecar } from './helpers/process.js';
import { startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Agones's int64 fields (counters, player capacity, counter actions) are exact end to end:
 * 9223372036854775807 comes back as itself, never rounded past 2^53 (issue 10, item 9). Run
 * against real processes: the standalone sidecar over REST and gRPC, and `fleetsim serve`'s
 * resource API and allocator, each also restarted on its own log.
 */

const MAX = '9223372036854775807';
const MAX_MINUS_1 = '9223372036854775806';
const PAST_MAX = '9223372036854775808';
const GATES = 'CountsAndLists=true&PlayerTracking=true';

/** JSON read with every integer as a bigint, so nothing is rounded on this side either. */
function exact(text: string): unknown {
  return parseLossless(text, null, (n) => (/^-?\d+$/.test(n) ? BigInt(n) : Number(n)));
}

interface Reply {
  status: number;
  text: string;
  json: unknown;
}

async function send(base: string, method: string, path: string, body?: string, contentType = 'application/json'): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    ...(body !== undefined && { body, headers: { 'content-type': contentType } }),
    signal: AbortSignal.timeout(seconds(15)),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = exact(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetsim-int64-e2e-'));
});

afterAll(async () => {
  await killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// -- gRPC: the official package's generated messages, read exactly on this side too -----------

const require = createRequire(import.meta.url);

interface Int64Message {
  serializeBinary(): Uint8Array;
}
type Setter<T> = (value: unknown) => T;
interface Int64ValueMessage extends Int64Message {
  setValue: Setter<Int64ValueMessage>;
}
interface CounterUpdateRequestMessage extends Int64Message {
  setName: Setter<CounterUpdateRequestMessage>;
  setCount: Setter<CounterUpdateRequestMessage>;
  setCapacity: Setter<CounterUpdateRequestMessage>;
}
interface UpdateCounterRequestMessage extends Int64Message {
  setCounterupdaterequest: Setter<UpdateCounterRequestMessage>;
}
interface GetCounterRequestMessage extends Int64Message {
  setName: Setter<GetCounterRequestMessage>;
}
interface CounterMessage extends Int64Message {
  getName(): string;
  getCount(): unknown;
  getCapacity(): unknown;
}
interface MessageClass<T> {
  new (): T;
  deserializeBinaryFromReader(message: T, reader: unknown): T;
}

const betaPb = require('@google-cloud/agones-sdk/lib/beta/beta_pb.js') as {
  CounterUpdateRequest: MessageClass<CounterUpdateRequestMessage>;
  UpdateCounterRequest: MessageClass<UpdateCounterRequestMessage>;
  GetCounterRequest: MessageClass<GetCounterRequestMessage>;
  Counter: MessageClass<CounterMessage>;
};
const wrappersPb = require('google-protobuf/google/protobuf/wrappers_pb.js') as { Int64Value: MessageClass<Int64ValueMessage> };
const jspb = require('google-protobuf') as {
  BinaryReader: new (bytes: Uint8Array) => { readInt64(): unknown; readInt64String(): string };
};

/** A Counter read with int64 fields as decimal strings (the generated reader would round them). */
function readCounter(bytes: Buffer): { name: string; count: string; capacity: string } {
  const reader = new jspb.BinaryReader(bytes);
  reader.readInt64 = () => reader.readInt64String();
  const counter = betaPb.Counter.deserializeBinaryFromReader(new betaPb.Counter(), reader);
  return { name: counter.getName(), count: String(counter.getCount()), capacity: String(counter.getCapacity()) };
}

function unary(client: grpc.Client, method: string, request: Int64Message): Promise<{ name: string; count: string; capacity: string }> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      `/agones.dev.sdk.beta.SDK/${method}`,
      (message: Int64Message) => Buffer.from(message.serializeBinary()),
      readCounter,
      request,
      (error, value) => (error ? reject(error) : resolve(value!)),
    );
  });
}

describe('the sidecar keeps int64 values exact', () => {
  let sidecar: SidecarProcess;
  let db: string;

  beforeAll(async () => {
    db = join(dir, 'sidecar.db');
    sidecar = await startSidecar(['--db', db, '--feature-gates', GATES]);
  });

  it('REST: a counter set to 2^63-1 (as a string and as a JSON number) reads back as itself', async () => {
    const base = sidecar.baseUrl;
    const capacity = await send(base, 'PATCH', '/v1beta1/counters/rooms', `{"capacity":"${MAX}"}`);
    expect(capacity.status, capacity.text).toBe(200);
    expect(capacity.json).toEqual({ name: 'rooms', count: '1', capacity: MAX });

    // A JSON number past 2^53 is read exactly too (protojson accepts both forms).
    const count = await send(base, 'PATCH', '/v1alpha1/counters/rooms', `{"count":${MAX_MINUS_1}}`);
    expect(count.status, count.text).toBe(200);
    expect(count.json).toEqual({ name: 'rooms', count: MAX_MINUS_1, capacity: MAX });

    const diff = await send(base, 'PATCH', '/v1beta1/counters/rooms', '{"countDiff":"1"}');
    expect(diff.json).toEqual({ name: 'rooms', count: MAX, capacity: MAX });

    const read = await send(base, 'GET', '/v1beta1/counters/rooms');
    expect(read.json).toEqual({ name: 'rooms', count: MAX, capacity: MAX });
    const gs = await send(base, 'GET', '/gameserver');
    expect((gs.json as { status: { counters: unknown } }).status.counters).toMatchObject({ rooms: { count: MAX, capacity: MAX } });
  });

  it('REST: player capacity 2^63-1 reads back as itself', async () => {
    const set = await send(sidecar.baseUrl, 'PUT', '/alpha/player/capacity', `{"count":"${MAX}"}`);
    expect(set.status, set.text).toBe(200);
    const read = await send(sidecar.baseUrl, 'GET', '/alpha/player/capacity');
    expect(read.json).toEqual({ count: MAX });
  });

  it('REST: a value past int64 or not an integer is 400 code 3, and nothing changes', async () => {
    for (const body of [`{"capacity":"${PAST_MAX}"}`, `{"capacity":${PAST_MAX}}`, '{"capacity":1.5}', '{"count":"-9223372036854775809"}']) {
      const reply = await send(sidecar.baseUrl, 'PATCH', '/v1beta1/counters/rooms', body);
      expect(reply.status, `${body} -> ${reply.text}`).toBe(400);
      expect((reply.json as { code: bigint }).code).toBe(3n);
    }
    const read = await send(sidecar.baseUrl, 'GET', '/v1beta1/counters/rooms');
    expect(read.json).toEqual({ name: 'rooms', count: MAX, capacity: MAX });
  });

  it('gRPC: UpdateCounter with 2^63-1 and GetCounter answer the exact value', async () => {
    const client = new grpc.Client(`127.0.0.1:${sidecar.grpcPort}`, grpc.credentials.createInsecure());
    try {
      const update = new betaPb.UpdateCounterRequest().setCounterupdaterequest(
        new betaPb.CounterUpdateRequest()
          .setName('rooms')
          .setCount(new wrappersPb.Int64Value().setValue(BigInt(MAX_MINUS_1) - 5n))
          .setCapacity(new wrappersPb.Int64Value().setValue(BigInt(MAX_MINUS_1))),
      );
      expect(await unary(client, 'UpdateCounter', update)).toEqual({ name: 'rooms', count: '9223372036854775801', capacity: MAX_MINUS_1 });
      expect(await unary(client, 'GetCounter', new betaPb.GetCounterRequest().setName('rooms'))).toEqual({
        name: 'rooms',
        count: '9223372036854775801',
        capacity: MAX_MINUS_1,
      });
      const rest = await send(sidecar.baseUrl, 'GET', '/v1beta1/counters/rooms');
      expect(rest.json).toEqual({ name: 'rooms', count: '9223372036854775801', capacity: MAX_MINUS_1 });
    } finally {
      client.close();
    }
  });

  it('a restart on the same log keeps the values exact', async () => {
    await sidecar.process.kill('SIGTERM');
    sidecar = await startSidecar(['--db', db, '--feature-gates', GATES]);
    const read = await send(sidecar.baseUrl, 'GET', '/v1beta1/counters/rooms');
    expect(read.json).toEqual({ name: 'rooms', count: '9223372036854775801', capacity: MAX_MINUS_1 });
    const players = await send(sidecar.baseUrl, 'GET', '/alpha/player/capacity');
    expect(players.json).toEqual({ count: MAX });
  });
});

// -- the resource API and the allocator -------------------------------------------------------

const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';
const POD = '"template":{"spec":{"containers":[{"name":"game","image":"game:1"}]}}';

function gameServerJson(name: string, counters: string): string {
  return `{"apiVersion":"agones.dev/v1","kind":"GameServer","metadata":{"name":"${name}"},"spec":{"ports":[{"name":"default","containerPort":7654}],"counters":${counters},${POD}}}`;
}

function fleetJson(name: string, replicas: number, counters: string): string {
  return `{"apiVersion":"agones.dev/v1","kind":"Fleet","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},"template":{"spec":{"ports":[{"name":"default","containerPort":7654}],"counters":${counters},${POD}}}}}`;
}

type Counters = Record<string, { count: bigint; capacity: bigint }>;

describe('the resource API and the allocator keep int64 values exact', () => {
  let serve: CliProcess;
  let base: string;
  let db: string;
  let allocatedName: string;
  const serveArgs = () => ['--db', db, '--no-default-fleet', '--nodes', '4', '--feature-gates', 'CountsAndLists=true'];

  beforeAll(async () => {
    db = join(dir, 'serve.db');
    const started = await startServe(serveArgs());
    serve = started.process;
    base = started.baseUrl;
  });

  it('a GameServer with a counter capacity 2^63-1 comes back exact, as JSON numbers', async () => {
    const created = await send(base, 'POST', GAMESERVERS, gameServerJson('big', `{"rooms":{"count":${MAX_MINUS_1},"capacity":${MAX}}}`));
    expect(created.status, created.text).toBe(201);
    expect(created.text).toContain(`"capacity":${MAX}`);
    const read = await send(base, 'GET', `${GAMESERVERS}/big`);
    const gs = read.json as { spec: { counters: Counters }; status: { counters: Counters } };
    expect(gs.spec.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });
    expect(gs.status.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });
    // YAML bodies too (kubectl create -f sends JSON; other clients send YAML).
    const yaml = [
      'apiVersion: agones.dev/v1',
      'kind: GameServer',
      'metadata: {name: big-yaml}',
      'spec:',
      '  ports: [{name: default, containerPort: 7654}]',
      `  counters: {rooms: {count: 0, capacity: ${MAX}}}`,
      '  template: {spec: {containers: [{name: game, image: "game:1"}]}}',
    ].join('\n');
    const fromYaml = await send(base, 'POST', GAMESERVERS, yaml, 'application/yaml');
    expect(fromYaml.status, fromYaml.text).toBe(201);
    expect((fromYaml.json as { spec: { counters: Counters } }).spec.counters.rooms.capacity).toBe(BigInt(MAX));
  });

  it('a counter past int64 or not an integer is 422 naming the field, and nothing is created', async () => {
    for (const [counters, field] of [
      [`{"rooms":{"capacity":${PAST_MAX}}}`, 'spec.counters.rooms.capacity'],
      ['{"rooms":{"count":1.5}}', 'spec.counters.rooms.count'],
    ] as const) {
      const reply = await send(base, 'POST', GAMESERVERS, gameServerJson('bad', counters));
      expect(reply.status, reply.text).toBe(422);
      const causes = (reply.json as { details: { causes: Array<{ field: string }> } }).details.causes;
      expect(causes.map((c) => c.field)).toContain(field);
    }
    expect((await send(base, 'GET', `${GAMESERVERS}/bad`)).status).toBe(404);
  });

  it('a Fleet keeps its template counter exact, and its status sums saturate at 2^63-1 as Agones does', async () => {
    const created = await send(base, 'POST', FLEETS, fleetJson('bigfleet', 2, `{"rooms":{"count":0,"capacity":${MAX}}}`));
    expect(created.status, created.text).toBe(201);
    await waitFor(
      async () => {
        const fleet = (await send(base, 'GET', `${FLEETS}/bigfleet`)).json as { status: { readyReplicas: bigint } };
        return fleet.status.readyReplicas === 2n;
      },
      { timeoutMs: seconds(20), intervalMs: 100, what: 'bigfleet Ready' },
    );
    const fleet = (await send(base, 'GET', `${FLEETS}/bigfleet`)).json as {
      spec: { template: { spec: { counters: Counters } } };
      status: { counters: Record<string, { count: bigint; capacity: bigint }> };
    };
    expect(fleet.spec.template.spec.counters.rooms.capacity).toBe(BigInt(MAX));
    expect(fleet.status.counters.rooms).toMatchObject({ count: 0n, capacity: BigInt(MAX) });
  });

  it('an allocation with a counter action near 2^63 answers the exact count (allocator service and resource API)', async () => {
    const reply = await send(
      base,
      'POST',
      '/gameserverallocation',
      `{"namespace":"default","gameServerSelectors":[{"matchLabels":{"agones.dev/fleet":"bigfleet"},"counters":{"rooms":{"minAvailable":"${MAX_MINUS_1}"}}}],"counters":{"rooms":{"action":"Increment","amount":"${MAX_MINUS_1}"}}}`,
    );
    expect(reply.status, reply.text).toBe(200);
    const answer = reply.json as { gameServerName: string; counters: Record<string, { count: string; capacity: string }> };
    expect(answer.counters.rooms).toEqual({ count: MAX_MINUS_1, capacity: MAX });
    allocatedName = answer.gameServerName;

    const gsa = await send(
      base,
      'POST',
      ALLOCATIONS,
      `{"apiVersion":"allocation.agones.dev/v1","kind":"GameServerAllocation","spec":{"selectors":[{"matchLabels":{"agones.dev/fleet":"bigfleet"}}],"counters":{"rooms":{"action":"Increment","amount":${MAX_MINUS_1}}}}}`,
    );
    expect(gsa.status, gsa.text).toBe(201);
    const status = (gsa.json as { status: { state: string; counters: Counters } }).status;
    expect(status.state).toBe('Allocated');
    expect(status.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });

    const gs = (await send(base, 'GET', `${GAMESERVERS}/${allocatedName}`)).json as { status: { counters: Counters } };
    expect(gs.status.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });
    const fleet = (await send(base, 'GET', `${FLEETS}/bigfleet`)).json as { status: { counters: Record<string, Record<string, bigint>> } };
    // Two servers at 2^63-2 each: the exact sum is past int64, so it saturates.
    expect(fleet.status.counters.rooms).toEqual({ count: BigInt(MAX), capacity: BigInt(MAX), allocatedCount: BigInt(MAX), allocatedCapacity: BigInt(MAX) });
  });

  it('an allocation amount past int64 is refused: 400 code 3 on the allocator, 422 on the resource API', async () => {
    const reply = await send(base, 'POST', '/gameserverallocation', `{"namespace":"default","counters":{"rooms":{"action":"Increment","amount":"${PAST_MAX}"}}}`);
    expect(reply.status, reply.text).toBe(400);
    expect((reply.json as { code: bigint }).code).toBe(3n);
    const gsa = await send(
      base,
      'POST',
      ALLOCATIONS,
      `{"apiVersion":"allocation.agones.dev/v1","kind":"GameServerAllocation","spec":{"counters":{"rooms":{"action":"Increment","amount":${PAST_MAX}}}}}`,
    );
    expect(gsa.status, gsa.text).toBe(422);
    expect(gsa.text).toContain('spec.counters.rooms.amount');
  });

  it('a restart on the same log keeps the values exact', async () => {
    await serve.kill('SIGTERM');
    const started = await startServe(serveArgs());
    serve = started.process;
    base = started.baseUrl;
    const big = (await send(base, 'GET', `${GAMESERVERS}/big`)).json as { spec: { counters: Counters }; status: { counters: Counters } };
    expect(big.status.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });
    const gs = (await send(base, 'GET', `${GAMESERVERS}/${allocatedName}`)).json as { status: { counters: Counters } };
    expect(gs.status.counters.rooms).toEqual({ count: BigInt(MAX_MINUS_1), capacity: BigInt(MAX) });
    const fleet = (await send(base, 'GET', `${FLEETS}/bigfleet`)).json as { spec: { template: { spec: { counters: Counters } } } };
    expect(fleet.spec.template.spec.counters.rooms.capacity).toBe(BigInt(MAX));
  });
});
