import { connect as connectHttp2 } from 'node:http2';
import { connect as connectTls } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificate } from '../server/k8s/x509.js';
import { ALLOCATION_PROTO } from '../server/grpc/allocation-grpc.js';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';
import { skipWithout } from './helpers/tools.js';

/**
 * The allocator as Agones serves it, against a real `fleetsim serve --allocator-tls auto`: a
 * client that follows Agones's allocator-service guide (the Service and Secrets of agones-system,
 * read with kubectl) allocates over gRPC and REST with mutual TLS; REST and gRPC answer the same
 * requests the same way; bad certificates, plain text and bad messages are refused with the codes
 * Agones's server gives, allocating nothing; a restart on the same log serves the same certificates.
 */

const ALLOCATOR_LINE = /^fleetsim allocator serving on https:\/\/(\S+):(\d+)\/gameserverallocation/m;
const ALLOCATE = '/allocation.AllocationService/Allocate';
const root = protobuf.loadSync(ALLOCATION_PROTO);
const REQUEST = root.lookupType('allocation.AllocationRequest');
const RESPONSE = root.lookupType('allocation.AllocationResponse');

interface ClientTls {
  ca: string;
  cert: string;
  key: string;
}

type Json = Record<string, unknown>;
/** An answer of either transport, in one shape: the response, or the gRPC code and message. */
type Answer = { response: Json } | { code: number; message: string };

/** The AllocationRequest JSON a REST client sends, as protobufjs objects spell wrapper fields. */
function protoObject(request: Json): Json {
  const wrap = (v: unknown) => (v === undefined ? undefined : { value: v });
  const out: Json = { ...request };
  if (request.counters) {
    out.counters = Object.fromEntries(
      Object.entries(request.counters as Record<string, Json>).map(([k, a]) => [k, { action: wrap(a.action), amount: wrap(a.amount), capacity: wrap(a.capacity) }]),
    );
  }
  if (request.lists) {
    out.lists = Object.fromEntries(Object.entries(request.lists as Record<string, Json>).map(([k, a]) => [k, { ...a, capacity: wrap(a.capacity) }]));
  }
  return out;
}

/** A gRPC response in the REST answer's shape (wrappers as bare values, every field present). */
function restShape(response: Json): Json {
  const value = (w: unknown) => String((w as { value?: unknown } | null)?.value ?? '0');
  const counters = response.counters as Record<string, { count: unknown; capacity: unknown }>;
  const lists = response.lists as Record<string, { values: string[]; capacity: unknown }>;
  return {
    ...response,
    counters: Object.fromEntries(Object.entries(counters).map(([k, c]) => [k, { count: value(c.count), capacity: value(c.capacity) }])),
    lists: Object.fromEntries(Object.entries(lists).map(([k, l]) => [k, { values: l.values, capacity: value(l.capacity) }])),
  };
}

function grpcClient(address: string, tls: ClientTls | undefined): grpc.Client {
  const credentials = tls
    ? grpc.credentials.createSsl(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert))
    : grpc.credentials.createInsecure();
  return new grpc.Client(address, credentials);
}

function grpcAllocate(client: grpc.Client, request: Json, deadlineMs = seconds(10)): Promise<Answer> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      ALLOCATE,
      (r: Json) => Buffer.from(REQUEST.encode(REQUEST.fromObject(protoObject(r))).finish()),
      (bytes: Buffer) => RESPONSE.toObject(RESPONSE.decode(bytes), { longs: String, enums: String, defaults: true, arrays: true, objects: true }) as Json,
      request,
      { deadline: Date.now() + deadlineMs },
      (error, response) => resolve(error ? { code: error.code, message: error.details } : { response: restShape(response!) }),
    );
  });
}

/** One gRPC call of raw bytes (a hand-made message), over node:http2 with the client certificate. */
function rawGrpc(address: string, tls: ClientTls, body: Buffer, headers: Record<string, string> = {}): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = connectHttp2(`https://${address}`, { ca: tls.ca, cert: tls.cert, key: tls.key });
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': ALLOCATE, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let status = '';
    let message = '';
    const take = (h: Record<string, unknown>) => {
      if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
      if (h['grpc-message'] !== undefined) message = decodeURIComponent(String(h['grpc-message']));
    };
    stream.on('response', take);
    stream.on('trailers', take);
    stream.on('error', () => undefined);
    stream.resume();
    stream.on('close', () => {
      session.close();
      resolve({ status, message });
    });
    stream.end(body);
  });
}

function frame(message: Uint8Array, declaredLength = message.length): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(declaredLength, 1);
  out.set(message, 5);
  return out;
}

async function restAllocate(address: string, tls: ClientTls, request: Json): Promise<Answer & { httpStatus: number }> {
  const session = connectHttp2(`https://${address}`, { ca: tls.ca, cert: tls.cert, key: tls.key });
  try {
    return await new Promise((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':method': 'POST', ':path': '/gameserverallocation', 'content-type': 'application/json' });
      let httpStatus = 0;
      let text = '';
      stream.on('response', (h) => (httpStatus = Number(h[':status'])));
      stream.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => {
        const body = JSON.parse(text) as Json;
        resolve(httpStatus === 200 ? { httpStatus, response: body } : { httpStatus, code: body.code as number, message: body.message as string });
      });
      stream.end(JSON.stringify(request));
    });
  } finally {
    session.close();
  }
}

let serve: ServeProcess;
let address: string;
let tls: ClientTls;
let kubectl: Kubectl;
const dirs: string[] = [];

async function readClientTls(k: Kubectl): Promise<{ address: string; tls: ClientTls }> {
  // The allocator-service guide's steps, as a client takes them.
  const secret = async (namespace: string, name: string, key: string) =>
    Buffer.from((await k.ok(['get', 'secret', name, '-n', namespace, '-o', `jsonpath={.data.${key.replace(/\./g, '\\.')}}`])), 'base64').toString('utf8');
  const ip = await k.ok(['get', 'service', 'agones-allocator', '-n', 'agones-system', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}']);
  const port = await k.ok(['get', 'service', 'agones-allocator', '-n', 'agones-system', '-o', 'jsonpath={.spec.ports[0].port}']);
  return {
    address: `${ip}:${port}`,
    tls: {
      cert: await secret('default', 'allocator-client.default', 'tls.crt'),
      key: await secret('default', 'allocator-client.default', 'tls.key'),
      ca: await secret('agones-system', 'allocator-tls-ca', 'tls-ca.crt'),
    },
  };
}

/** GameServers of one namespace, fixed names, for a table case: the three states a case starts from. */
const FIXTURE = [
  { name: 'gs-a', labels: { team: 'blue', mode: 'ctf' }, counters: { rooms: { count: 0, capacity: 2 } }, lists: { players: { capacity: 3 } } },
  { name: 'gs-b', labels: { team: 'red' }, counters: { rooms: { count: 1, capacity: 4 } }, lists: { players: { values: ['p1'], capacity: 3 } } },
  { name: 'gs-c', labels: { team: 'red', tier: 'gold' }, counters: { rooms: { count: 3, capacity: 4 } }, lists: { players: { values: ['p1', 'p2'], capacity: 3 } } },
];

async function prepareNamespace(namespace: string): Promise<void> {
  const created = await apiRequest(serve.baseUrl, 'POST', '/api/v1/namespaces', { body: { metadata: { name: namespace } } });
  expect(created.status, created.text).toBe(201);
  for (const gs of FIXTURE) {
    const reply = await apiRequest(serve.baseUrl, 'POST', `/apis/agones.dev/v1/namespaces/${namespace}/gameservers`, {
      body: {
        metadata: { name: gs.name, labels: { ...gs.labels, case: namespace.replace(/-(rest|grpc)$/, '') } },
        spec: {
          ports: [{ name: 'default', containerPort: 7654 }],
          counters: gs.counters,
          lists: gs.lists,
          template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
        },
      },
    });
    expect(reply.status, reply.text).toBe(201);
  }
  await waitFor(async () => {
    const list = await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/${namespace}/gameservers`);
    const items = (list.json as { items: Array<{ status?: { state?: string } }> }).items;
    return items.length === FIXTURE.length && items.every((i) => i.status?.state === 'Ready');
  }, { timeoutMs: seconds(20) });
}

/** What may differ between two namespaces prepared alike: the host ports, the pods' IPs and the allocation time. */
function comparable(answer: Answer): Answer {
  if (!('response' in answer)) return { code: answer.code, message: answer.message.replace(/-(rest|grpc)\b/g, '') };
  const response = answer.response as Json & { ports: Array<{ name: string }>; addresses: Array<{ type: string }>; metadata: { labels: Json; annotations: Json } };
  const annotations = { ...response.metadata.annotations };
  delete annotations['agones.dev/last-allocated'];
  return {
    response: {
      ...response,
      ports: response.ports.map((p) => p.name),
      addresses: response.addresses.filter((a) => a.type !== 'PodIP'),
      metadata: { labels: response.metadata.labels, annotations },
    },
  };
}

// The client reads its certificates as the allocator-service guide says, with kubectl.
skipWithout(KUBECTL);

beforeAll(async () => {
  if (!KUBECTL.path) return;
  serve = await startServe([
    '--db', ':memory:', '--no-default-fleet', '--nodes', '1', '--no-listen',
    '--feature-gates', 'CountsAndLists=true', '--allocator-tls', 'auto', '--allocator-port', '0',
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-allocator-grpc-'));
  dirs.push(dir);
  kubectl = new Kubectl(serve.baseUrl, dir);
  ({ address, tls } = await readClientTls(kubectl));
});

afterAll(async () => {
  await killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the allocator over gRPC with mutual TLS, as Agones serves it', () => {
  it('is found as the guide says (Service agones-system/agones-allocator at the listener) and allocates over gRPC', async () => {
    const served = ALLOCATOR_LINE.exec(serve.process.stdout)!;
    expect(address).toBe(`${served[1]}:${served[2]}`);
    expect(await kubectl.ok(['get', 'service', 'agones-allocator', '-n', 'agones-system', '-o', 'jsonpath={.spec.type}'])).toBe('LoadBalancer');
    await prepareNamespace('first');
    const client = grpcClient(address, tls);
    try {
      const answer = await grpcAllocate(client, { namespace: 'first', gameServerSelectors: [{ matchLabels: { team: 'blue' } }] });
      expect(answer).toMatchObject({ response: { gameServerName: 'gs-a', nodeName: 'node-1', source: 'local' } });
      const gs = await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/first/gameservers/gs-a');
      expect((gs.json as { status: { state: string } }).status.state).toBe('Allocated');
    } finally {
      client.close();
    }
  });

  // Each case runs its requests in order on a namespace of its own, once over REST and once over gRPC.
  const BY_FLEET = (labels: Json) => ({ matchLabels: labels });
  const CASES: Array<[string, Json[]]> = [
    ['a label selector', [{ gameServerSelectors: [BY_FLEET({ team: 'blue' })] }]],
    ['selectors in order: the first that matches', [{ gameServerSelectors: [BY_FLEET({ team: 'green' }), BY_FLEET({ tier: 'gold' })] }]],
    ['the deprecated required and preferred selectors', [{ requiredGameServerSelector: BY_FLEET({ team: 'red' }), preferredGameServerSelectors: [BY_FLEET({ tier: 'gold' })] }]],
    ['nothing matches: ResourceExhausted', [{ gameServerSelectors: [BY_FLEET({ team: 'green' })] }]],
    ['Packed, then nothing left', [{}, {}, {}, {}]],
    ['Distributed with priorities', [{ scheduling: 'Distributed', priorities: [{ type: 'Counter', key: 'rooms', order: 'Descending' }] }]],
    ['a Counter priority, Descending', [{ gameServerSelectors: [BY_FLEET({ team: 'red' })], priorities: [{ type: 'Counter', key: 'rooms', order: 'Descending' }] }]],
    ['a List priority, Ascending', [{ priorities: [{ type: 'List', key: 'players', order: 'Ascending' }] }]],
    ['a counter selector', [{ gameServerSelectors: [{ counters: { rooms: { minAvailable: 2, maxAvailable: 2 } } }] }]],
    ['a list selector', [{ gameServerSelectors: [{ lists: { players: { containsValue: 'p2' } } }] }]],
    [
      'counter and list actions with a metadata patch',
      [
        {
          gameServerSelectors: [BY_FLEET({ team: 'blue' })],
          metadata: { labels: { mode: 'duel' }, annotations: { map: 'harbour' } },
          counters: { rooms: { action: 'Increment', amount: '5' } },
          lists: { players: { addValues: ['a', 'b', 'c', 'd'], deleteValues: ['p9'] } },
        },
      ],
    ],
    [
      're-allocating an Allocated server with room',
      [
        { gameServerSelectors: [BY_FLEET({ team: 'blue' })], counters: { rooms: { action: 'Increment', amount: '1' } } },
        { gameServerSelectors: [{ gameServerState: 'ALLOCATED', counters: { rooms: { minAvailable: 1 } } }], counters: { rooms: { action: 'Increment', amount: '1' } } },
        { gameServerSelectors: [{ gameServerState: 'ALLOCATED', counters: { rooms: { minAvailable: 1 } } }] },
      ],
    ],
    ['an invalid label key: InvalidArgument', [{ gameServerSelectors: [BY_FLEET({ 'bad key!': 'x' })] }]],
    ['an unknown counter action: InvalidArgument', [{ counters: { rooms: { action: 'Bogus', amount: '1' } } }]],
  ];

  beforeAll(async () => {
    if (!KUBECTL.path) return;
    await Promise.all(CASES.flatMap((_, index) => ['rest', 'grpc'].map((transport) => prepareNamespace(`case-${index}-${transport}`))));
  });

  it.each(CASES.map(([name, requests], index) => [name, index, requests] as const))(
    'REST and gRPC answer alike: %s',
    async (_name, index, requests) => {
      const answers: Record<'rest' | 'grpc', Answer[]> = { rest: [], grpc: [] };
      const client = grpcClient(address, tls);
      try {
        for (const transport of ['rest', 'grpc'] as const) {
          const namespace = `case-${index}-${transport}`;
          for (const request of requests) {
            const sent = { ...request, namespace };
            const answer = transport === 'rest' ? await restAllocate(address, tls, sent) : await grpcAllocate(client, sent);
            if (transport === 'rest' && 'httpStatus' in answer) {
              const { httpStatus, ...rest } = answer;
              // The gateway's HTTP status for the code (429 for ResourceExhausted, 400 for InvalidArgument).
              if ('code' in rest) expect(httpStatus).toBe({ 8: 429, 3: 400 }[rest.code]);
              answers.rest.push(comparable(rest));
            } else {
              answers[transport].push(comparable(answer));
            }
          }
        }
      } finally {
        client.close();
      }
      expect(answers.grpc).toEqual(answers.rest);
    },
  );
});

describe('what the allocator refuses, allocating nothing', () => {
  let namespace: string;
  const allocatedCount = async () => {
    const list = await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/${namespace}/gameservers`);
    return (list.json as { items: Array<{ status: { state: string } }> }).items.filter((i) => i.status.state === 'Allocated').length;
  };
  const request = () => ({ namespace, gameServerSelectors: [{ matchLabels: { team: 'red' } }] });

  beforeAll(async () => {
    if (!KUBECTL.path) return;
    namespace = 'refusals';
    await prepareNamespace(namespace);
  });

  it('a client certificate from another CA: the handshake fails (UNAVAILABLE)', async () => {
    const now = Date.now();
    const otherCa = createCertificate({ commonName: 'other CA', ca: true, validDays: 1, now });
    const stranger = createCertificate({ commonName: 'stranger', usages: ['clientAuth'], issuer: { ...otherCa, commonName: 'other CA' }, validDays: 1, now });
    const client = grpcClient(address, { ca: tls.ca, cert: stranger.cert, key: stranger.key });
    try {
      const answer = await grpcAllocate(client, request(), seconds(5));
      expect(answer).toMatchObject({ code: grpc.status.UNAVAILABLE });
    } finally {
      client.close();
    }
    await waitFor(() => /refused a TLS client: bad client certificate/.test(serve.process.stderr), { timeoutMs: seconds(5) });
    expect(await allocatedCount()).toBe(0);
  });

  it('plain text on the TLS port: gRPC is UNAVAILABLE, HTTP gets Go\'s 400', async () => {
    const client = grpcClient(address, undefined);
    try {
      expect(await grpcAllocate(client, request(), seconds(5))).toMatchObject({ code: grpc.status.UNAVAILABLE });
    } finally {
      client.close();
    }
    const reply = await fetch(`http://${address}/gameserverallocation`, { method: 'POST', body: JSON.stringify(request()) });
    expect(reply.status).toBe(400);
    expect(await reply.text()).toBe('Client sent an HTTP request to an HTTPS server.\n');
    expect(await allocatedCount()).toBe(0);
  });

  it('bytes that are not an AllocationRequest: INTERNAL, as grpc-go says it', async () => {
    // Field 1 (namespace) says 5 bytes follow; 1 does.
    const answer = await rawGrpc(address, tls, frame(Buffer.from([0x0a, 0x05, 0x61])));
    expect(answer.status).toBe(String(grpc.status.INTERNAL));
    expect(answer.message).toMatch(/^grpc: error unmarshalling request: /);
    // Field 99 with wire type 7, which does not exist.
    const wireType = await rawGrpc(address, tls, frame(Buffer.from([0x9f, 0x06, 0x00])));
    expect(wireType.status).toBe(String(grpc.status.INTERNAL));
    // A frame that promises 10 bytes and ends after 1.
    const truncated = await rawGrpc(address, tls, frame(Buffer.from([0x0a]), 10));
    expect(truncated.status).toBe(String(grpc.status.INTERNAL));
    expect(await allocatedCount()).toBe(0);
  });

  it('a message over 4 MiB: RESOURCE_EXHAUSTED; a compressed one without a decompressor: UNIMPLEMENTED', async () => {
    const big = REQUEST.encode(REQUEST.fromObject({ namespace, metadata: { labels: { pad: 'x'.repeat(4 * 1024 * 1024) } } })).finish();
    const answer = await rawGrpc(address, tls, frame(big));
    expect(answer.status).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
    expect(answer.message).toBe(`grpc: received message larger than max (${big.length} vs. 4194304)`);
    const compressed = frame(REQUEST.encode(REQUEST.fromObject(request())).finish());
    compressed[0] = 1;
    const gzip = await rawGrpc(address, tls, compressed, { 'grpc-encoding': 'gzip' });
    expect(gzip.status).toBe(String(grpc.status.UNIMPLEMENTED));
    expect(await allocatedCount()).toBe(0);
  });

  it('unknown fields are skipped, as protobuf does: the request allocates', async () => {
    const known = REQUEST.encode(REQUEST.fromObject(request())).finish();
    // Field 99, length-delimited, "hello": a field this AllocationRequest does not have.
    const unknown = Buffer.concat([Buffer.from(known), Buffer.from([0x9a, 0x06, 0x05]), Buffer.from('hello')]);
    const answer = await rawGrpc(address, tls, frame(unknown));
    expect(answer.status).toBe('0');
    expect(await allocatedCount()).toBe(1);
  });

  it('an unknown method: UNIMPLEMENTED', async () => {
    const session = connectHttp2(`https://${address}`, { ca: tls.ca, cert: tls.cert, key: tls.key });
    const status = await new Promise<string>((resolve) => {
      const stream = session.request({ ':method': 'POST', ':path': '/allocation.AllocationService/Deallocate', 'content-type': 'application/grpc' });
      stream.on('response', (h) => resolve(String(h['grpc-status'])));
      stream.resume();
      stream.end(frame(Buffer.alloc(0)));
    });
    session.close();
    expect(status).toBe(String(grpc.status.UNIMPLEMENTED));
  });
});

describe('a call that sends more than its one message', () => {
  const namespace = 'extra-bytes';
  const allocated = async () => {
    const list = await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/${namespace}/gameservers`);
    return (list.json as { items: Array<{ status: { state: string } }> }).items.filter((i) => i.status.state === 'Allocated').length;
  };

  beforeAll(async () => {
    if (!KUBECTL.path) return;
    await prepareNamespace(namespace);
  });

  it('is answered once its message is in, as grpc-go answers it: the rest unread, the stream reset; serve answers others meanwhile', async () => {
    const session = connectHttp2(`https://${address}`, { ca: tls.ca, cert: tls.cert, key: tls.key });
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':method': 'POST', ':path': ALLOCATE, 'content-type': 'application/grpc', te: 'trailers' });
      const headers: Record<string, unknown> = {};
      let message = Buffer.alloc(0);
      stream.on('response', (h) => Object.assign(headers, h));
      stream.on('trailers', (h) => Object.assign(headers, h));
      stream.on('data', (chunk: Buffer) => (message = Buffer.concat([message, chunk])));
      stream.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => stream.once('close', resolve));
      stream.write(frame(REQUEST.encode(REQUEST.fromObject({ namespace, gameServerSelectors: [{ matchLabels: { team: 'blue' } }] })).finish()));
      // Bytes after the message, up to 256 MiB, and the stream never half-closed: a server that
      // reads them all before answering answers nothing in time.
      const chunk = Buffer.alloc(64 * 1024, 0x41);
      let extra = 0;
      const writing = (async () => {
        while (extra < 256 * 1024 * 1024 && !stream.closed && !stream.destroyed) {
          extra += chunk.length;
          if (!stream.write(chunk)) await new Promise((resolve) => (stream.once('drain', resolve), stream.once('close', resolve)));
        }
      })();
      const meanwhile = await apiRequest(serve.baseUrl, 'GET', '/version');
      expect(meanwhile.status).toBe(200);
      await closed;
      await writing;
      expect(headers['grpc-status']).toBe('0');
      expect(stream.rstCode).toBe(0);
      const response = RESPONSE.toObject(RESPONSE.decode(message.subarray(5, 5 + message.readUInt32BE(1)))) as Json;
      expect(response.gameServerName).toBe('gs-a');
      // Flow control held the client back: it wrote what the windows and buffers took, no more.
      expect(extra).toBeLessThan(4 * 1024 * 1024);
    } finally {
      session.destroy();
    }
    expect(await allocated()).toBe(1);
  });

  it('a second message is not read either: one allocation', async () => {
    const one = frame(REQUEST.encode(REQUEST.fromObject({ namespace, gameServerSelectors: [{ matchLabels: { team: 'red' } }] })).finish());
    const answer = await rawGrpc(address, tls, Buffer.concat([one, one]));
    expect(answer.status).toBe('0');
    expect(await allocated()).toBe(2);
  });
});

describe('the certificates are kept in the log', () => {
  it('a restart on the same --db serves the same certificate, and a replaced allocator-tls is served at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetsim-allocator-db-'));
    dirs.push(dir);
    const db = join(dir, 'fleetsim.db');
    const args = ['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen', '--allocator-tls', 'auto', '--allocator-port', '0'];
    const fingerprint = (where: string) =>
      new Promise<string>((resolve, reject) => {
        const [host, port] = [where.slice(0, where.lastIndexOf(':')), Number(where.slice(where.lastIndexOf(':') + 1))];
        const socket = connectTls({ host, port, cert: tls.cert, key: tls.key, rejectUnauthorized: false }, () => {
          resolve(socket.getPeerCertificate().fingerprint256);
          socket.end();
        });
        socket.on('error', reject);
      });
    const first = await startServe(args);
    const firstAddress = (await readClientTls(new Kubectl(first.baseUrl, dir))).address;
    const firstClient = await readClientTls(new Kubectl(first.baseUrl, dir));
    tls = firstClient.tls;
    const before = await fingerprint(firstAddress);
    await first.process.kill('SIGTERM');
    const second = await startServe(args);
    const again = await readClientTls(new Kubectl(second.baseUrl, dir));
    expect(again.tls).toEqual(firstClient.tls);
    expect(await fingerprint(again.address)).toBe(before);

    // Replacing the server's key pair in the Secret (as Agones's e2e suite does) changes what is served.
    const now = Date.now();
    const replacement = createCertificate({ commonName: 'replacement', usages: ['serverAuth'], names: ['127.0.0.1'], validDays: 1, now });
    const k = new Kubectl(second.baseUrl, dir);
    const patch = JSON.stringify({ data: { 'tls.crt': Buffer.from(replacement.cert).toString('base64'), 'tls.key': Buffer.from(replacement.key).toString('base64') } });
    await k.ok(['patch', 'secret', 'allocator-tls', '-n', 'agones-system', '--type', 'merge', '-p', patch]);
    await waitFor(async () => (await fingerprint(again.address)) !== before, { timeoutMs: seconds(5) });
    const client = grpcClient(again.address, { ...again.tls, ca: replacement.cert });
    try {
      // Trusted through the new certificate: the handshake completes (nothing to allocate here).
      expect(await grpcAllocate(client, { namespace: 'default' })).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    } finally {
      client.close();
    }
    await second.process.kill('SIGTERM');
  });
});
