import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { fleetManifest } from './helpers/manifests.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `fleetsim explain` against a real `fleetsim serve` on the virtual clock, its log a real SQLite
 * file: each scenario the issue names (a scale-down deletion, an autoscaler scale-up, a
 * reservation's end, an Unhealthy from missed health pings, an allocation, a rolling update) is
 * played through the API, then explained from the file (`--db`) or the server (`--server`), and
 * the chain must lead back to the request or timer that began it.
 */

interface Because {
  text: string;
  seq?: number;
}
interface Change {
  seq: number;
  summary: string;
  because: Because[];
}
interface History {
  object: { kind: string; namespace: string; name: string };
  changes: Change[];
}

const NS = '/apis/agones.dev/v1/namespaces/default';
const dir = mkdtempSync(join(tmpdir(), 'fleetsim-explain-'));
const db = join(dir, 'log.db');
let serve: ServeProcess;

async function advance(seconds: number): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: seconds } });
  expect(res.status, res.text).toBe(200);
}

async function gameServers(fleet: string): Promise<Array<{ metadata: { name: string; labels: Record<string, string> }; status: { state: string } }>> {
  const res = await apiRequest(serve.baseUrl, 'GET', `${NS}/gameservers?labelSelector=agones.dev/fleet=${fleet}`);
  expect(res.status, res.text).toBe(200);
  return (res.json as { items: Array<{ metadata: { name: string; labels: Record<string, string> }; status: { state: string } }> }).items;
}

/** Moves the virtual clock a step at a time until `probe` holds. */
async function until<T>(probe: () => Promise<T | undefined | false>, what: string, step = 1): Promise<T> {
  return waitFor(
    async () => {
      await advance(step);
      return probe();
    },
    { what, timeoutMs: seconds(20), intervalMs: 20 },
  );
}

async function readyCount(fleet: string, count: number): Promise<void> {
  await until(async () => (await gameServers(fleet)).filter((gs) => gs.status.state === 'Ready').length === count, `${count} Ready in ${fleet}`);
}

async function send(method: string, path: string, body: unknown, requestId: string, contentType = 'application/json'): Promise<unknown> {
  const res = await apiRequest(serve.baseUrl, method, path, { body, headers: { 'content-type': contentType, 'x-request-id': requestId } });
  expect(res.status, res.text).toBeLessThan(300);
  return res.json;
}

async function explain(target: string, via: 'db' | 'server' = 'db'): Promise<History> {
  const source = via === 'db' ? ['--db', db] : ['--server', serve.baseUrl];
  const run = await runCli(['explain', target, ...source, '-o', 'json']);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as History;
}

/** The chain of the (last) change whose summary matches, as one line per link. */
function chainOf(history: History, summary: RegExp): string[] {
  const change = history.changes.filter((c) => summary.test(c.summary)).at(-1);
  expect(change, `${history.object.name}: no change like ${summary} in ${history.changes.map((c) => c.summary).join(' | ')}`).toBeDefined();
  return change!.because.map((b) => (b.seq === undefined ? b.text : `#${b.seq} ${b.text}`));
}

/** Each pattern matches a link, in this order (other links may come between). */
function expectChain(chain: string[], patterns: RegExp[]): void {
  let at = 0;
  for (const pattern of patterns) {
    const found = chain.findIndex((link, i) => i >= at && pattern.test(link));
    expect(found, `no link like ${pattern} after link ${at} in:\n${chain.join('\n')}`).toBeGreaterThanOrEqual(0);
    at = found + 1;
  }
}

describe('fleetsim explain', () => {
  beforeAll(async () => {
    serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '4', '--no-listen', '--clock', 'virtual']);
  });
  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a scale-down deletion: deleted ← its set scaled 3→1 ← the fleet 3→1 ← the PATCH request', async () => {
    await send('POST', `${NS}/fleets`, fleetManifest('down', 3, { spec: { health: { disabled: true } } }), 'create-down');
    await readyCount('down', 3);
    const before = (await gameServers('down')).map((gs) => gs.metadata.name);
    await send('PATCH', `${NS}/fleets/down`, { spec: { replicas: 1 } }, 'scale-down', 'application/merge-patch+json');
    await until(async () => (await gameServers('down')).length === 1, 'the scale-down');
    const kept = new Set((await gameServers('down')).map((gs) => gs.metadata.name));
    const deleted = before.find((name) => !kept.has(name))!;

    const chain = chainOf(await explain(`gs/${deleted}`), /^deleted$/);
    expectChain(chain, [
      /the GameServer controller reconciled/,
      /GameServer default\/.*: Ready → Shutdown \(Deleted by GameServerSet down-/,
      /the GameServerSet controller reconciled default\/down-.*\(replicas 1, had 3/,
      /GameServerSet default\/down-.*: replicas 3 → 1/,
      /the Fleet controller reconciled default\/down \(replicas 1\)/,
      /Fleet default\/down: replicas 3 → 1/,
      /^request PATCH \/apis\/agones.dev\/v1\/namespaces\/default\/fleets\/down from 127\.0\.0\.1:\d+ \(request id scale-down\)$/,
    ]);
  });

  it('an allocation: allocated ← the allocation request', async () => {
    await send('POST', `${NS}/fleets`, fleetManifest('alloc', 1, { spec: { health: { disabled: true } } }), 'create-alloc');
    await readyCount('alloc', 1);
    const gsa = (await send(
      'POST',
      '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations',
      { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'alloc' } }] } },
      'alloc-1',
    )) as { status: { state: string; gameServerName: string } };
    expect(gsa.status.state).toBe('Allocated');
    // Through the running server this time, as the dashboard asks.
    const chain = chainOf(await explain(`gameserver/${gsa.status.gameServerName}`, 'server'), /^allocated \(Ready → Allocated\)$/);
    expect(chain).toEqual([expect.stringMatching(/^request POST \/apis\/allocation.agones.dev\/v1\/namespaces\/default\/gameserverallocations .*\(request id alloc-1\)$/)]);
  });

  it('an autoscaler scale-up: replicas 1→3 ← the Buffer policy and its figures ← its sync timer', async () => {
    await send('POST', `${NS}/fleets`, fleetManifest('auto', 1, { spec: { health: { disabled: true } } }), 'create-auto');
    await readyCount('auto', 1);
    const fas = {
      apiVersion: 'autoscaling.agones.dev/v1',
      kind: 'FleetAutoscaler',
      metadata: { name: 'auto-fas' },
      spec: { fleetName: 'auto', policy: { type: 'Buffer', buffer: { bufferSize: 1, maxReplicas: 10 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 5 } } },
    };
    await send('POST', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers', fas, 'create-fas');
    await advance(1); // the first sync (on creation) finds 1 Ready = the buffer: nothing to do
    await send('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'auto' } }] } }, 'alloc-auto');
    await until(async () => (await gameServers('auto')).length === 2, 'the autoscaler scaling up');

    const chain = chainOf(await explain('fleet/auto'), /^replicas 1 → 2$/);
    expectChain(chain, [
      /^FleetAutoscaler default\/auto-fas \(Buffer\) decided fleet auto should have 2, had 1 \(.*allocated 1.*bufferSize 1.*maxReplicas 10.*\)$/,
      /^timer autoscaler\.sync \(everySeconds 5\)$/,
    ]);
  });

  it('a reservation expiry: Reserved → Ready ← the reservation timer ← the SDK Reserve request', async () => {
    await send('POST', `${NS}/fleets`, fleetManifest('reserve', 1, { spec: { health: { disabled: true } } }), 'create-reserve');
    await readyCount('reserve', 1);
    const [gs] = await gameServers('reserve');
    const name = gs!.metadata.name;
    await send('POST', `/sdk/default/${name}/reserve`, { seconds: '10' }, 'sdk-reserve');
    await until(async () => (await gameServers('reserve'))[0]!.status.state === 'Ready', 'the reservation to end', 2);

    const history = await explain(`gs/${name}`);
    expectChain(chainOf(history, /^Ready → Reserved/), [/^request POST \/sdk\/default\/.*\/reserve .*\(request id sdk-reserve\)$/]);
    expectChain(chainOf(history, /^Reserved → RequestReady \(Reservation expired\)$/), [/^timer timer\.reservation of GameServer default\/reserve-.* \(due .*\)$/]);
    // The timer was set by the reservation, which the SDK's request made.
    expect(history.changes.findIndex((c) => /^Reserved → RequestReady/.test(c.summary))).toBeGreaterThan(history.changes.findIndex((c) => /^Ready → Reserved/.test(c.summary)));
  });

  it('an Unhealthy from missed health pings: ← the health check timer, naming the last ping and the threshold', async () => {
    const gameServer = {
      apiVersion: 'agones.dev/v1',
      kind: 'GameServer',
      // No simulated process: nothing pings; the test says Ready itself, then stays silent.
      metadata: { name: 'silent', annotations: { 'fleetsim.dev/process-profile': 'none' } },
      spec: {
        ports: [{ name: 'default', containerPort: 7654 }],
        health: { periodSeconds: 5, failureThreshold: 2, initialDelaySeconds: 5 },
        template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
      },
    };
    await send('POST', `${NS}/gameservers`, gameServer, 'create-silent');
    const state = async () => ((await apiRequest(serve.baseUrl, 'GET', `${NS}/gameservers/silent`)).json as { status: { state: string } }).status.state;
    await until(async () => (await state()) === 'Scheduled', 'the GameServer to be scheduled', 0);
    await send('POST', '/sdk/default/silent/ready', {}, 'sdk-ready');
    await until(async () => (await state()) === 'Unhealthy', 'the health check to fail', 2);

    const history = await explain('gs/silent');
    expectChain(chainOf(history, /→ Ready/), [/request id sdk-ready/]);
    expectChain(chainOf(history, /→ Unhealthy/), [/^timer health\.check of GameServer default\/silent \(lastPing .*, periodSeconds 5, failureThreshold 2\)$/]);
  });

  it('a rolling update: the old set scaled down ← the fleet reconciled ← its template changed ← the PATCH request', async () => {
    await send('POST', `${NS}/fleets`, fleetManifest('roll', 2, { spec: { health: { disabled: true } } }), 'create-roll');
    await readyCount('roll', 2);
    const oldNames = new Set((await gameServers('roll')).map((gs) => gs.metadata.name));
    const patch = { spec: { template: { metadata: { labels: { version: 'v2' } } } } };
    await send('PATCH', `${NS}/fleets/roll`, patch, 'roll-v2', 'application/merge-patch+json');
    await until(async () => {
      const now = await gameServers('roll');
      return now.length === 2 && now.every((gs) => !oldNames.has(gs.metadata.name) && gs.status.state === 'Ready');
    }, 'the rolling update');

    const deleted = [...oldNames][0]!;
    const chain = chainOf(await explain(`gs/${deleted}`), /^deleted$/);
    expectChain(chain, [
      /Ready → Shutdown \(Deleted by GameServerSet roll-/,
      /the GameServerSet controller reconciled default\/roll-/,
      /GameServerSet default\/roll-.*: replicas 2 → [01]/,
      // The fleet's Ready count the rollout measured maxUnavailable against.
      /the Fleet controller reconciled default\/roll \(replicas 2, readyReplicas \d\)/,
    ]);
    // Further back, the template change and the request that made it.
    const fleet = await explain('fleet/roll');
    expectChain(chainOf(fleet, /template changed/), [/request PATCH .*fleets\/roll .*\(request id roll-v2\)$/]);
  });

  it('says what is wrong with what it was asked, and answers the server API with Status errors', async () => {
    const unknownKind = await runCli(['explain', 'widget/x', '--db', db]);
    expect(unknownKind.code).toBe(2);
    expect(unknownKind.stderr).toMatch(/doesn't have a resource type "widget"/);
    const noName = await runCli(['explain', 'fleet', '--db', db]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/<kind>\/<name>/);
    const noFile = await runCli(['explain', 'fleet/x', '--db', join(dir, 'missing.db')]);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toMatch(/no event log at/);

    const badSeq = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/log/abc/explain');
    expect(badSeq.status).toBe(400);
    expect((badSeq.json as { message: string }).message).toMatch(/seq: "abc"/);
    const missing = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/log/999999999/explain');
    expect(missing.status).toBe(404);
    const one = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/log/1/explain');
    expect(one.status).toBe(200);
    expect((one.json as Change).because.at(-1)!.text).toMatch(/^start-up: /);
    const clusterScoped = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/explain/namespace/default');
    expect(clusterScoped.status).toBe(200);
    const wrongScope = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/explain/fleet/roll');
    expect(wrongScope.status).toBe(400);
  });
});

const BUSY_SCENARIO = join(REPO_ROOT, 'test', 'fixtures', 'busy-half-hour.yaml');

describe('fleetsim explain on a long log', () => {
  afterAll(() => killAll());

  it('answers other requests while explanations of long histories run: they read a slice at a time', async () => {
    const busy = mkdtempSync(join(tmpdir(), 'fleetsim-explain-busy-'));
    try {
      // A row per event: the server goes on writing the log (a compact one opens read-only).
      const simulated = await runCli(['simulate', BUSY_SCENARIO, '--out', join(busy, 'out'), '--log', 'full'], seconds(180));
      expect(simulated.code, simulated.stderr).toBe(0);
      const server = await startServe(['--db', join(busy, 'out', 'fleetsim.db'), '--no-default-fleet', '--nodes', '20', '--no-listen', '--clock', 'virtual'], seconds(60));
      const sets = await apiRequest(server.baseUrl, 'GET', `${NS}/gameserversets`);
      const set = (sets.json as { items: Array<{ metadata: { name: string } }> }).items[0]!.metadata.name;
      const targets = ['fleetautoscaler/default/game', 'fleet/default/game', `gameserverset/default/${set}`];

      // Twenty explanations at once, of objects with hundreds of changes; a cheap request asked again and again meanwhile.
      const explanationCount = 20;
      let explained = 0;
      const explanations = Promise.all(
        Array.from({ length: explanationCount }, async (_, i) => {
          const res = await apiRequest(server.baseUrl, 'GET', `/fleetsim/v1/explain/${targets[i % targets.length]}`, { timeoutMs: seconds(120) });
          explained++;
          return res;
        }),
      );
      let cheap = 0;
      while (explained < explanationCount) {
        expect((await apiRequest(server.baseUrl, 'GET', '/fleetsim/v1/clock', { timeoutMs: seconds(120) })).status).toBe(200);
        cheap++;
      }
      for (const res of await explanations) {
        expect(res.status, res.text.slice(0, 200)).toBe(200);
        expect((res.json as History).changes.length).toBeGreaterThan(100);
      }
      // The server answers while it reads the log for the explanations: several cheap requests for
      // each one. An explanation that held the event loop until it was done let one through at most.
      expect(cheap, `cheap requests answered while ${explanationCount} explanations ran`).toBeGreaterThanOrEqual(2 * explanationCount);
    } finally {
      await killAll();
      rmSync(busy, { recursive: true, force: true });
    }
  }, seconds(300));
});
