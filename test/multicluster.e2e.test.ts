import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCertificates, base64, createTestCertificates } from './helpers/certs.js';
import { killAll } from './helpers/process.js';
import { type ApiResponse, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { fleetYaml } from './helpers/manifests.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Multi-cluster allocation between two real `fleetsim serve` processes:
 *
 *   B  serves the allocator over mutual TLS (--allocator-tls-cert/-key/--allocator-client-ca,
 *      certificates from test/helpers/certs.ts) and has the fleet `b-fleet`;
 *   A  has the fleet `a-fleet`, two Secrets (a client certificate B trusts, and one of another
 *      CA) and GameServerAllocationPolicies, all made through A's resource API:
 *
 *        to-b       {b: "true"}                     priority 0, cluster-b, B's endpoint, trusted cert
 *        untrusted  {untrusted: "true", fallback}   priority 0, cluster-u, B's endpoint, untrusted cert
 *        local      {fallback: "true"}              priority 1, local (no endpoints)
 *
 * Both fleets' GameServers carry `game: shooter`, the label every request selects.
 */

const ALLOCATOR_LINE = /^fleetsim allocator serving on https:\/\/(\S+):(\d+)\/gameserverallocation \((.*)\)$/m;
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const SECRETS = '/api/v1/namespaces/default/secrets';
const POLICIES = '/apis/multicluster.agones.dev/v1/namespaces/default/gameserverallocationpolicies';

const SHOOTER = { matchLabels: { game: 'shooter' } };

/** A JSON request to one server; a JSON reply is parsed into `json`. */
function call(serve: ServeProcess, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return apiRequest(serve.baseUrl, method, path, { body, timeoutMs: seconds(40) });
}

async function create(serve: ServeProcess, path: string, body: unknown): Promise<void> {
  const reply = await call(serve, 'POST', path, body);
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(201);
}

async function allocated(serve: ServeProcess, name: string): Promise<{ readyReplicas: number; allocatedReplicas: number }> {
  const reply = await call(serve, 'GET', `${FLEETS}/${name}`);
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { status: { readyReplicas: number; allocatedReplicas: number } }).status;
}

function multiCluster(policyLabels: Record<string, string>, selector: Record<string, unknown> = SHOOTER) {
  return { spec: { multiClusterSetting: { enabled: true, policySelector: { matchLabels: policyLabels } }, selectors: [selector] } };
}

let certs: TestCertificates;
let dir: string;
let a: ServeProcess;
let b: ServeProcess;
let bAllocator: string;

async function start(args: string[]): Promise<{ serve: ServeProcess; allocator?: string }> {
  const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', ...args]);
  const tls = ALLOCATOR_LINE.exec(serve.process.stdout);
  return { serve, allocator: tls ? `${tls[1]}:${tls[2]}` : undefined };
}

beforeAll(async () => {
  certs = createTestCertificates();
  dir = mkdtempSync(join(tmpdir(), 'fleetsim-multicluster-e2e-'));
  writeFileSync(join(dir, 'a.yaml'), fleetYaml('a-fleet', 2, { namespace: 'default', labels: { game: 'shooter' } }));
  writeFileSync(join(dir, 'b.yaml'), fleetYaml('b-fleet', 3, { namespace: 'default', labels: { game: 'shooter' } }));
  const [startedA, startedB] = await Promise.all([
    start(['-f', join(dir, 'a.yaml')]),
    start([
      '-f', join(dir, 'b.yaml'),
      '--allocator-tls-cert', certs.server.certFile,
      '--allocator-tls-key', certs.server.keyFile,
      '--allocator-client-ca', certs.ca.certFile,
      '--allocator-port', '0',
    ]),
  ]);
  a = startedA.serve;
  b = startedB.serve;
  expect(startedB.allocator, b.process.stdout).toBeDefined();
  expect(startedA.allocator).toBeUndefined();
  bAllocator = startedB.allocator!;
  expect(b.process.stdout).toContain(`(mutual TLS, client CA ${certs.ca.certFile})`);

  const tlsSecret = (name: string, pair: { cert: string; key: string }) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': base64(pair.cert), 'tls.key': base64(pair.key) },
  });
  await create(a, SECRETS, tlsSecret('client-b', certs.client));
  await create(a, SECRETS, tlsSecret('client-untrusted', certs.untrustedClient));
  const policy = (name: string, labels: Record<string, string>, priority: number, connectionInfo: Record<string, unknown>) => ({
    apiVersion: 'multicluster.agones.dev/v1',
    kind: 'GameServerAllocationPolicy',
    metadata: { name, labels },
    spec: { priority, weight: 100, connectionInfo },
  });
  const remote = (clusterName: string, secretName: string) => ({
    clusterName,
    allocationEndpoints: [bAllocator],
    secretName,
    namespace: 'default',
    serverCa: base64(certs.ca.cert),
  });
  await create(a, POLICIES, policy('to-b', { b: 'true' }, 0, remote('cluster-b', 'client-b')));
  await create(a, POLICIES, policy('untrusted', { untrusted: 'true', fallback: 'true' }, 0, remote('cluster-u', 'client-untrusted')));
  await create(a, POLICIES, policy('local', { fallback: 'true' }, 1, { clusterName: 'local', namespace: 'default' }));

  await waitFor(
    async () => (await allocated(a, 'a-fleet')).readyReplicas === 2 && (await allocated(b, 'b-fleet')).readyReplicas === 3,
    { timeoutMs: seconds(20), intervalMs: 100, what: 'both fleets Ready' },
  );
});

afterAll(async () => {
  await Promise.all([a?.process.kill('SIGTERM'), b?.process.kill('SIGTERM')]);
  await killAll();
  certs?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface GsaStatus {
  state: string;
  gameServerName: string;
  source: string;
  ports?: Array<{ name: string; port: number }>;
  nodeName?: string;
}

describe('multi-cluster allocation between two fleetsim processes', () => {
  it("B's allocator port speaks mutual TLS only: a client without a certificate is refused", async () => {
    const [host, port] = bAllocator.split(':');
    const error = await new Promise<Error & { code?: string }>((resolve, reject) => {
      const req = httpsRequest(
        { host, port: Number(port), method: 'POST', path: '/gameserverallocation', ca: certs.ca.cert, agent: false },
        (res) => reject(new Error(`answered ${res.statusCode}`)),
      );
      req.on('error', resolve);
      req.end('{}');
    });
    expect(error.code).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
  });

  it("allocates on B through A's resource API and A's allocator: source is B's endpoint", async () => {
    const reply = await call(a, 'POST', ALLOCATIONS, multiCluster({ b: 'true' }));
    expect(reply.status, reply.text).toBe(201);
    const status = (reply.json as { status: GsaStatus }).status;
    expect(status).toMatchObject({ state: 'Allocated', source: bAllocator });
    expect(status.gameServerName).toMatch(/^b-fleet-/);
    expect(status.ports).toEqual([{ name: 'default', port: expect.any(Number) as number }]);

    const viaAllocator = await call(a, 'POST', '/gameserverallocation', {
      namespace: 'default',
      multiClusterSetting: { enabled: true, policySelector: { matchLabels: { b: 'true' } } },
      gameServerSelectors: [SHOOTER],
    });
    expect(viaAllocator.status, viaAllocator.text).toBe(200);
    expect(viaAllocator.json).toMatchObject({ source: bAllocator, gameServerName: expect.stringMatching(/^b-fleet-/) as string });
    expect((viaAllocator.json as { gameServerName: string }).gameServerName).not.toBe(status.gameServerName);

    expect(await allocated(b, 'b-fleet')).toMatchObject({ allocatedReplicas: 2, readyReplicas: 1 });
    expect(await allocated(a, 'a-fleet')).toMatchObject({ allocatedReplicas: 0, readyReplicas: 2 });
  });

  it('answers UnAllocated at once when B has nothing (ResourceExhausted stops the retries)', async () => {
    const started = Date.now();
    const reply = await call(a, 'POST', ALLOCATIONS, multiCluster({ b: 'true' }, { matchLabels: { game: 'chess' } }));
    expect(reply.status, reply.text).toBe(201);
    expect((reply.json as { status: GsaStatus }).status.state).toBe('UnAllocated');
    const viaAllocator = await call(a, 'POST', '/gameserverallocation', {
      multiClusterSetting: { enabled: true, policySelector: { matchLabels: { b: 'true' } } },
      gameServerSelectors: [{ matchLabels: { game: 'chess' } }],
    });
    expect(viaAllocator.status, viaAllocator.text).toBe(429);
    expect(viaAllocator.json).toEqual({ code: 8, message: 'there is no available GameServer to allocate', details: [] });
    // Seven attempts would take 6.3 s of backoff.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('skips a remote that refuses the client certificate, with a clear error, and falls back to the local policy once', async () => {
    const reply = await call(a, 'POST', ALLOCATIONS, multiCluster({ fallback: 'true' }));
    expect(reply.status, reply.text).toBe(201);
    const status = (reply.json as { status: GsaStatus }).status;
    expect(status).toMatchObject({ state: 'Allocated', source: 'local' });
    expect(status.gameServerName).toMatch(/^a-fleet-/);

    const line = a.process.stderr.split('\n').find((l) => l.includes('cluster "cluster-u"'));
    expect(line, a.process.stderr).toBeDefined();
    expect(line!.startsWith(
      `fleetsim multi-cluster allocation: cluster "cluster-u" (policy untrusted, priority 0, ${bAllocator}) failed: ` +
        `remote allocation failed after 7 attempts: remote allocator ${bAllocator}: the server closed the connection right after the TLS handshake, ` +
        'which is how it refuses a client certificate it cannot verify (',
    ), line).toBe(true);
    expect(line!.endsWith('); trying cluster "local" (policy local, priority 1, this cluster)'), line).toBe(true);
    expect(b.process.stderr).toContain('fleetsim allocator: refused a TLS client: bad client certificate: UNABLE_TO_VERIFY_LEAF_SIGNATURE');

    // Allocated once, here; nothing more on B.
    expect(await allocated(a, 'a-fleet')).toMatchObject({ allocatedReplicas: 1, readyReplicas: 1 });
    expect(await allocated(b, 'b-fleet')).toMatchObject({ allocatedReplicas: 2, readyReplicas: 1 });
  });

  it('fails with the remote error when the refusing remote is the only cluster, and without any policy', async () => {
    const [resource, viaAllocator] = await Promise.all([
      call(a, 'POST', ALLOCATIONS, multiCluster({ untrusted: 'true' })),
      call(a, 'POST', '/gameserverallocation', {
        multiClusterSetting: { enabled: true, policySelector: { matchLabels: { untrusted: 'true' } } },
        gameServerSelectors: [SHOOTER],
      }),
    ]);
    const cause = `remote allocation failed after 7 attempts: remote allocator ${bAllocator}: the server closed the connection right after the TLS handshake`;
    expect(resource.status, resource.text).toBe(500);
    expect((resource.json as { message: string }).message).toContain(`Internal error occurred: ${cause}`);
    expect(viaAllocator.status, viaAllocator.text).toBe(500);
    expect(viaAllocator.json).toMatchObject({ code: 2, details: [] });
    expect((viaAllocator.json as { message: string }).message).toContain(cause);

    const none = await call(a, 'POST', '/gameserverallocation', {
      multiClusterSetting: { enabled: true, policySelector: { matchLabels: { nobody: 'true' } } },
      gameServerSelectors: [SHOOTER],
    });
    expect(none.status, none.text).toBe(500);
    expect(none.json).toEqual({ code: 2, message: 'no multi-cluster allocation policy is specified', details: [] });

    // Still nothing allocated twice, nothing more anywhere.
    expect(await allocated(a, 'a-fleet')).toMatchObject({ allocatedReplicas: 1 });
    expect(await allocated(b, 'b-fleet')).toMatchObject({ allocatedReplicas: 2 });
  });
});
