import type { Server } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCertificates, base64, createTestCertificates } from '../../test/helpers/certs.js';
import { VirtualClock, WallClock } from '../clock.js';
import type { Resource } from '../kinds/resource.js';
import { type AllocatorTlsListener, startAllocatorTls } from '../api/allocator/allocator-tls.js';
import { type ClusterConnectionInfo, RemoteAllocationError, RemoteAllocator, clientTls, endpointAddress } from './remote-allocator.js';
import type { RemoteCall, RemoteReply } from './remote-transport.js';
import { toAllocationRequest } from './allocation-request.js';
import type { GameServerAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';

const GSA: GameServerAllocation = {
  apiVersion: 'allocation.agones.dev/v1',
  kind: 'GameServerAllocation',
  metadata: { namespace: 'default' },
  spec: {
    multiClusterSetting: { enabled: true, policySelector: { matchLabels: { cluster: 'b' } } },
    selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' }, gameServerState: 'Ready' }],
    scheduling: 'Packed',
    metadata: { labels: { mode: 'ctf' } },
  },
};

const RESPONSE = {
  gameServerName: 'f-abcde-12345',
  ports: [{ name: 'default', port: 7100 }],
  address: '10.0.0.2',
  addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
  nodeName: 'node-2',
  source: 'local',
  metadata: { labels: { 'agones.dev/fleet': 'f', mode: 'ctf' }, annotations: {} },
  counters: {},
  lists: {},
};

function secret(data: Record<string, string>): Resource {
  const encoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) encoded[key] = base64(value);
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'client', namespace: 'default' } as Resource['metadata'], data: encoded };
}

const FAKE_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const INFO: ClusterConnectionInfo = {
  clusterName: 'b',
  allocationEndpoints: ['remote.example'],
  secretName: 'client',
  namespace: 'games',
  serverCa: base64(FAKE_PEM),
};
const SECRETS = new Map([['default/client', secret({ 'tls.crt': 'CERT', 'tls.key': 'KEY' })]]);
const getSecret = (namespace: string, name: string) => SECRETS.get(`${namespace}/${name}`);

/** A scripted remote: each call is answered by the next function (the last one repeats). */
function fakeTransport(clock: VirtualClock, script: Array<(call: RemoteCall) => Promise<RemoteReply>>) {
  const calls: Array<{ at: number; call: RemoteCall }> = [];
  return {
    calls,
    post(call: RemoteCall): Promise<RemoteReply> {
      calls.push({ at: clock.now(), call });
      const answer = script[Math.min(calls.length - 1, script.length - 1)]!;
      return answer(call);
    },
  };
}

const ok = () => Promise.resolve({ status: 200, body: JSON.stringify(RESPONSE) });
const exhausted = () =>
  Promise.resolve({ status: 429, body: JSON.stringify({ code: 8, message: 'there is no available GameServer to allocate', details: [] }) });
const refused = () => Promise.reject(new Error('connection refused (ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:443)'));
/** Never answers; rejects when the call is aborted. */
const hang = (call: RemoteCall) =>
  new Promise<RemoteReply>((_, reject) => {
    call.signal.addEventListener('abort', () => reject(call.signal.reason instanceof Error ? call.signal.reason : new Error('aborted')));
  });

/** Runs `promise` to the end, firing virtual timers whenever nothing else is left to do. */
async function drive<T>(clock: VirtualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  for (let i = 0; i < 10_000 && !settled; i++) {
    for (let j = 0; j < 5 && !settled; j++) await new Promise((resolve) => setImmediate(resolve));
    if (!settled && !clock.step()) break;
  }
  return watched;
}

describe('RemoteAllocator (fake remote, virtual clock)', () => {
  it('sends the AllocationRequest with enabled=false and the policy namespace, and answers Allocated with source = endpoint', async () => {
    const clock = new VirtualClock();
    const transport = fakeTransport(clock, [ok]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const result = await drive(clock, remote.allocate(GSA, INFO, 'default'));
    expect(result.status).toMatchObject({
      state: 'Allocated',
      gameServerName: 'f-abcde-12345',
      ports: [{ name: 'default', port: 7100 }],
      address: '10.0.0.2',
      nodeName: 'node-2',
      source: 'remote.example:443',
      metadata: { labels: { mode: 'ctf' } },
    });
    expect(transport.calls).toHaveLength(1);
    const { call } = transport.calls[0]!;
    expect(call.endpoint).toBe('remote.example:443');
    expect(call.tls).toEqual({ cert: 'CERT', key: 'KEY', ca: FAKE_PEM });
    expect(JSON.parse(call.body)).toEqual({
      namespace: 'games',
      multiClusterSetting: { enabled: false, policySelector: { matchLabels: { cluster: 'b' } } },
      gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'f' }, gameServerState: 'READY' }],
      scheduling: 'Packed',
      metadata: { labels: { mode: 'ctf' }, annotations: {} },
    });
  });

  it('stops at once on a remote ResourceExhausted: UnAllocated', async () => {
    const clock = new VirtualClock();
    const transport = fakeTransport(clock, [exhausted]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const result = await drive(clock, remote.allocate(GSA, INFO, 'default'));
    expect(result.status.state).toBe('UnAllocated');
    expect(transport.calls).toHaveLength(1);
  });

  it('retries 7 times with a 100 ms doubling backoff on the cluster clock, then fails naming the endpoint and the cause', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const transport = fakeTransport(clock, [refused]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const error = await drive(clock, remote.allocate(GSA, INFO, 'default')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteAllocationError);
    expect((error as Error).message).toBe(
      'remote allocation failed after 7 attempts: remote allocator remote.example:443: connection refused (ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:443)',
    );
    expect(transport.calls.map((c) => c.at - start)).toEqual([0, 100, 300, 700, 1500, 3100, 6300]);
  });

  it('abandons the allocations under way when closed, and leaves no timer behind', async () => {
    const clock = new VirtualClock();
    const transport = fakeTransport(clock, [refused, hang]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const pending = remote.allocate(GSA, INFO, 'default');
    const outcome = pending.catch((e: unknown) => e);
    // The first call has failed: the allocation sleeps before its next attempt.
    await new Promise((resolve) => setImmediate(resolve));
    expect(transport.calls).toHaveLength(1);
    remote.close();
    const error = await outcome;
    expect(error).toBeInstanceOf(RemoteAllocationError);
    expect((error as Error).message).toBe('the allocator closed: the remote allocation was abandoned');
    expect(clock.pending).toBe(0);
  });

  it('walks the endpoints in order within an attempt and succeeds on the next one', async () => {
    const clock = new VirtualClock();
    const transport = fakeTransport(clock, [refused, ok]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const info = { ...INFO, allocationEndpoints: ['10.0.0.9', '10.0.0.10:8443'] };
    const result = await drive(clock, remote.allocate(GSA, info, 'default'));
    expect(result.status).toMatchObject({ state: 'Allocated', source: '10.0.0.10:8443' });
    expect(transport.calls.map((c) => [c.call.endpoint, c.at - transport.calls[0]!.at])).toEqual([
      ['10.0.0.9:443', 0],
      ['10.0.0.10:8443', 0],
    ]);
  });

  it('retries answers that are errors (not ResourceExhausted) and succeeds later', async () => {
    const clock = new VirtualClock();
    const contention = () => Promise.resolve({ status: 409, body: '{"code":10,"message":"too many concurrent requests have overwhelmed the system","details":[]}' });
    const transport = fakeTransport(clock, [contention, contention, ok]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const result = await drive(clock, remote.allocate(GSA, INFO, 'default'));
    expect(result.status.state).toBe('Allocated');
    expect(transport.calls).toHaveLength(3);
  });

  it('gives each call 10 s and the whole allocation 30 s, on the cluster clock', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const transport = fakeTransport(clock, [hang]);
    const remote = new RemoteAllocator({ clock, getSecret, transport });
    const error = await drive(clock, remote.allocate(GSA, INFO, 'default')).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'remote allocation to remote.example:443 failed: remote allocation total timeout exceeded (30000 ms, 3 attempts); ' +
        'last error: remote allocator remote.example:443: no answer within 10000 ms (remote allocation timeout)',
    );
    // Calls at 0, 10 s + 100 ms, 20.1 s + 200 ms; the total limit cuts the third.
    expect(transport.calls.map((c) => c.at - start)).toEqual([0, 10_100, 20_300]);
    expect(transport.calls[2]!.call.signal.aborted).toBe(true);
    expect(clock.now() - start).toBe(30_000);
    expect(clock.pending).toBe(0);
  });

  it('reads the client key pair from the Secret and refuses incomplete material with Agones\'s messages', () => {
    const secrets = new Map<string, Resource>([
      ['default/empty', { ...secret({}), data: {} }],
      ['default/half', secret({ 'tls.crt': 'CERT' })],
      ['default/with-ca', secret({ 'tls.crt': 'CERT', 'tls.key': 'KEY', 'ca.crt': 'EXTRA-CA' })],
      ['default/plain', { ...secret({}), data: undefined, stringData: { 'tls.crt': 'C2', 'tls.key': 'K2' } }],
    ]);
    const get = (namespace: string, name: string) => secrets.get(`${namespace}/${name}`);
    expect(() => clientTls({ secretName: 'missing' }, 'default', get)).toThrow('secrets "missing" not found in namespace default');
    expect(() => clientTls({ secretName: 'empty' }, 'default', get)).toThrow('secret empty does not have data');
    expect(() => clientTls({ secretName: 'half' }, 'default', get)).toThrow('missing client certificate key pair in secret half');
    expect(() => clientTls({ secretName: 'with-ca', serverCa: base64('not a certificate') }, 'default', get)).toThrow(
      'only PEM format is accepted for server CA',
    );
    expect(clientTls({ secretName: 'with-ca', serverCa: base64(FAKE_PEM) }, 'default', get)).toEqual({
      cert: 'CERT',
      key: 'KEY',
      ca: `${FAKE_PEM}\nEXTRA-CA`,
    });
    expect(clientTls({ secretName: 'plain' }, 'default', get)).toEqual({ cert: 'C2', key: 'K2' });
    // No Secret, no serverCa: no client certificate, the system roots.
    expect(clientTls({}, 'default', get)).toEqual({});
  });

  it('adds :443 to endpoints without a port and converts deprecated selectors and actions', () => {
    expect(endpointAddress('34.82.195.204')).toBe('34.82.195.204:443');
    expect(endpointAddress('allocator.example:8443')).toBe('allocator.example:8443');
    const request = toAllocationRequest(
      {
        ...GSA,
        spec: {
          required: { matchLabels: { a: 'b' }, gameServerState: 'Ready' },
          preferred: [{ matchLabels: { c: 'd' }, gameServerState: 'Allocated', counters: { rooms: { minAvailable: 1 } } }],
          scheduling: 'Distributed',
          priorities: [{ type: 'Counter', key: 'rooms', order: 'Descending' }],
          counters: { rooms: { action: 'Increment', amount: 1 } },
          lists: { players: { addValues: ['p1'], capacity: 10 } },
        },
      },
      'remote-ns',
    );
    expect(request).toEqual({
      namespace: 'remote-ns',
      multiClusterSetting: { enabled: false, policySelector: { matchLabels: {} } },
      gameServerSelectors: [
        {
          matchLabels: { c: 'd' },
          gameServerState: 'ALLOCATED',
          counters: { rooms: { minCount: '0', maxCount: '0', minAvailable: '1', maxAvailable: '0' } },
        },
        { matchLabels: { a: 'b' }, gameServerState: 'READY' },
      ],
      scheduling: 'Distributed',
      metadata: { labels: {}, annotations: {} },
      priorities: [{ type: 'Counter', key: 'rooms', order: 'Descending' }],
      counters: { rooms: { action: 'Increment', amount: '1' } },
      lists: { players: { addValues: ['p1'], capacity: '10' } },
    });
  });
});

describe('RemoteAllocator over HTTPS with mutual TLS', () => {
  let certs: TestCertificates;
  let listener: AllocatorTlsListener;
  const serverLog: string[] = [];
  const received: string[] = [];
  let closedPort: number;

  beforeAll(async () => {
    certs = createTestCertificates();
    listener = await startAllocatorTls(
      (req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          received.push(`${req.method} ${req.url} ${body}`);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(RESPONSE));
        });
      },
      { cert: certs.server.cert, key: certs.server.key, clientCa: certs.ca.cert },
      { port: 0, host: '127.0.0.1', log: (line) => serverLog.push(line) },
    );
    // A port nothing listens on: bind one, note it, close it.
    const probe: Server = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  afterAll(async () => {
    await listener?.close();
    certs?.remove();
  });

  function allocatorWith(secretData: Record<string, string> | undefined) {
    const secrets = new Map<string, Resource>();
    if (secretData) secrets.set('default/client', secret(secretData));
    return new RemoteAllocator({
      clock: new WallClock(),
      getSecret: (namespace, name) => secrets.get(`${namespace}/${name}`),
      // Two quick attempts: the causes are what is tested here, not the backoff.
      backoff: { steps: 2, initialMs: 1, factor: 2 },
    });
  }

  function info(overrides: Partial<ClusterConnectionInfo> = {}): ClusterConnectionInfo {
    return {
      clusterName: 'b',
      allocationEndpoints: [`127.0.0.1:${listener.port}`],
      secretName: 'client',
      namespace: 'default',
      serverCa: base64(certs.ca.cert),
      ...overrides,
    };
  }

  it('allocates with a client certificate the server trusts', async () => {
    const remote = allocatorWith({ 'tls.crt': certs.client.cert, 'tls.key': certs.client.key });
    try {
      const result = await remote.allocate(GSA, info(), 'default');
      expect(result.status).toMatchObject({ state: 'Allocated', gameServerName: 'f-abcde-12345', source: `127.0.0.1:${listener.port}` });
      expect(received.at(-1)).toMatch(/^POST \/gameserverallocation \{"namespace":"default"/);
    } finally {
      remote.close();
    }
  });

  it('is refused right after the handshake with a client certificate of another CA, and says so', async () => {
    const before = received.length;
    const remote = allocatorWith({ 'tls.crt': certs.untrustedClient.cert, 'tls.key': certs.untrustedClient.key });
    try {
      const error = await remote.allocate(GSA, info(), 'default').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^remote allocation failed after 2 attempts: remote allocator 127\\.0\\.0\\.1:${listener.port}: ` +
            'the server closed the connection right after the TLS handshake, which is how it refuses a client certificate it cannot verify',
        ),
      );
      expect(received.length).toBe(before);
      expect(serverLog).toContain('fleetsim allocator: refused a TLS client: bad client certificate: UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    } finally {
      remote.close();
    }
  });

  it('is refused with a certificate of the right CA that is not for client authentication', async () => {
    const remote = allocatorWith({ 'tls.crt': certs.serverOnlyClient.cert, 'tls.key': certs.serverOnlyClient.key });
    try {
      const error = await remote.allocate(GSA, info(), 'default').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/refuses a client certificate it cannot verify/);
      expect(serverLog).toContain('fleetsim allocator: refused a TLS client: bad client certificate: INVALID_PURPOSE');
    } finally {
      remote.close();
    }
  });

  it('is refused without a client certificate', async () => {
    const remote = allocatorWith(undefined);
    try {
      const error = await remote.allocate(GSA, info({ secretName: undefined }), 'default').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/: the server requires a client certificate \(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED/);
    } finally {
      remote.close();
    }
  });

  it('refuses a server whose certificate does not chain to serverCa', async () => {
    const remote = allocatorWith({ 'tls.crt': certs.client.cert, 'tls.key': certs.client.key });
    try {
      const error = await remote.allocate(GSA, info({ serverCa: base64(certs.untrustedCa.cert) }), 'default').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /: the server certificate does not verify against the policy's serverCa \(SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain\)$/,
      );
    } finally {
      remote.close();
    }
  });

  it('reports a remote that is down', async () => {
    const remote = allocatorWith({ 'tls.crt': certs.client.cert, 'tls.key': certs.client.key });
    try {
      const error = await remote.allocate(GSA, info({ allocationEndpoints: [`127.0.0.1:${closedPort}`] }), 'default').catch((e: unknown) => e);
      expect((error as Error).message).toBe(
        `remote allocation failed after 2 attempts: remote allocator 127.0.0.1:${closedPort}: connection refused (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${closedPort})`,
      );
    } finally {
      remote.close();
    }
  });
});
