import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';
import { without } from './helpers/tools.js';

/**
 * Real game-server processes under `fleetsim serve` (annotation `fleetsim.dev/command`): each
 * GameServer runs test/fixtures/sdk-game-server.cjs, which talks to its own sidecar with the
 * official Node SDK over gRPC and records what it sees in a file per GameServer.
 */

const GAME_SERVER = fileURLToPath(new URL('./fixtures/sdk-game-server.cjs', import.meta.url));
const LOCAL_GAME = fileURLToPath(new URL('../examples/local-game/', import.meta.url));

/** Sends lines to a TCP game server and collects what it answers until it closes the connection. */
function talk(port: number, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.setTimeout(seconds(10), () => socket.destroy(new Error(`no end of session; got ${answer}`)));
    socket.write(lines.map((l) => `${l}\n`).join(''));
  });
}

interface Entry {
  pid: number;
  started?: boolean;
  env?: Record<string, string>;
  cwd?: string;
  state?: string;
  signal?: string;
}
interface GameServer {
  metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status: { state: string; address?: string; ports?: Array<{ name: string; port: number }> };
}

let out: string;
let serve: ServeProcess | undefined;

const entries = (name: string): Entry[] =>
  existsSync(join(out, `${name}.jsonl`))
    ? readFileSync(join(out, `${name}.jsonl`), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Entry)
    : [];
const pidOf = (name: string) => entries(name).find((e) => e.started)?.pid;
/** Whether a process runs (a zombie waiting to be reaped does not). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

function fleet(
  name: string,
  replicas: number,
  options: { env?: Record<string, string>; command?: string; grace?: number; restartPolicy?: string; health?: Record<string, unknown> } = {},
) {
  const env = Object.entries({ OUT_DIR: out, ...options.env }).map(([n, value]) => ({ name: n, value }));
  return fleetManifest(name, replicas, {
    annotations: { 'fleetsim.dev/command': options.command ?? `node ${GAME_SERVER}` },
    spec: {
      ports: [{ name: 'game-port', containerPort: 7777, protocol: 'TCP' }],
      health: options.health ?? { periodSeconds: 2, failureThreshold: 3, initialDelaySeconds: 2 },
    },
    containers: [{ name: 'game', image: 'game:1', env }],
    podSpec: {
      ...(options.grace !== undefined && { terminationGracePeriodSeconds: options.grace }),
      ...(options.restartPolicy && { restartPolicy: options.restartPolicy }),
    },
  });
}

async function api(method: string, path: string, body?: unknown) {
  return apiRequest(serve!.baseUrl, method, path, { body });
}
async function gameServers(fleetName: string): Promise<GameServer[]> {
  const r = await api('GET', `/apis/agones.dev/v1/namespaces/default/gameservers?labelSelector=agones.dev/fleet=${fleetName}`);
  return (r.json as { items: GameServer[] }).items;
}
async function createFleet(manifest: unknown) {
  const r = await api('POST', '/apis/agones.dev/v1/namespaces/default/fleets', manifest);
  expect(r.status, r.text).toBe(201);
}
const readyServers = (fleetName: string, count: number, timeoutMs = seconds(20)) =>
  waitFor(
    async () => {
      const items = await gameServers(fleetName);
      const ready = items.filter((gs) => gs.status.state === 'Ready');
      return ready.length === count && items.length === count && ready;
    },
    { timeoutMs, intervalMs: 200, what: `${count} Ready GameServers in ${fleetName}` },
  );
async function eventsOf(name: string): Promise<Array<{ reason: string; message: string; type: string }>> {
  const r = await api('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`);
  return (r.json as { items: Array<{ reason: string; message: string; type: string }> }).items;
}

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'fleetsim-processes-'));
});
afterEach(async () => {
  // SIGTERM first: serve stops the processes it started (a SIGKILLed serve cannot).
  await serve?.process.kill('SIGTERM', seconds(10));
  await killAll();
  serve = undefined;
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('real game-server processes', () => {
  it('run per GameServer with a pod environment and reach Ready through the official SDK over gRPC', async () => {
    serve = await startServe();
    await createFleet(fleet('env', 3, { env: { GREETING: 'hi' } }));
    const ready = await readyServers('env', 3);
    for (const gs of ready) {
      const started = await waitFor(() => entries(gs.metadata.name).find((e) => e.started), { what: 'the process record' });
      const port = gs.status.ports![0]!.port;
      expect(started.env).toMatchObject({ PORT: String(port), FLEETSIM_PORT_GAME_PORT: String(port), FLEETSIM_ADDRESS: gs.status.address, GREETING: 'hi' });
      expect(started.cwd).toBe(fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, ''));
      // Its own sidecar answers REST on the other port, for the same GameServer.
      const rest = await fetch(`http://127.0.0.1:${started.env!.AGONES_SDK_HTTP_PORT}/gameserver`);
      expect(((await rest.json()) as { object_meta: { name: string } }).object_meta.name).toBe(gs.metadata.name);
      expect(started.env!.AGONES_SDK_GRPC_PORT).not.toBe(started.env!.AGONES_SDK_HTTP_PORT);
    }
    // Two processes never share a host port.
    expect(new Set(ready.map((gs) => gs.status.ports![0]!.port)).size).toBe(3);
  });

  it('see Allocated on their SDK watch after an allocation by the allocator endpoint and by kubectl', async ({ skip }) => {
    skip(...without(KUBECTL));
    serve = await startServe();
    await createFleet(fleet('alloc', 2));
    await readyServers('alloc', 2);
    const byAllocator = await api('POST', '/gameserverallocation', {
      namespace: 'default',
      gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'alloc' } }],
    });
    expect(byAllocator.status, byAllocator.text).toBe(200);
    const first = (byAllocator.json as { gameServerName: string }).gameServerName;

    const home = mkdtempSync(join(tmpdir(), 'fleetsim-kubectl-'));
    const allocation = join(home, 'allocation.yaml');
    writeFileSync(allocation, 'apiVersion: allocation.agones.dev/v1\nkind: GameServerAllocation\nspec:\n  selectors:\n    - matchLabels: {agones.dev/fleet: alloc}\n');
    const kubectl = new Kubectl(serve.baseUrl, home);
    const second = (await kubectl.ok(['create', '-f', allocation, '-o', 'jsonpath={.status.gameServerName}'])).trim();
    rmSync(home, { recursive: true, force: true });

    expect(second).not.toBe(first);
    for (const name of [first, second]) {
      await waitFor(() => entries(name).some((e) => e.state === 'Allocated'), { what: `${name}'s process seeing Allocated` });
    }
  });

  it('make the GameServer Unhealthy when they exit after Ready, and the fleet replaces it', async () => {
    serve = await startServe();
    await createFleet(fleet('crash', 2));
    const [victim] = await readyServers('crash', 2);
    const name = victim!.metadata.name;
    const pid = await waitFor(() => pidOf(name), { what: 'the pid' });
    writeFileSync(join(out, `crash-${name}`), '');
    await waitFor(
      async () => (await eventsOf(name)).find((e) => e.reason === 'Unhealthy' && /exited with code 3/.test(e.message)),
      { timeoutMs: seconds(10), intervalMs: 200, what: 'an Unhealthy event naming exit code 3' },
    );
    const replaced = await readyServers('crash', 2);
    expect(replaced.map((gs) => gs.metadata.name)).not.toContain(name);
    expect(alive(pid)).toBe(false);
  });

  it('complete their pod when they exit 0 after Ready (restartPolicy left to Agones: Never): the GameServer shuts down and goes', async () => {
    serve = await startServe();
    await createFleet(fleet('done', 1));
    const [finished] = await readyServers('done', 1);
    const name = finished!.metadata.name;
    writeFileSync(join(out, `done-${name}`), '');
    await waitFor(
      async () => (await eventsOf(name)).find((e) => e.reason === 'Shutdown' && /Pod is in Succeeded state/.test(e.message)),
      { timeoutMs: seconds(10), intervalMs: 200, what: 'a Shutdown event for the completed pod' },
    );
    const replaced = await readyServers('done', 1);
    expect(replaced.map((gs) => gs.metadata.name)).not.toContain(name);
  });

  it('get SIGTERM when scaled down, and SIGKILL at the end of the grace period if they ignore it', async () => {
    serve = await startServe();
    await createFleet(fleet('polite', 1, { env: { TERM_DELAY_MS: '300' } }));
    await createFleet(fleet('stubborn', 1, { env: { IGNORE_TERM: '1' }, grace: 2 }));
    const [polite] = await readyServers('polite', 1);
    const [stubborn] = await readyServers('stubborn', 1);
    const politePid = await waitFor(() => pidOf(polite!.metadata.name), { what: 'pid' });
    const stubbornPid = await waitFor(() => pidOf(stubborn!.metadata.name), { what: 'pid' });
    const scaledAt = Date.now();
    for (const name of ['polite', 'stubborn']) {
      const r = await apiRequest(serve.baseUrl, 'PATCH', `/apis/agones.dev/v1/namespaces/default/fleets/${name}`, {
        body: { spec: { replicas: 0 } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(r.status, r.text).toBe(200);
    }
    // While its process terminates, the GameServer stays with a deletionTimestamp and its sidecar answers.
    const stubbornName = stubborn!.metadata.name;
    await waitFor(
      async () => ((await api('GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${stubbornName}`)).json as GameServer).metadata.deletionTimestamp,
      { what: 'a deletionTimestamp on the terminating GameServer' },
    );
    const sidecarPort = entries(stubbornName).find((e) => e.started)!.env!.AGONES_SDK_HTTP_PORT;
    const fromSidecar = (await (await fetch(`http://127.0.0.1:${sidecarPort}/gameserver`)).json()) as { object_meta: { deletion_timestamp: string } };
    expect(Number(fromSidecar.object_meta.deletion_timestamp)).toBeGreaterThan(0);
    // A second delete of a terminating GameServer changes nothing.
    expect((await api('DELETE', `/apis/agones.dev/v1/namespaces/default/gameservers/${stubbornName}`)).status).toBe(200);
    expect(alive(stubbornPid)).toBe(true);
    await waitFor(() => !alive(politePid), { timeoutMs: seconds(5), what: 'the polite process to exit' });
    expect(entries(polite!.metadata.name).some((e) => e.signal === 'SIGTERM')).toBe(true);
    await waitFor(() => !alive(stubbornPid), { timeoutMs: seconds(8), what: 'the stubborn process to be killed' });
    expect(entries(stubborn!.metadata.name).some((e) => e.signal === 'SIGTERM' && 'ignored' in e)).toBe(true);
    // It outlived SIGTERM by its grace period (2 s), not less.
    expect(Date.now() - scaledAt).toBeGreaterThanOrEqual(1_900);
    // Then it is gone, and the fleet did not replace it.
    await waitFor(async () => (await api('GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${stubbornName}`)).status === 404, {
      what: 'the GameServer deleted once its process exited',
    });
    expect(await gameServers('stubborn')).toEqual([]);
  });

  it('get SIGTERM when their GameServer is deleted while a finalizer holds it; the GameServer stays until the finalizer is removed', async () => {
    serve = await startServe();
    await createFleet(fleet('held', 1, { env: { TERM_DELAY_MS: '300' } }));
    const [held] = await readyServers('held', 1);
    const name = held!.metadata.name;
    const path = `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`;
    const pid = await waitFor(() => pidOf(name), { what: 'pid' });
    const patch = (finalizers: string[]) =>
      apiRequest(serve!.baseUrl, 'PATCH', path, { body: { metadata: { finalizers } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect((await patch(['agones.dev/controller', 'example.com/hold'])).status).toBe(200);
    expect((await api('DELETE', path)).status).toBe(200);
    await waitFor(() => !alive(pid), { timeoutMs: seconds(5), what: 'the process to exit after SIGTERM' });
    expect(entries(name).some((e) => e.signal === 'SIGTERM')).toBe(true);
    // Its pod gone, Agones's controller takes its own finalizer off; the other one keeps the GameServer.
    const kept = await waitFor(
      async () => {
        const gs = (await api('GET', path)).json as GameServer & { metadata: { finalizers?: string[] } };
        return gs.metadata.finalizers?.length === 1 && gs;
      },
      { what: 'the GameServer held by the other finalizer alone' },
    );
    expect(kept.metadata.finalizers).toEqual(['example.com/hold']);
    expect(kept.metadata.deletionTimestamp).toBeDefined();
    expect((await patch([])).status).toBe(200);
    expect((await api('GET', path)).status).toBe(404);
  });

  it('restart before Ready, then give up as Unhealthy naming the exit code, when the command does not exist', async () => {
    serve = await startServe();
    await createFleet(fleet('missing', 1, { command: 'no-such-game-server --port $PORT', health: { disabled: true } }));
    const [gs] = await waitFor(async () => {
      const items = await gameServers('missing');
      return items.length === 1 && items;
    });
    const name = gs!.metadata.name;
    const events = await waitFor(
      async () => {
        const all = await eventsOf(name);
        return all.some((e) => e.reason === 'Unhealthy') && all;
      },
      { timeoutMs: seconds(30), intervalMs: 250, what: 'Unhealthy after repeated failed starts' },
    );
    const backOffs = events.filter((e) => e.reason === 'BackOff');
    expect(backOffs.length).toBeGreaterThanOrEqual(1);
    expect(backOffs[0]!.message).toMatch(/exited with code 127/);
    expect(events.find((e) => e.reason === 'Unhealthy')!.message).toMatch(/exited with code 127.*5 failed starts/);
  });

  it('stop with fleetsim, leaving no process behind, and start again when it restarts on the same log', async () => {
    const db = join(out, 'restart.db');
    serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '2']);
    await createFleet(fleet('restart', 2));
    const before = await readyServers('restart', 2);
    const pids = await Promise.all(before.map((gs) => waitFor(() => pidOf(gs.metadata.name), { what: 'pid' })));
    expect(pids.every(alive)).toBe(true);
    await serve.process.kill('SIGTERM', seconds(10));
    await waitFor(() => pids.filter(alive).length === 0, { timeoutMs: seconds(2), what: 'no process left' });

    serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '2']);
    for (const gs of before) {
      await waitFor(() => entries(gs.metadata.name).filter((e) => e.started).length === 2, { timeoutMs: seconds(15), what: `${gs.metadata.name} started again` });
    }
    const again = await readyServers('restart', 2);
    expect(again.map((gs) => gs.metadata.name).sort()).toEqual(before.map((gs) => gs.metadata.name).sort());
  });

  it('end with serve even when it is SIGKILLed (its watchdog ends them), and a restart ends those whose watchdog was killed too', async () => {
    const db = join(out, 'orphans.db');
    const args = ['--db', db, '--no-default-fleet', '--nodes', '2'];
    // Each leaves a sleeper in its process group, which lives on whatever happens to its sidecar.
    const command = `sleep 600 & echo $! > ${out}/sleeper-$$; exec node ${GAME_SERVER}`;
    const seen = new Set<number>();
    const startedPids = (name: string) => entries(name).filter((e) => e.started).map((e) => e.pid);
    const sleeperOf = (pid: number) => Number(readFileSync(join(out, `sleeper-${pid}`), 'utf8'));
    const running = async (count: number) => {
      const ready = await readyServers('orphans', 2);
      const pids = await Promise.all(
        ready.map((gs) => waitFor(() => startedPids(gs.metadata.name).length === count && startedPids(gs.metadata.name).at(-1), { what: `process ${count} of ${gs.metadata.name}` })),
      );
      const all = [...pids, ...pids.map(sleeperOf)];
      for (const pid of all) seen.add(pid);
      return { names: ready.map((gs) => gs.metadata.name).sort(), all };
    };
    try {
      serve = await startServe(args);
      await createFleet(fleet('orphans', 2, { command }));
      const first = await running(1);
      expect(first.all.every(alive)).toBe(true);
      await serve.process.kill('SIGKILL');
      await waitFor(() => first.all.every((pid) => !alive(pid)), { timeoutMs: seconds(5), intervalMs: 100, what: "the SIGKILLed serve's processes to end" });

      serve = await startServe(args);
      const second = await running(2);
      expect(second.names).toEqual(first.names);
      // Its watchdog is killed too: nothing is left to end them, so they outlive it.
      const servePid = String(serve.process.pid);
      const watchdogs = readdirSync('/proc').filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === servePid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('FLEETSIM_RUN');
        } catch {
          return false;
        }
      });
      expect(watchdogs).toHaveLength(1);
      process.kill(Number(watchdogs[0]), 'SIGKILL');
      await serve.process.kill('SIGKILL');
      await waitFor(() => !alive(Number(watchdogs[0])), { what: 'the watchdog gone' });
      const sleepers = second.all.slice(2);
      expect(sleepers.every(alive)).toBe(true);

      // The next start on the same log ends them before anything starts, then runs one process per GameServer.
      serve = await startServe(args);
      expect(second.all.filter(alive)).toEqual([]);
      const third = await running(3);
      expect(third.names).toEqual(first.names);
      expect([...seen].filter(alive).sort()).toEqual([...third.all].sort());
    } finally {
      for (const pid of seen) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('print without pause (yes) while serve keeps answering and stops on SIGTERM; a line that never ends is shown in bounded pieces', async () => {
    serve = await startServe();
    await createFleet(fleet('chatty', 1, { command: 'yes', health: { disabled: true } }));
    // 3 MB with no newline, then silence.
    await createFleet(fleet('endless', 1, { command: "head -c 3000000 /dev/zero | tr '\\0' y; exec sleep 600", health: { disabled: true } }));
    const podLog = async (fleetName: string, query = '') => {
      const [gs] = await gameServers(fleetName);
      return gs && (await api('GET', `/api/v1/namespaces/default/pods/${gs.metadata.name}/log${query}`)).text;
    };
    await waitFor(async () => (await podLog('chatty', '?tailLines=3')) === 'y\ny\ny\n', { timeoutMs: seconds(20), intervalMs: 200, what: 'the output of yes' });
    // While it prints, reads answer (each request gives up after 5 s).
    for (let i = 0; i < 5; i++) {
      const r = await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/fleets', { timeoutMs: seconds(5) });
      expect(r.status).toBe(200);
    }
    // Kept as partial pieces, the newest MiB at most, shown run on as the kubelet shows them.
    const endless = await waitFor(async () => ((await podLog('endless')) ?? '').length > 900_000 && (await podLog('endless'))!, {
      timeoutMs: seconds(20),
      intervalMs: 200,
      what: 'the unending line in the log',
    });
    expect(endless).toMatch(/^y+$/);
    expect(endless.length).toBeLessThanOrEqual(1024 * 1024);
    const stopped = await serve.process.kill('SIGTERM', seconds(10));
    expect(stopped).toEqual({ code: 0, signal: null });
  });

  it('run the worked example: examples/local-game, allocated with kubectl and played over TCP', async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '-f', join(LOCAL_GAME, 'fleet.yaml')]);
    await readyServers('local-game', 3);
    const home = mkdtempSync(join(tmpdir(), 'fleetsim-kubectl-'));
    const kubectl = new Kubectl(serve.baseUrl, home);
    const [name, address] = (
      await kubectl.ok(['create', '-f', join(LOCAL_GAME, 'allocation.yaml'), '-o', 'jsonpath={.status.gameServerName} {.status.address}:{.status.ports[0].port}'])
    ).split(' ');
    rmSync(home, { recursive: true, force: true });
    const answer = await talk(Number(address!.split(':')[1]), ['PING', 'WHO', 'BYE']);
    expect(answer).toBe(`welcome to ${name}, player-1\nPONG\n${name} Allocated\nbye\n`);
    // The last player left: the server shut itself down and the fleet started a fresh one.
    const fresh = await readyServers('local-game', 3);
    expect(fresh.map((gs) => gs.metadata.name)).not.toContain(name);
  });
});
