import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { fleetManifest, fleetYaml } from './helpers/manifests.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `fleetsim serve --allocator-model agones-batch` as a user starts it: the model's flags, checked
 * and refused by name; a burst of allocations from concurrent clients against replicas whose
 * caches lag, answered only as Agones answers (200, 429, or 500 once every try lost its race),
 * never a GameServer twice; the retries in Agones's histogram; and on the virtual clock, an answer
 * only once time reaches the replica's batch.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const BURST_REPLICAS = 30;

let dir: string | undefined;

afterAll(async () => {
  await killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function readyReplicas(serve: ServeProcess, fleet: string): Promise<{ readyReplicas: number; allocatedReplicas: number }> {
  const res = await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/${fleet}`);
  expect(res.status, res.text).toBe(200);
  return (res.json as { status: { readyReplicas: number; allocatedReplicas: number } }).status;
}

describe('the agones-batch allocator model', () => {
  it('refuses bad model flags, naming the flag', async () => {
    // Five serves start at once and share the machine: each gets twice runCli's usual patience.
    const serve = (...flags: string[]) => runCli(['serve', '--db', ':memory:', '--port', '0', '--no-listen', ...flags], seconds(60));
    const cases: Array<[string[], string]> = [
      [['--allocator-replicas', '2'], '--allocator-replicas goes with --allocator-model agones-batch'],
      [['--allocator-model', 'agones-batch', '--allocator-replicas', '0'], '--allocator-replicas must be a whole number from 1 to 64, not 0'],
      [['--allocator-model', 'agones-batch', '--allocator-replicas', '1.5'], '--allocator-replicas must be a whole number from 1 to 64, not 1.5'],
      [['--allocator-model', 'agones-batch', '--allocator-batch-wait', '0s'], '--allocator-batch-wait must be longer than 0'],
      [['--allocator-model', 'agones-batch', '--allocator-informer-lag', 'soon'], '--allocator-informer-lag: "soon" is not a duration'],
    ];
    const runs = await Promise.all(cases.map(([flags]) => serve(...flags)));
    runs.forEach((run, i) => {
      expect(run.code, cases[i]![0].join(' ')).toBe(2);
      expect(run.stderr).toContain(cases[i]![1]);
    });
  });

  it('answers a burst from concurrent clients as Agones does, never hands out a server twice, and exports the retries', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetsim-allocator-model-'));
    const manifest = join(dir, 'fleet.yaml');
    writeFileSync(manifest, `${fleetYaml('burst', BURST_REPLICAS, { namespace: 'default' })}\n`);
    const serve = await startServe([
      ...['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '-f', manifest],
      ...['--allocator-model', 'agones-batch', '--allocator-replicas', '3', '--allocator-batch-wait', '50ms', '--allocator-informer-lag', '200ms'],
    ]);
    await waitFor(async () => (await readyReplicas(serve, 'burst')).readyReplicas === BURST_REPLICAS, { timeoutMs: seconds(20), intervalMs: 100, what: 'the fleet Ready' });

    const names: string[] = [];
    const unexpected: string[] = [];
    const client = async () => {
      for (let i = 0; i < 3; i++) {
        const res = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', {
          body: { namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'burst' } }] },
          timeoutMs: seconds(15),
        });
        if (res.status === 200) names.push((res.json as { gameServerName: string }).gameServerName);
        else if (res.status === 500) expect(res.json).toMatchObject({ code: 2, message: 'could not update the selected GameServer' });
        else if (res.status !== 429) unexpected.push(`${res.status}: ${res.text}`);
      }
    };
    await Promise.all(Array.from({ length: 12 }, client));

    expect(unexpected).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThan(0);
    await waitFor(async () => (await readyReplicas(serve, 'burst')).allocatedReplicas === names.length, { what: `${names.length} allocated in the fleet's status` });

    const metrics = await (await fetch(`${serve.baseUrl}/metrics`)).text();
    expect(metrics).toContain('# TYPE agones_gameserver_allocations_retry_total histogram');
    const count = /^agones_gameserver_allocations_retry_total_count\{[^}]*status="Success"[^}]*\} (\d+)$/m.exec(metrics);
    expect(count?.[1], metrics.split('\n').filter((l) => l.includes('retry_total')).join('\n')).toBe(String(names.length));
    await serve.process.kill('SIGTERM');
  });

  it('on the virtual clock, answers only once time reaches the replica that holds the request', async () => {
    const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--clock', 'virtual', '--allocator-model', 'agones-batch', '--allocator-replicas', '2']);
    const advance = async (seconds: number) => {
      const res = await apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: seconds } });
      expect(res.status, res.text).toBe(200);
    };
    const created = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('v', 2, { spec: { health: { disabled: true } } }) });
    expect(created.status, created.text).toBe(201);
    // Simulated processes call Ready a few virtual seconds after their pods start.
    await waitFor(
      async () => {
        await advance(1);
        return (await readyReplicas(serve, 'v')).readyReplicas === 2;
      },
      { what: 'the fleet Ready on the virtual clock' },
    );
    // The watch delivers the Ready servers to the replicas' caches a moment after they change.
    await advance(1);
    let answered = false;
    const pending = apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', {
      body: { namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'v' } }] },
    }).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    await advance(0.5);
    const res = await pending;
    expect(res.status, res.text).toBe(200);
    await serve.process.kill('SIGTERM');
  });
});
