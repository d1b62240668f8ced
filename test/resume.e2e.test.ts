import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { fleetManifest } from './helpers/manifests.js';
import { tempDir } from './helpers/temp-dir.js';
import { eventsIn } from './helpers/log-file.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Resuming a log and starting over: serve says which it does, `--fresh` keeps the old log under
 * a dated name, a virtual clock goes on from the log's last event, and flags that describe
 * another world than the log's are refused before anything is written.
 */

afterEach(() => killAll());

const NS = '/apis/agones.dev/v1/namespaces/default';
const NODE_POOLS = join(REPO_ROOT, 'examples', 'node-pools.yaml');

async function createFleet(serve: ServeProcess, name: string): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'POST', `${NS}/fleets`, { body: fleetManifest(name, 1) });
  expect(res.status, res.text).toBe(201);
}

async function stop(serve: ServeProcess): Promise<void> {
  expect(await serve.process.kill('SIGTERM', seconds(15)), serve.process.describe()).toEqual({ code: 0, signal: null });
}

/** The line serve prints when it opens an existing log. */
function resumingLine(db: string): string {
  const events = eventsIn(db);
  return `resuming ${db}: ${events.length} events, last at ${new Date(events.at(-1)!.time).toISOString()}\n`;
}

/** Starts serve on `db` with `flags` and expects it refused as a usage error, in one line, with nothing written. */
async function expectRefused(db: string, flags: string[], message: RegExp): Promise<void> {
  const before = eventsIn(db);
  const run = await runCli(['serve', '--port', '0', '--db', db, ...flags], seconds(30));
  expect(run.code, run.stdout + run.stderr).toBe(2);
  expect(run.stdout).toBe(resumingLine(db));
  expect(run.stderr.split('\n')).toHaveLength(2);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).toMatch(/add --fresh to start a new log\n$/);
  expect(eventsIn(db)).toEqual(before);
}

describe('fleetsim serve on an existing log', () => {
  it('says whether it starts a new log or resumes one, with its events and their last time', async () => {
    const db = join(tempDir('fleetsim-resume-'), 'fleetsim.db');
    const first = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    expect(first.process.stdout.split('\n')[0]).toBe(`new log ${db}`);
    await createFleet(first, 'kept');
    await stop(first);

    const expected = resumingLine(db);
    const again = await startServe(['--db', db, '--no-default-fleet', '--no-listen']);
    expect(again.process.stdout.startsWith(expected), again.process.stdout).toBe(true);
  });

  it('starts over with --fresh, keeping the old log beside the new one under a dated name', async () => {
    const dir = tempDir('fleetsim-resume-');
    const db = join(dir, 'fleetsim.db');
    const old = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    await createFleet(old, 'old');
    // Not while another serve writes it: refused before anything moves.
    const meanwhile = await runCli(['serve', '--port', '0', '--db', db, '--fresh']);
    expect(meanwhile.code).toBe(1);
    expect(readdirSync(dir).filter((file) => file.startsWith('fleetsim-'))).toEqual([]);
    await stop(old);
    const oldEvents = eventsIn(db);

    const fresh = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen', '--fresh']);
    const kept = new RegExp(`^--fresh: kept the old log \\(${oldEvents.length} events\\) as (${dir}/fleetsim-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.db)\\nnew log ${db}\\n`).exec(fresh.process.stdout);
    expect(kept, fresh.process.stdout).not.toBeNull();
    expect((await apiRequest(fresh.baseUrl, 'GET', `${NS}/fleets/old`)).status).toBe(404);
    // The old log is whole by itself (checkpointed: no write-ahead file of its own is needed).
    const keptLog = kept![1]!;
    expect(existsSync(`${keptLog}-wal`)).toBe(false);
    expect(eventsIn(keptLog)).toEqual(oldEvents);
    const replayed = await runCli(['replay', keptLog]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(/default +old-/);
  });

  it('continues a virtual clock from the last event of a log the real clock wrote', async () => {
    const db = join(tempDir('fleetsim-resume-'), 'fleetsim.db');
    const real = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    await createFleet(real, 'then');
    await stop(real);
    const last = eventsIn(db).at(-1)!.time;

    const virtual = await startServe(['--db', db, '--no-default-fleet', '--no-listen', '--clock', 'virtual']);
    const clock = await apiRequest(virtual.baseUrl, 'GET', '/fleetsim/v1/clock');
    expect(clock.json).toEqual({ kind: 'virtual', now: new Date(last).toISOString() });
  });

  it('refuses flags that describe another world than the log: plain nodes against node pools, fewer nodes, another pod capacity', async () => {
    const dir = tempDir('fleetsim-resume-');
    const db = join(dir, 'fleetsim.db');
    await stop(await startServe(['--db', db, '--no-default-fleet', '--nodes', '2', '--no-listen']));

    await expectRefused(db, ['--node-pools', NODE_POOLS], /^fleetsim serve: --node-pools: the log has 2 plain nodes \(from --nodes\), not node pools/);
    await expectRefused(db, ['--nodes', '1'], /^fleetsim serve: --nodes 1: the log has 2 nodes, and serve removes none/);
    await expectRefused(db, ['--max-pods', '50'], /^fleetsim serve: --max-pods 50: the log's nodes take 110 pods each/);

    // Started over, the same flags are welcome.
    const pools = await startServe(['--db', db, '--no-default-fleet', '--no-listen', '--fresh', '--node-pools', NODE_POOLS]);
    const nodes = (await apiRequest(pools.baseUrl, 'GET', '/api/v1/nodes')).json as { items: Array<{ metadata: { name: string } }> };
    expect(nodes.items.map((node) => node.metadata.name)).toEqual(['default-1']);
    await stop(pools);

    await expectRefused(db, [], /^fleetsim serve: the log's nodes come from node pools \(default\): resume it with --node-pools FILE/);
    await expectRefused(db, ['--nodes', '3'], /^fleetsim serve: --nodes: the log's nodes come from node pools \(default\)/);
    const overflowOnly = join(dir, 'overflow.yaml');
    writeFileSync(overflowOnly, 'apiVersion: fleetsim.dev/v1alpha1\nkind: NodePool\nmetadata: { name: overflow }\nspec: { maxNodes: 2 }\n');
    await expectRefused(db, ['--node-pools', overflowOnly], /^fleetsim serve: --node-pools: the log has nodes of pool "default", which the file does not declare/);
    const smaller = join(dir, 'smaller.yaml');
    writeFileSync(smaller, 'apiVersion: fleetsim.dev/v1alpha1\nkind: NodePool\nmetadata: { name: default }\nspec: { maxNodes: 2, minNodes: 1, podsPerNode: 30 }\n');
    await expectRefused(db, ['--node-pools', smaller], /^fleetsim serve: --node-pools: pool "default" has podsPerNode 30, but its nodes in the log take 110 pods/);
    // The same pools resume it.
    await stop(await startServe(['--db', db, '--no-default-fleet', '--no-listen', '--node-pools', NODE_POOLS]));
  }, seconds(300)); // eleven serves, one after another

  it('refuses the real clock on a log a virtual clock moved past the wall clock', async () => {
    const db = join(tempDir('fleetsim-resume-'), 'fleetsim.db');
    const virtual = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen', '--clock', 'virtual']);
    const ahead = Math.ceil((Date.now() - Date.UTC(2026, 0, 1)) / 1000) + 365 * 24 * 3600;
    const moved = await apiRequest(virtual.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: ahead } });
    expect(moved.status, moved.text).toBe(200);
    await createFleet(virtual, 'later');
    await stop(virtual);
    expect(eventsIn(db).at(-1)!.time).toBeGreaterThan(Date.now());

    await expectRefused(db, [], /^fleetsim serve: --clock real: the log's last event is at .*, ahead of the wall clock .*: resume it with --clock virtual/);
    await stop(await startServe(['--db', db, '--no-default-fleet', '--no-listen', '--clock', 'virtual']));
  });
});
