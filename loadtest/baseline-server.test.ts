import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type BaselineConfig, type BaselineServer, startBaselineServer, startCannedAllocator } from './baseline-server.js';
import { ALLOCATE_METHOD, encodeAllocationResponse } from '../server/grpc/allocation-grpc.js';
import { createCertificate } from '../server/k8s/x509.js';
import { seconds } from '../test/helpers/time-scale.js';

const gameServer = {
  object_meta: { name: 'recorded', namespace: 'default', annotations: { 'agones.dev/sdk-bench-sent': '1700000000000-0' } },
  status: { state: 'Ready' },
};

const config: BaselineConfig = {
  routes: {
    'POST /gameserverallocation': { status: 200, body: '{"gameServerName":"gs-1"}' },
  },
  sidecar: {
    'POST /ready': { status: 200, body: '{}' },
    'PATCH /v1beta1/counters/{name}': { status: 200, body: '{"name":"sessions","count":"0","capacity":"1000"}' },
    'PUT /metadata/annotation': { status: 200, body: '{}' },
  },
  watchGameServer: gameServer,
};

let server: BaselineServer;
let base: string;

beforeAll(async () => {
  server = await startBaselineServer(config);
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.close());

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; length: string | null }> {
  const res = await fetch(`${base}${path}`, { method, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text(), length: res.headers.get('content-length') };
}

describe('the baseline server', () => {
  it('answers a route with its canned response', async () => {
    const res = await call('POST', '/gameserverallocation', { namespace: 'default' });
    expect(res).toEqual({ status: 200, text: '{"gameServerName":"gs-1"}', length: '25' });
  });

  it('answers every sidecar alike, whatever the GameServer', async () => {
    expect((await call('POST', '/sdk/default/a/ready', {})).status).toBe(200);
    expect((await call('POST', '/sdk/default/b/ready', {})).status).toBe(200);
  });

  it('keeps counters, since the scripts check the count', async () => {
    await call('PATCH', '/sdk/default/a/v1beta1/counters/sessions', { countDiff: 1 });
    const second = await call('PATCH', '/sdk/default/a/v1beta1/counters/sessions', { countDiff: 1 });
    expect(JSON.parse(second.text)).toEqual({ name: 'sessions', count: '2', capacity: '1000' });
    const other = await call('PATCH', '/sdk/default/b/v1beta1/counters/sessions', { countDiff: 1 });
    expect(JSON.parse(other.text).count).toBe('1');
  });

  it('says 404 for what it was not given', async () => {
    expect((await call('GET', '/apis/agones.dev/v1/fleets')).status).toBe(404);
    expect((await call('POST', '/sdk/default/a/shutdown', {})).status).toBe(404);
  });

  it('sends a watcher the GameServer, then each annotation change, like fleetsim', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/sdk/default/gs-7/watch/gameserver`);
    const frames: string[] = [];
    const two = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        frames.push(String(data));
        if (frames.length === 2) resolve();
      });
      ws.on('error', reject);
    });
    await new Promise<void>((resolve) => {
      const check = () => (frames.length >= 1 ? resolve() : setTimeout(check, 5));
      check();
    });
    const put = await call('PUT', '/sdk/default/gs-7/metadata/annotation', { key: 'bench-sent', value: '1700000000123-5' });
    expect(put.status).toBe(200);
    await two;
    ws.close();
    const [first, second] = frames.map((f) => JSON.parse(f) as { result: typeof gameServer });
    expect(first!.result.object_meta.name).toBe('gs-7');
    expect(second!.result.object_meta.annotations['agones.dev/sdk-bench-sent']).toBe('1700000000123-5');
    expect(second!.result.status).toEqual({ state: 'Ready' });
    // Same size as the recorded GameServer, give or take the name.
    expect(Math.abs(frames[1]!.length - JSON.stringify({ result: gameServer }).length)).toBeLessThanOrEqual(10);
  });
});

describe('the canned gRPC allocator', () => {
  const now = Date.now();
  const ca = createCertificate({ commonName: 'allocator CA', ca: true, validDays: 1, now });
  const issuer = { ...ca, commonName: 'allocator CA' };
  const server = createCertificate({ commonName: 'allocator', usages: ['serverAuth'], names: ['127.0.0.1'], issuer, validDays: 1, now });
  const client = createCertificate({ commonName: 'client', usages: ['clientAuth'], issuer, validDays: 1, now });
  const recorded = encodeAllocationResponse({
    gameServerName: 'gs-9',
    ports: [{ name: 'default', port: 7001 }],
    address: '10.0.0.9',
    addresses: [{ type: 'InternalIP', address: '10.0.0.9' }],
    nodeName: 'node-1',
    source: 'local',
    metadata: { labels: { team: 'blue' }, annotations: {} },
    counters: {},
    lists: {},
  });

  const call = (address: string, cert: { cert: string; key: string }): Promise<{ code: number; bytes?: Buffer }> => {
    const channel = new grpc.Client(address, grpc.credentials.createSsl(Buffer.from(ca.cert), Buffer.from(cert.key), Buffer.from(cert.cert)));
    return new Promise((resolve) => {
      channel.makeUnaryRequest(
        ALLOCATE_METHOD,
        (request: Buffer) => request,
        (bytes: Buffer) => bytes,
        Buffer.from([0x0a, 0x07, 0x64, 0x65, 0x66, 0x61, 0x75, 0x6c, 0x74]), // namespace: "default"
        { deadline: Date.now() + seconds(5) },
        (error, bytes) => {
          channel.close();
          resolve(error ? { code: error.code } : { code: grpc.status.OK, bytes });
        },
      );
    });
  };

  it("answers every call with the recorded AllocationResponse, over the allocator's mutual TLS", async () => {
    const allocator = await startCannedAllocator({ response: Buffer.from(recorded).toString('base64'), cert: server.cert, key: server.key, clientCa: ca.cert }, '127.0.0.1');
    try {
      for (let i = 0; i < 2; i++) {
        const answer = await call(allocator.address, client);
        expect(answer.code).toBe(grpc.status.OK);
        expect(Buffer.compare(answer.bytes!, Buffer.from(recorded))).toBe(0);
      }
      // A client whose certificate the client CA did not sign gets no answer, as from fleetsim.
      const strangerCa = createCertificate({ commonName: 'other CA', ca: true, validDays: 1, now });
      const stranger = createCertificate({ commonName: 'stranger', usages: ['clientAuth'], issuer: { ...strangerCa, commonName: 'other CA' }, validDays: 1, now });
      expect((await call(allocator.address, stranger)).code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      await allocator.close();
    }
  });
});
