import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../server/log/event-log.js';
import type { GameServerObserved } from '../server/kinds/gameserver/events.js';
import { REPO_ROOT, killAll, runCli } from './helpers/process.js';
import { RecordingReader, doubled } from './helpers/recording.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Issue 39 end to end, as the README's task tells it: scripts/record-scripted-hour.mjs drives a
 * `fleetsim serve` on its virtual clock (allocations, a scale-up by hand, a Buffer autoscaler
 * created and changed, a node lost) while `fleetsim record` records it through a kubeconfig —
 * here eight minutes of it — then everything fleetsim does with a log is done with the
 * recording: replay, explain, serve --read-only, and simulate --from-recording reproducing it
 * within tolerance before comparing three buffers.
 */

const MINUTES = 8;

describe.sequential('a scripted stretch of a cluster, recorded, then replayed, explained, served and simulated', () => {
  let out: string;
  let db: string;
  let driver: string;

  beforeAll(async () => {
    out = tempDir('fleetsim-scripted-');
    db = join(out, 'recording.db');
    const child = spawn(process.execPath, [join(REPO_ROOT, 'scripts', 'record-scripted-hour.mjs'), '--minutes', String(MINUTES), '--out', out, '--no-simulate'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    driver = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (driver += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (driver += chunk));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), seconds(150));
      child.once('close', (status) => {
        clearTimeout(timer);
        resolve(status);
      });
    });
    if (code !== 0) throw new Error(`the scripted run exited ${code}:\n${driver}`);
  }, seconds(180));
  afterAll(() => killAll());

  it('records the cluster while it plays: nothing missed, nothing twice', () => {
    expect(driver).toMatch(/^recording cluster scripted-hour \(context scripted-hour, http:\/\/\S+\) into .*recording\.db: .*; times by the cluster's clock; Ctrl-C stops$/m);
    for (const step of ['scaled up by hand to 6', 'FleetAutoscaler game-buffer created: Buffer 4', 'FleetAutoscaler changed: Buffer 4 -> 8', 'node-1 lost']) expect(driver).toContain(step);
    expect(driver).toMatch(/^recorded \d+ changes \(\d+ objects now\) into .*; stopped: interrupted$/m);
    const listed = JSON.parse(readFileSync(join(out, 'cluster-final.json'), 'utf8')) as string[];
    const reader = new RecordingReader(db);
    try {
      expect(reader.versions()).toEqual(listed);
    } finally {
      reader.close();
    }
    expect(doubled(db)).toEqual([]);
  });

  it('replays: the GameServers the cluster ended with', async () => {
    const replay = await runCli(['replay', db, '-o', 'json']);
    expect(replay.code).toBe(0);
    const names = (JSON.parse(replay.stdout) as { items: Array<{ metadata: { name: string } }> }).items.map((gs) => `GameServer/default/${gs.metadata.name}`).sort();
    const listed = (JSON.parse(readFileSync(join(out, 'cluster-final.json'), 'utf8')) as string[]).filter((v) => v.startsWith('GameServer/')).map((v) => v.split('@')[0]);
    expect(names).toEqual(listed);
  });

  it('explains: the causes stop at the cluster, naming what it said', async () => {
    const log = new EventLog(db, { readonly: true });
    const allocated = [...log.read({ kind: 'GameServer' })].find((e) => e.type === 'GameServerObserved' && (e.payload as GameServerObserved).allocation)!;
    log.close();
    const gs = await runCli(['explain', `gs/${allocated.name}`, '--db', db]);
    expect(gs.code).toBe(0);
    expect(gs.stdout).toMatch(new RegExp(`^#${allocated.seq} \\S+  observed \\(Ready → Allocated\\): allocated$`, 'm'));
    expect(gs.stdout).toMatch(
      /← seen on cluster scripted-hour \(context scripted-hour\) by a watch at \S+, resourceVersion \d+: allocated, the allocation setting labels \{mode: (ctf|deathmatch)\} and annotations \{.*example\.com\/player: p\d+.*\}$/m,
    );
    // Its status moved with every scale: more changes than a screen lists, so every one is asked for.
    const autoscaler = await runCli(['explain', 'fas/game-buffer', '--all', '--db', db]);
    expect(autoscaler.stdout).toMatch(/spec changed \(policy\.buffer\.bufferSize 4 → 8\)\n\s+← seen on cluster scripted-hour/);
    const node = await runCli(['explain', 'node/node-1', '--db', db]);
    expect(node.stdout).toMatch(/deleted\n\s+← seen on cluster scripted-hour \(context scripted-hour\) by a watch/);
  });

  describe('serve --read-only', () => {
    let served: ServeProcess;
    beforeAll(async () => {
      served = await startServe(['--db', db, '--read-only']);
    });

    it('serves the recording: its objects, the dashboard timeline, metrics; and refuses writes', async () => {
      const fleet = (await apiRequest(served.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/fleets/game')).json as { spec: { replicas: number } };
      expect(fleet.spec.replicas).toBeGreaterThan(0);
      const nodes = (await apiRequest(served.baseUrl, 'GET', '/api/v1/nodes')).json as { items: Array<{ metadata: { name: string } }> };
      expect(nodes.items.map((n) => n.metadata.name)).toEqual(['node-2', 'node-3', 'node-4']);
      const page = (await apiRequest(served.baseUrl, 'GET', '/fleetsim/v1/log?limit=5')).json as { first: { seq: number }; last: { seq: number } };
      const middle = Math.floor(page.last.seq / 2);
      const past = (await apiRequest(served.baseUrl, 'GET', `/fleetsim/v1/state?seq=${middle}`)).json as { seq: number; live: boolean };
      expect(past).toMatchObject({ seq: middle, live: false });
      expect((await apiRequest(served.baseUrl, 'GET', '/metrics')).text).toMatch(/^agones_fleets_replicas_count\{.*name="game".*\} \d+$/m);
      const write = await apiRequest(served.baseUrl, 'DELETE', '/api/v1/nodes/node-2');
      expect(write.status).toBe(405);
    });
  });

  it('simulates from the recording: as recorded within tolerance, then three buffers beside it', async () => {
    const simulate = await runCli(['simulate', '--from-recording', db, '--vary', 'autoscaler.buffer.bufferSize=2,4,8', '--out', join(out, 'simulate')], seconds(120));
    expect(simulate.stderr).toBe('');
    expect(simulate.code).toBe(0);
    expect(simulate.stdout).toMatch(/^ {2}allocations served +\d+ +\d+ +±\d+ +PASS$/m);
    expect(simulate.stdout).toMatch(/^ {2}peak replicas +\d+ +\d+ +±\d+ +PASS$/m);
    for (const run of ['recorded', 'as recorded', 'bufferSize=2', 'bufferSize=4', 'bufferSize=8']) expect(simulate.stdout).toMatch(new RegExp(`^ {2}${run} +\\d+ `, 'm'));
    const hours = (variant: string) => (JSON.parse(readFileSync(join(out, 'simulate', variant, 'summary.json'), 'utf8')) as { gameServers: { totalHours: number } }).gameServers.totalHours;
    // A bigger buffer keeps more GameServers.
    expect(hours('bufferSize-2')).toBeLessThan(hours('bufferSize-8'));
    const checks = (JSON.parse(readFileSync(join(out, 'simulate', 'recording.json'), 'utf8')) as { checks: Array<{ pass: boolean }> }).checks;
    expect(checks.map((c) => c.pass)).toEqual([true, true]);
  });
});
