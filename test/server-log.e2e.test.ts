import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL } from './helpers/kubectl.js';
import { fleetManifest } from './helpers/manifests.js';
import { cleanEnv, killAll, runCli, startSidecar } from './helpers/process.js';
import { DEFAULT_SERVE_ARGS, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';
import { without } from './helpers/tools.js';
import { waitFor } from './helpers/wait.js';

/**
 * What `fleetsim serve` says on stdout as the cluster works (a line per GameServer reaching Ready,
 * allocation, process start and back-off, autoscaler decision), in text and JSON, filtered by
 * --log-level; and the kubeconfig it writes beside its log, used by the real kubectl and by
 * @kubernetes/client-node with no --server.
 */

const SERVE_FLAGS = ['--no-default-fleet', '--nodes', '4', '--no-listen'];

/** A GameServer whose process exits at once with code 3: it starts, then backs off. */
const crashing = (name: string) => ({
  apiVersion: 'agones.dev/v1',
  kind: 'GameServer',
  metadata: { name, annotations: { 'fleetsim.dev/command': 'echo starting; exit 3' } },
  spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
});

const LINE_TIME = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

async function created(serve: ServeProcess, path: string, body: unknown): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'POST', path, { body });
  expect(res.status, res.text).toBe(201);
}

function waitForLine(serve: ServeProcess, pattern: RegExp, what: string): Promise<RegExpMatchArray> {
  return waitFor(() => pattern.exec(serve.process.stdout) ?? undefined, { timeoutMs: seconds(30), what: `${what} in serve's output\n${serve.process.stdout}` });
}

afterAll(() => killAll());

describe.sequential('serve logs what the cluster does (text, default level)', () => {
  let serve: ServeProcess;
  let dir: string;
  let gameServer: string;

  beforeAll(async () => {
    dir = tempDir('fleetsim-log-');
    serve = await startServe(['--db', join(dir, 'cluster.db'), ...SERVE_FLAGS]);
  });

  it('logs a GameServer turning Ready, with its fleet, node and address', async () => {
    await created(serve, '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('logged', 1));
    const ready = await waitForLine(
      serve,
      new RegExp(`^${LINE_TIME} info  GameServer default/(logged-\\S+): RequestReady -> Ready fleet=logged node=\\S+ address=127\\.0\\.0\\.1:(\\d+)`, 'm'),
      'the Ready line',
    );
    gameServer = ready[1]!;
    const gs = (await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${gameServer}`)).json as {
      status: { ports: Array<{ port: number }> };
    };
    expect(Number(ready[2])).toBe(gs.status.ports[0]!.port);
  });

  it('logs an allocation with the GameServer, its address and port and the selector that found it, or why none was found', async () => {
    const selectors = [{ matchLabels: { 'agones.dev/fleet': 'elsewhere' } }, { matchLabels: { 'agones.dev/fleet': 'logged' } }];
    const res = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', { body: { namespace: 'default', gameServerSelectors: selectors } });
    expect(res.status, res.text).toBe(200);
    const answer = res.json as { gameServerName: string; address: string; ports: Array<{ port: number }> };
    expect(answer.gameServerName).toBe(gameServer);
    await waitForLine(
      serve,
      new RegExp(
        `^${LINE_TIME} info  Allocated GameServer default/${gameServer} fleet=logged address=${answer.address}:${answer.ports[0]!.port} node=\\S+ selector="agones\\.dev/fleet=logged"$`,
        'm',
      ),
      'the allocation line',
    );
    const none = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', { body: { namespace: 'default', gameServerSelectors: [selectors[0]] } });
    expect((none.json as { code?: number }).code).toBeDefined();
    await waitForLine(
      serve,
      new RegExp(`^${LINE_TIME} info  Allocation in default found no GameServer: .* selectors="agones\\.dev/fleet=elsewhere" result=UnAllocated$`, 'm'),
      'the line of an allocation that found nothing',
    );
  });

  it('logs an autoscaler decision with its figures', async () => {
    await created(serve, '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers', {
      apiVersion: 'autoscaling.agones.dev/v1',
      kind: 'FleetAutoscaler',
      metadata: { name: 'logged-buffer' },
      spec: { fleetName: 'logged', policy: { type: 'Buffer', buffer: { bufferSize: 2, maxReplicas: 10 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } } },
    });
    // One Allocated and no Ready: a buffer of 2 asks for 3.
    const line = await waitForLine(
      serve,
      new RegExp(`^${LINE_TIME} info  FleetAutoscaler default/logged-buffer: Scaling fleet logged from 1 to 3 reason=AutoScalingFleet (.*)$`, 'm'),
      'the autoscaler line',
    );
    expect(line[1]).toMatch(/^fleet=logged policy=Buffer current=1 desired=3 .*\bready=0 .*\ballocated=1 bufferSize=2 minReplicas=0 maxReplicas=10\b/);
  });

  it('logs a real process starting, then backing off after it exits', async () => {
    await created(serve, '/apis/agones.dev/v1/namespaces/default/gameservers', crashing('crasher'));
    await waitForLine(serve, new RegExp(`^${LINE_TIME} info  Pod default/crasher: Started container with command: echo starting; exit 3 reason=Started$`, 'm'), 'the start');
    await waitForLine(
      serve,
      new RegExp(`^${LINE_TIME} warn  Pod default/crasher: Back-off restarting failed container: the game server process exited with code 3; restarting in 1s reason=BackOff$`, 'm'),
      'the back-off',
    );
  });

  it('writes a kubeconfig beside its log that the real kubectl and client-node use with no --server', async ({ skip }) => {
    skip(...without(KUBECTL));
    const path = join(dir, 'cluster.kubeconfig');
    await waitForLine(serve, new RegExp(`^ {2}export KUBECONFIG=${path}$`, 'm'), 'the export line');
    const context = await kubectlWith(path, ['config', 'current-context']);
    expect(context.out.trim(), context.err).toBe('fleetsim');
    const fleets = await kubectlWith(path, ['get', 'fleets', '-o', 'name']);
    expect(fleets.code, fleets.err).toBe(0);
    expect(fleets.out.trim()).toBe('fleet.agones.dev/logged');

    const config = new KubeConfig();
    config.loadFromFile(path);
    const list = (await config.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: 'agones.dev', version: 'v1', namespace: 'default', plural: 'fleets' })) as {
      items: Array<{ metadata: { name: string } }>;
    };
    expect(list.items.map((f) => f.metadata.name)).toEqual(['logged']);
  });

  it('rewrites the kubeconfig for its new address when it starts again on the log, and leaves a file it did not write alone', async ({ skip }) => {
    skip(...without(KUBECTL));
    const path = join(dir, 'cluster.kubeconfig');
    await serve.process.kill('SIGTERM');
    const again = await startServe(['--db', join(dir, 'cluster.db'), ...SERVE_FLAGS]);
    expect(again.port).not.toBe(serve.port);
    expect(readFileSync(path, 'utf8')).toContain(`server: ${again.baseUrl}\n`);
    const fleets = await kubectlWith(path, ['get', 'fleets', '-o', 'name']);
    expect(fleets.out.trim(), fleets.err).toBe('fleet.agones.dev/logged');

    const foreign = join(dir, 'other.kubeconfig');
    const mine = 'apiVersion: v1\nkind: Config\n# kept by hand\n';
    writeFileSync(foreign, mine);
    const other = await startServe(['--db', join(dir, 'other.db'), ...SERVE_FLAGS]);
    await waitForLine(other, /^ {2}kubectl --server \S+ get fleets,gameservers$/m, 'the banner');
    expect(other.process.stdout).toContain(`\n  kubeconfig: ${foreign} exists and fleetsim did not write it: left as it is\n  kubectl --server ${other.baseUrl} get`);
    expect(readFileSync(foreign, 'utf8')).toBe(mine);
  });
});

/** The real kubectl with only a kubeconfig: no --server, its own HOME. */
function kubectlWith(kubeconfig: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const home = tempDir('fleetsim-kubectl-home-');
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL.path!, args, { env: { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

describe('serve --log-format json', () => {
  it('writes one JSON object per line with time, level, msg and the fields', async () => {
    const serve = await startServe([...DEFAULT_SERVE_ARGS, '--log-format', 'json']);
    await created(serve, '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('jsonlog', 1));
    await waitForLine(serve, /"msg":"GameServer default\/jsonlog-\S+: RequestReady -> Ready"/, 'the Ready line');
    const lines = serve.process.stdout.split('\n').filter((line) => line.startsWith('{'));
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const record of records) {
      expect(Object.keys(record).slice(0, 3)).toEqual(['time', 'level', 'msg']);
      expect(new Date(String(record.time)).toISOString()).toBe(record.time);
    }
    const ready = records.find((r) => /: RequestReady -> Ready$/.test(String(r.msg)));
    expect(ready).toMatchObject({ level: 'info', fleet: 'jsonlog', address: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
  });
});

describe('serve --log-level warn', () => {
  it('writes warnings and leaves out the info lines', async () => {
    const serve = await startServe([...DEFAULT_SERVE_ARGS, '--log-level', 'warn']);
    await created(serve, '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('quiet', 1));
    await created(serve, '/apis/agones.dev/v1/namespaces/default/gameservers', crashing('loud'));
    await waitForLine(serve, /^\S+ warn {2}Pod default\/loud: Back-off restarting failed container/m, 'the back-off warning');
    // The fleet's GameServer was Ready before then (the back-off takes a process start and exit).
    await waitFor(
      async () =>
        ((await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/fleets/quiet')).json as { status?: { readyReplicas?: number } }).status
          ?.readyReplicas === 1,
      { timeoutMs: seconds(30), what: 'a Ready GameServer' },
    );
    expect(serve.process.stdout).not.toMatch(/ (info |debug) /);
    expect(serve.process.stdout).not.toContain('Started container');
  });

  it('refuses a level or a format it does not know, naming the flag', async () => {
    for (const [flag, value, message] of [
      ['--log-level', 'loud', /--log-level must be one of debug, info, warn, error, not "loud"/],
      ['--log-format', 'xml', /--log-format must be text or json, not "xml"/],
    ] as const) {
      const result = await runCli(['serve', '--port', '0', ...DEFAULT_SERVE_ARGS, flag, value]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});

describe('serve whose output nobody reads any more', () => {
  it('runs on without its lines', async () => {
    const serve = await startServe();
    // As `fleetsim serve | head` once head has exited: writes to stdout fail with EPIPE.
    serve.process.child.stdout!.destroy();
    await created(serve, '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('unread', 2));
    await waitFor(
      async () =>
        ((await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/fleets/unread')).json as { status?: { readyReplicas?: number } }).status
          ?.readyReplicas === 2,
      { timeoutMs: seconds(30), what: `2 Ready\n${serve.process.stderr}` },
    );
    expect(serve.process.exitStatus).toBeUndefined();
  });
});

describe('fleetsim sidecar logs each SDK call', () => {
  it('prints a line per call on stdout, as sdk-server --local does, and none at --log-level warn', async () => {
    const sidecar = await startSidecar(['--db', ':memory:']);
    const post = (path: string, body: unknown) => fetch(`${sidecar.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post('/ready', {})).status).toBe(200);
    expect((await post('/health', {})).status).toBe(200);
    expect((await fetch(`${sidecar.baseUrl}/metadata/label`, { method: 'PUT', body: JSON.stringify({ key: 'map', value: 'dust2' }) })).status).toBe(200);
    // A call the sidecar refuses is logged too: the line tells what was received.
    expect((await fetch(`${sidecar.baseUrl}/metadata/label`, { method: 'PUT', body: JSON.stringify({ key: 'bad key', value: 'x' }) })).status).toBe(400);
    const calls = await waitFor(
      () => {
        const lines = sidecar.process.stdout.split('\n').filter((line) => / info {2}Received /.test(line));
        return lines.length >= 4 && lines.map((line) => line.replace(/^\S+ info {2}/, ''));
      },
      { what: `four call lines in\n${sidecar.process.stdout}` },
    );
    expect(calls).toEqual(['Received Ready request', 'Received health ping', 'Received SetLabel request key=map value=dust2', 'Received SetLabel request key="bad key" value=x']);

    const quiet = await startSidecar(['--db', ':memory:'], cleanEnv({ LOG_LEVEL: 'Warning' }));
    expect((await fetch(`${quiet.baseUrl}/ready`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect((await fetch(`${quiet.baseUrl}/gameserver`)).status).toBe(200);
    await quiet.process.kill('SIGTERM');
    expect(quiet.process.stdout).not.toContain('Received');
  });
});
