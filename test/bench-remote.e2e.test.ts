import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunData } from '../reports/run-data.js';
import { type TestCertificates, createTestCertificates } from './helpers/certs.js';
import { K6 } from './helpers/k6.js';
import { KUBECTL } from './helpers/kubectl.js';
import { fleetManifest } from './helpers/manifests.js';
import { REPO_ROOT, cleanEnv, killAll, startCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';
import { without } from './helpers/tools.js';

/**
 * `fleetsim bench --target-allocator`: the allocation scenarios against "another cluster", here a
 * second `fleetsim serve` serving its allocator over mutual TLS (certificates from
 * test/helpers/certs.ts), reached by the real k6 with a client certificate, and by the real
 * kubectl through a kubeconfig for the fleet, which the bench creates, follows and deletes.
 * The stand-in's simulated simple-game-servers listen (they shut themselves down after their
 * session, as the example does) on a port range no other test uses. Last, the k6 operator's way
 * from loadtest/README.md: a k6 archive run as segmented runners, as the operator starts them.
 */

const ALLOCATOR_LINE = /^fleetsim allocator serving on https:\/\/127\.0\.0\.1:(\d+)\/gameserverallocation/m;
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const AUTOSCALERS = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';

let certs: TestCertificates;
let dir: string;
let remote: ServeProcess;
let allocator: string;
let kubeconfig: string;

beforeAll(async () => {
  certs = createTestCertificates();
  dir = mkdtempSync(join(tmpdir(), 'fleetsim-bench-remote-e2e-'));
  remote = await startServe([
    '--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--port-range', '47300-47499',
    '--allocator-tls-cert', certs.server.certFile,
    '--allocator-tls-key', certs.server.keyFile,
    '--allocator-client-ca', certs.ca.certFile,
    '--allocator-port', '0',
  ]);
  const match = ALLOCATOR_LINE.exec(remote.process.stdout);
  expect(match, remote.process.stdout).not.toBeNull();
  allocator = `https://127.0.0.1:${match![1]}`;
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: stand-in, cluster: {server: "' + remote.baseUrl + '"}}]',
      'contexts: [{name: stand-in, context: {cluster: stand-in, user: nobody}}]',
      'users: [{name: nobody, user: {}}]',
      'current-context: stand-in',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await killAll();
  certs?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `fleetsim bench …` with kubectl's cache in the test's folder, and the kubectl and k6 the tests use. */
async function bench(args: string[], timeoutMs = seconds(90)) {
  const p = startCli(['bench', ...args], cleanEnv({ KUBECACHEDIR: join(dir, 'kube-cache'), KUBECTL: KUBECTL.path, FLEETSIM_K6: K6.path }));
  try {
    const status = await p.waitForExit(timeoutMs);
    return { ...status, stdout: p.stdout, stderr: p.stderr, output: `exit ${status.code}\n--- stdout ---\n${p.stdout}\n--- stderr ---\n${p.stderr}` };
  } finally {
    await p.kill('SIGKILL');
  }
}

const tls = () => ['--target-allocator', allocator, '--client-cert', certs.client.certFile, '--client-key', certs.client.keyFile, '--ca', certs.ca.certFile];

const status = async (path: string) => (await apiRequest(remote.baseUrl, 'GET', path)).status;

/** Creates a fleet of `replicas` on the remote and waits until they are Ready. */
async function readyFleet(name: string, replicas: number): Promise<void> {
  const created = await apiRequest(remote.baseUrl, 'POST', FLEETS, { body: fleetManifest(name, replicas) });
  expect(created.status, created.text).toBe(201);
  await waitFor(async () => ((await apiRequest(remote.baseUrl, 'GET', `${FLEETS}/${name}`)).json as { status?: { readyReplicas?: number } }).status?.readyReplicas === replicas, {
    timeoutMs: seconds(20),
    what: `fleet ${name} Ready`,
  });
}

async function fleetNames(): Promise<string[]> {
  const reply = await apiRequest(remote.baseUrl, 'GET', FLEETS);
  return (reply.json as { items: Array<{ metadata: { name: string } }> }).items.map((f) => f.metadata.name).sort();
}

function readRun(out: string): RunData {
  return JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')) as RunData;
}

describe('fleetsim bench against a remote allocator', () => {
  it('creates the fleet through --kubeconfig, allocates over mutual TLS with k6, reports, and deletes the fleet', { timeout: seconds(120) }, async ({ skip }) => {
    skip(...without(K6, KUBECTL));
    const out = join(dir, 'created');
    const running = bench([
      'allocation-throughput', ...tls(), '--kubeconfig', kubeconfig,
      '--fleet-size', '6', '--duration', '3s', '--rate', '20', '--vus', '6', '--session', '1', '--p99-ms', '2000', '--out', out,
    ]);
    // The fleet appears on the remote while the bench runs.
    let finished = false;
    void running.finally(() => (finished = true));
    let seen = false;
    await waitFor(async () => finished || (seen = (await status(`${FLEETS}/bench-allocation`)) === 200), { timeoutMs: seconds(60), intervalMs: 100, what: 'the fleet on the remote' });
    const result = await running;
    expect(seen, result.output).toBe(true);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('created fleet.agones.dev/bench-allocation, fleetautoscaler.autoscaling.agones.dev/bench-allocation in namespace default');
    expect(result.stdout).toContain('deleted fleet bench-allocation and its autoscaler');

    const data = readRun(out);
    expect(data.ok, result.output).toBe(true);
    expect(data.remote).toEqual({ allocator, namespace: 'default', fleet: 'bench-allocation', fleetManagement: 'created' });
    expect(data.fleetsim.outcomes.Allocated, result.output).toBeGreaterThan(0);
    expect(data.fleetsim.outcomes.error).toBe(0);
    expect(data.fleetsim.requestRate).toBeGreaterThan(0);
    // Every request went to the allocator; the resource API got none.
    const resourceApi = (data.fleetsim.k6Summary as { metrics: Record<string, { count?: number }> }).metrics['http_req_duration{endpoint:resource-api}'];
    expect(resourceApi?.count ?? 0).toBe(0);
    // Figures only a local fleetsim has are absent; the fleet's status came from the remote's API.
    expect(data.server).toBeUndefined();
    expect(data.fleet.length).toBeGreaterThan(1);
    expect(Math.max(...data.fleet.map((s) => s.allocated))).toBeGreaterThan(0);
    expect(readFileSync(join(out, 'fleet.yaml'), 'utf8')).toContain('-automaticShutdownDelaySec=1');

    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain(`Allocations went to the allocator service at ${allocator} over mutual TLS`);
    expect(summary).toContain('| remote cluster |');
    expect(summary).toContain('Not measured against a remote cluster');
    expect(summary).not.toContain('events committed |');
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('<h2>Remote target</h2>');
    expect(html).toContain('API (kubectl get --watch)');
    expect(html).not.toContain('Server memory');

    // Gone from the remote: the fleet and its autoscaler at once, its GameServers soon after.
    expect(await status(`${FLEETS}/bench-allocation`)).toBe(404);
    expect(await status(`${AUTOSCALERS}/bench-allocation`)).toBe(404);
    await waitFor(
      async () => {
        const list = await apiRequest(remote.baseUrl, 'GET', `${GAMESERVERS}?labelSelector=${encodeURIComponent('agones.dev/fleet=bench-allocation')}`);
        return (list.json as { items: unknown[] }).items.length === 0;
      },
      { timeoutMs: seconds(20), intervalMs: 200, what: "the fleet's GameServers gone" },
    );
    expect(remote.process.stderr).not.toContain('refused a TLS client');
  });

  it('without --kubeconfig allocates from a fleet that exists, and says it assumed it', { timeout: seconds(120) }, async ({ skip }) => {
    skip(...without(K6));
    await readyFleet('existing', 3);
    const out = join(dir, 'assumed');
    const result = await bench(['agones-scenario', ...tls(), '--fleet', 'existing', '--duration', '2s', '--p99-ms', '2000', '--out', out]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('no --kubeconfig: fleet default/existing must exist with Ready game servers; its status is not read');
    const data = readRun(out);
    expect(data.remote?.fleetManagement).toBe('assumed');
    expect(data.fleetsim.outcomes.Allocated).toBeGreaterThan(0);
    expect(data.fleet).toEqual([]);
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('Fleet default/existing was assumed to exist (no --kubeconfig)');
    // The allocations happened there, and the fleet is left as it was found (not deleted).
    const fleet = (await apiRequest(remote.baseUrl, 'GET', `${FLEETS}/existing`)).json as { status: { allocatedReplicas: number } };
    expect(fleet.status.allocatedReplicas).toBeGreaterThan(0);
    expect(await fleetNames()).toEqual(['existing']);
  });

  it('refuses bad targets and certificates before anything runs: exit 2, the flag named, nothing created', async () => {
    const cases: Array<{ args: string[]; message: string }> = [
      {
        args: ['--target-allocator', allocator.replace('https:', 'http:'), '--client-cert', certs.client.certFile, '--client-key', certs.client.keyFile],
        message: '--target-allocator must be https://',
      },
      {
        args: ['--target-allocator', allocator, '--client-cert', join(dir, 'missing.crt'), '--client-key', certs.client.keyFile],
        message: `--client-cert ${join(dir, 'missing.crt')}: cannot read it`,
      },
      {
        args: ['--target-allocator', allocator, '--client-cert', certs.client.certFile, '--client-key', certs.server.keyFile],
        message: `--client-key ${certs.server.keyFile} does not go with --client-cert ${certs.client.certFile}`,
      },
      {
        // The stand-in's plain HTTP port, not its allocator.
        args: ['--target-allocator', remote.baseUrl.replace('http:', 'https:'), '--client-cert', certs.client.certFile, '--client-key', certs.client.keyFile, '--ca', certs.ca.certFile],
        message: 'that port does not speak TLS',
      },
      {
        // A client certificate of another CA: the allocator refuses the handshake.
        args: ['--target-allocator', allocator, '--client-cert', certs.untrustedClient.certFile, '--client-key', certs.untrustedClient.keyFile, '--ca', certs.ca.certFile],
        message: `--target-allocator ${allocator}: the server closed the connection right after the TLS handshake`,
      },
      {
        // The allocator's certificate checked against a CA that did not sign it.
        args: ['--target-allocator', allocator, '--client-cert', certs.client.certFile, '--client-key', certs.client.keyFile, '--ca', certs.untrustedCa.certFile],
        message: 'the server certificate does not verify against --ca',
      },
    ];
    for (const { args, message } of cases) {
      const out = join(dir, 'refused');
      const result = await bench(['allocation-throughput', ...args, '--kubeconfig', kubeconfig, '--fleet', 'refused', '--duration', '2s', '--out', out]);
      expect(result.code, result.output).toBe(2);
      expect(result.stderr, result.output).toContain(message);
      expect(result.stdout).toBe('');
      expect(existsSync(out)).toBe(false);
    }
    expect(await fleetNames()).toEqual(['existing']);
    expect(await status(`${AUTOSCALERS}/refused`)).toBe(404);
  });

  it("the k6 operator's way: a k6 archive with its settings, run as two segmented runners that get the certificate from K6_CONFIG", async ({ skip }) => {
    skip(...without(K6));
    await readyFleet('operator', 8);
    const k6 = K6.path!;
    const k6Run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number; output: string }>((resolve) => {
        execFile(k6, args, { cwd: dir, env: { ...process.env, K6_NO_USAGE_REPORT: 'true', ...env }, timeout: seconds(30) }, (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
        );
      });
    const archive = join(dir, 'allocation.tar');
    const settings = ['TARGET=remote', `ALLOCATOR_URL=${allocator}`, 'RESOURCE_API_SHARE=0', 'FLEET=operator', 'RATE=4', 'VUS=6', 'DURATION=2s', 'P99_MS=2000'];
    const archived = await k6Run(['archive', join(REPO_ROOT, 'scenarios', 'allocation-throughput.ts'), '-O', archive, ...settings.flatMap((e) => ['-e', e])]);
    expect(archived.code, archived.output).toBe(0);
    expect(readFileSync(archive).includes('PRIVATE KEY')).toBe(false);
    const config = join(dir, 'k6-tls.json');
    writeFileSync(config, JSON.stringify({ tlsAuth: [{ cert: certs.client.cert, key: certs.client.key }] }));

    // As the operator's runner Jobs: `k6 run` of the archive, each with its execution segment.
    const runner = (segment: string, env: NodeJS.ProcessEnv) =>
      k6Run(['run', '--quiet', '--execution-segment', segment, '--execution-segment-sequence', '0,1/2,1', '--summary-export', join(dir, `runner-${segment.replace(/\W/g, '')}.json`), archive], env);
    const tlsEnv = { K6_CONFIG: config, SSL_CERT_FILE: certs.ca.certFile };
    const runners = await Promise.all([runner('0:1/2', tlsEnv), runner('1/2:1', tlsEnv)]);
    const counts = ['012', '121'].map((segment) => {
      const metrics = (JSON.parse(readFileSync(join(dir, `runner-${segment}.json`), 'utf8')) as { metrics: Record<string, { count?: number }> }).metrics;
      return { requests: metrics.http_reqs?.count ?? 0, allocated: metrics.alloc_allocated?.count ?? 0, errors: metrics.alloc_error?.count ?? 0 };
    });
    for (const [i, r] of runners.entries()) expect(r.code, `runner ${i}: ${r.output}`).toBe(0);
    // Each runner sent its half of the load, through mutual TLS, and each request got a GameServer:
    // at 4 a second for 2 s they ask for 8 at most, so one runner starting first cannot take all.
    for (const c of counts) expect(c.requests).toBeGreaterThan(0);
    expect(counts.reduce((sum, c) => sum + c.errors, 0)).toBe(0);
    expect(counts.reduce((sum, c) => sum + c.allocated, 0)).toBe(counts.reduce((sum, c) => sum + c.requests, 0));

    // Without the k6 configuration file the runner presents no certificate, and the allocator refuses it.
    const bare = await runner('0:1/2', { SSL_CERT_FILE: certs.ca.certFile });
    expect(bare.code, bare.output).toBe(99);
    expect(bare.output).toContain('tls: certificate required');
  });
});
