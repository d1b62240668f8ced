import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, killAll, runCli, startCli } from './helpers/process.js';
import { apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `fleetsim simulate` as a user runs it: the real CLI on a scenario file, its report and log
 * read back. A Chain autoscaler (a bigger buffer from 01:00 to 02:00, a small one otherwise)
 * shows the scenario runs Agones's policies on the virtual clock; the same scenario twice gives
 * the same log byte for byte; --vary compares, its variants in processes of their own writing
 * what a run of one after another writes; progress is told within seconds; the compact log
 * every run keeps by default is read as a full one is; a bad scenario runs nothing.
 */

const dir = tempDir('fleetsim-simulate-');

const SCENARIO = `apiVersion: fleetsim.dev/v1alpha1
kind: Scenario
metadata: { name: evening }
spec:
  duration: 3h
  seed: 21
  start: "2026-04-01T00:00:00Z"
  nodes: 5
  resources:
    - apiVersion: agones.dev/v1
      kind: Fleet
      metadata: { name: game }
      spec:
        replicas: 2
        template:
          spec:
            ports: [{ name: default, containerPort: 7654 }]
            template: { spec: { containers: [{ name: game, image: game:1 }] } }
    - apiVersion: autoscaling.agones.dev/v1
      kind: FleetAutoscaler
      metadata: { name: game }
      spec:
        fleetName: game
        sync: { type: FixedInterval, fixedInterval: { seconds: 10 } }
        policy:
          type: Chain
          chain:
            - id: happy-hour
              type: Schedule
              schedule:
                between: { start: "2026-04-01T01:00:00Z", end: "2026-04-01T02:00:00Z" }
                policy: { type: Buffer, buffer: { bufferSize: 40, maxReplicas: 200 } }
            - id: default
              type: Buffer
              buffer: { bufferSize: 3, maxReplicas: 200 }
  demand:
    arrivals: { type: steps, steps: [{ at: 0h, rate: 0.2 }, { at: 1h, rate: 0.6 }, { at: 2h, rate: 0.2 }] }
    allocation:
      spec:
        selectors: [{ matchLabels: { agones.dev/fleet: game } }]
    retry: { interval: 2s, timeout: 30s }
  sessions:
    length: { distribution: exponential, mean: 5m }
  prices: { nodeHour: 0.5, gameServerHour: 0.02, currency: EUR }
`;
const scenarioFile = join(dir, 'evening.yaml');
writeFileSync(scenarioFile, SCENARIO);

interface Summary {
  variant: string | null;
  allocations: { requests: number; allocated: number; failed: number };
  waitSeconds: { p99: number } | null;
  nodes: { nodeHours: number };
  gameServers: { readyHours: number; totalHours: number };
  cost: { currency: string; nodes: number; gameServers: number; total: number };
  autoscaler: { decisions: Array<{ t: number; from: number; to: number }> };
  events: number;
}

const summaryOf = (out: string): Summary => JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;

afterAll(killAll);

describe('fleetsim simulate', () => {
  it('runs a scenario and writes its report and a log that explains', async () => {
    const out = join(dir, 'run-1');
    const run = await runCli(['simulate', scenarioFile, '--out', out], seconds(120));
    expect(run.code, run.stderr).toBe(0);
    for (const file of ['summary.json', 'summary.md', 'index.html', 'timing.json', 'fleetsim.db']) expect(existsSync(join(out, file)), file).toBe(true);
    const summary = summaryOf(out);
    expect(summary.allocations.requests).toBeGreaterThan(2000);
    expect(summary.allocations.allocated + summary.allocations.failed).toBeLessThanOrEqual(summary.allocations.requests);
    expect(summary.allocations.allocated).toBeGreaterThan(summary.allocations.requests * 0.9);
    // Prices: node-hours at 0.5 and GameServer-hours at 0.02.
    expect(summary.nodes.nodeHours).toBe(15);
    expect(summary.cost.currency).toBe('EUR');
    expect(summary.cost.nodes).toBeCloseTo(7.5, 6);
    expect(summary.cost.gameServers).toBeCloseTo(summary.gameServers.totalHours * 0.02, 3);
    // The Chain's scheduled entry rules from 01:00: at its first sync the fleet grows by the bigger buffer …
    const decisions = summary.autoscaler.decisions;
    const first = decisions.find((d) => d.t >= 3600)!;
    expect(first.t).toBeLessThanOrEqual(3600 + 10);
    expect(first.to - first.from).toBeGreaterThanOrEqual(30);
    expect(decisions.filter((d) => d.t < 3600).every((d) => Math.abs(d.to - d.from) < 30)).toBe(true);
    // … and the default entry takes over again at 02:00: it shrinks by about as much.
    expect(decisions.some((d) => d.t >= 7200 && d.t <= 7200 + 10 && d.from - d.to >= 20)).toBe(true);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('<svg class="chart"');
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('| gave up |');

    // The run's log explains like any other: the autoscaler's decisions, with the entry that ruled.
    const explained = await runCli(['explain', 'fas/game', '--all', '--db', join(out, 'fleetsim.db')], seconds(30));
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toContain('happy-hour');
    const allocation = await runCli(['explain', 'fleet/game', '--db', join(out, 'fleetsim.db')], seconds(30));
    expect(allocation.code, allocation.stderr).toBe(0);
    const replayed = await runCli(['replay', join(out, 'fleetsim.db')], seconds(30));
    expect(replayed.code, replayed.stderr).toBe(0);

    // The same scenario and seed: the same log, byte for byte, and the same report.
    const again = join(dir, 'run-2');
    const second = await runCli(['simulate', scenarioFile, '--out', again], seconds(120));
    expect(second.code, second.stderr).toBe(0);
    for (const file of ['fleetsim.db', 'summary.json', 'summary.md', 'index.html']) {
      expect(readFileSync(join(again, file)).equals(readFileSync(join(out, file))), file).toBe(true);
    }
  }, seconds(360));

  it('--vary runs each value with the same players and compares them', async () => {
    const out = join(dir, 'vary');
    // Two simulations: twice the patience of one.
    const run = await runCli(['simulate', scenarioFile, '--out', out, '--vary', 'autoscaler.chain.1.buffer.bufferSize=1,20'], seconds(240));
    expect(run.code, run.stderr).toBe(0);
    const summaries = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary[];
    expect(summaries.map((s) => s.variant)).toEqual(['bufferSize=1', 'bufferSize=20']);
    // The same players asked in both; the bigger buffer costs more and makes them wait less.
    expect(summaries[0]!.allocations.requests).toBe(summaries[1]!.allocations.requests);
    expect(summaries[1]!.gameServers.readyHours).toBeGreaterThan(summaries[0]!.gameServers.readyHours);
    expect(summaries[1]!.cost.total).toBeGreaterThan(summaries[0]!.cost.total);
    expect(summaries[1]!.waitSeconds!.p99).toBeLessThanOrEqual(summaries[0]!.waitSeconds!.p99);
    const page = readFileSync(join(out, 'index.html'), 'utf8');
    expect(page).toContain('href="bufferSize-1/index.html"');
    expect(page).toContain('The trade-off: cost against players who gave up');
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toMatch(/\| bufferSize=20 \|/);
    for (const variant of ['bufferSize-1', 'bufferSize-20']) expect(existsSync(join(out, variant, 'fleetsim.db'))).toBe(true);
  }, seconds(300));

  it('runs variants in processes of their own and writes what one run after another writes, byte for byte', async () => {
    const vary = ['--vary', 'autoscaler.chain.1.buffer.bufferSize=1,20,5'];
    const serial = join(dir, 'jobs-1');
    const parallel = join(dir, 'jobs-2');
    const one = await runCli(['simulate', scenarioFile, '--out', serial, '--jobs', '1', ...vary], seconds(300));
    expect(one.code, one.stderr).toBe(0);
    // Three variants, two processes: one of them runs a second variant when its first is done.
    const two = await runCli(['simulate', scenarioFile, '--out', parallel, '--jobs', '2', ...vary], seconds(300));
    expect(two.code, two.stderr).toBe(0);
    expect(two.stdout).toContain('simulating 3 variants, 2 at a time');
    expect(two.stdout).toMatch(/^ {2}bufferSize=20: report: /m);
    const files = ['summary.json', 'summary.md', 'index.html'];
    for (const variant of ['bufferSize-1', 'bufferSize-20', 'bufferSize-5']) files.push(...['fleetsim.db', 'summary.json', 'summary.md', 'index.html'].map((f) => join(variant, f)));
    for (const file of files) expect(readFileSync(join(parallel, file)).equals(readFileSync(join(serial, file))), file).toBe(true);
  }, seconds(600));

  it('tells its progress within seconds of starting: simulated time, share done, events/s and time to go', async () => {
    // A day takes minutes on a busy machine; its first progress line comes in about a second of its
    // start (the figure is a benchmark's to tell): here, generously, well before the day is done.
    const run = startCli(['simulate', join(REPO_ROOT, 'examples', 'simulate', 'diurnal.yaml'), '--out', join(dir, 'progress')]);
    await run.waitForStdout(/^ {2}\d+(\.\d)? h of 24 h \(\d+%\) in \d+\.\d s, [\d,]+ events\/s, about \d+ (s|min) to go$/m, seconds(30));
    await run.kill('SIGKILL');
  }, seconds(120));

  it('keeps a compact log by default, a fraction of a full one, that replay, explain and serve --read-only read alike', async () => {
    const hour = join(dir, 'hour.yaml');
    writeFileSync(hour, SCENARIO.replace('duration: 3h', 'duration: 1h').replace(/steps: \[.*\]/, 'steps: [{ at: 0h, rate: 0.5 }]'));
    const runs = { full: join(dir, 'log-full'), compact: join(dir, 'log-compact'), none: join(dir, 'log-none') };
    for (const [detail, out] of Object.entries(runs)) {
      const run = await runCli(['simulate', hour, '--out', out, ...(detail === 'compact' ? [] : ['--log', detail])], seconds(120));
      expect(run.code, run.stderr).toBe(0);
    }
    const full = join(runs.full, 'fleetsim.db');
    const compact = join(runs.compact, 'fleetsim.db');
    expect(statSync(compact).size).toBeLessThan(statSync(full).size / 5);
    // Every event kept: the same cluster rebuilt, at the end and midway, and the same histories.
    const summary = summaryOf(runs.compact);
    const same = async (args: string[]) => {
      const [a, b] = [await runCli([...args, full], seconds(60)), await runCli([...args, compact], seconds(60))];
      expect(a.code, a.stderr).toBe(0);
      expect(b.stdout, args.join(' ')).toBe(a.stdout);
      return a.stdout;
    };
    const replayed = await same(['replay']);
    await same(['replay', '--until', '2026-04-01T00:30:00Z']);
    await same(['explain', 'fleet/game', '--all', '--db']);
    const gameServer = /^default\s+(game-\S+)/m.exec(replayed)![1]!;
    await same(['explain', `gs/${gameServer}`, '--db']);
    // The dashboard's log pages and its view of the past, served from either.
    const served = [await startServe(['--db', full, '--read-only']), await startServe(['--db', compact, '--read-only'])];
    try {
      const [fromFull, fromCompact] = await Promise.all(
        served.map(async ({ baseUrl }) => {
          const get = async (path: string) => (await apiRequest(baseUrl, 'GET', path)).json;
          return [await get('/fleetsim/v1/log?limit=5'), await get('/fleetsim/v1/log?limit=3&fromSeq=100'), await get(`/fleetsim/v1/state?seq=${Math.floor(summary.events / 2)}`)];
        }),
      );
      expect(fromCompact).toEqual(fromFull);
      expect((fromCompact![0] as { last: { seq: number } }).last.seq).toBe(summary.events);
      // explain --server answers the window the flags ask for, as --db does.
      const asked = await runCli(['explain', 'fleet/game', '--tail', '3', '--server', served[1]!.baseUrl], seconds(60));
      expect(asked.stdout).toBe((await runCli(['explain', 'fleet/game', '--tail', '3', '--db', compact], seconds(60))).stdout);
    } finally {
      for (const { process } of served) await process.kill();
    }
    // A compact log is a finished run's record: it opens read-only.
    const writable = await runCli(['serve', '--db', compact, '--port', '0'], seconds(60));
    expect(writable.code).not.toBe(0);
    expect(writable.stderr).toContain('is a compact log');
    // --log none: the same figures, no log.
    expect(existsSync(join(runs.none, 'fleetsim.db'))).toBe(false);
    expect(readFileSync(join(runs.none, 'summary.json'), 'utf8')).toBe(readFileSync(join(runs.full, 'summary.json'), 'utf8'));
  }, seconds(600));

  it('explains a long history as a summary, and a stretch of time or its last changes on asking', async () => {
    const out = join(dir, 'explained');
    const run = await runCli(['simulate', scenarioFile, '--out', out], seconds(120));
    expect(run.code, run.stderr).toBe(0);
    const db = join(out, 'fleetsim.db');
    const explain = (...flags: string[]) => runCli(['explain', 'fleet/game', '--db', db, ...flags], seconds(60));

    // Hundreds of changes: a screen of counts, the first and the last, and how to see more.
    const summary = await explain();
    expect(summary.code, summary.stderr).toBe(0);
    const lines = summary.stdout.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(30);
    const total = Number(/^Fleet default\/game: ([\d,]+) changes from 2026-04-01T00:00:00\.000Z to /.exec(lines[0]!)![1]!.replace(/,/g, ''));
    expect(total).toBeGreaterThan(100);
    expect(summary.stdout).toMatch(/^ {4} +[\d,]+ {2}replicas up$/m);
    expect(summary.stdout).toMatch(/^ {4} +[\d,]+ {2}FleetAutoscaler default\/game \(Chain\)$/m);
    expect(summary.stdout).toContain('--tail N lists the last N');
    const all = await explain('--all');
    expect(all.stdout.split('\n').filter((l) => l.startsWith('#'))).toHaveLength(total);

    const changeTimes = (stdout: string) => stdout.split('\n').flatMap((l) => (/^#\d+ (\S+)/.exec(l) ? [Date.parse(/^#\d+ (\S+)/.exec(l)![1]!)] : []));
    // The last three, each with its causes.
    const tail = await explain('--tail', '3');
    expect(tail.stdout).toMatch(new RegExp(`^Fleet default/game: 3 of its ${total.toLocaleString('en')} changes, from `));
    expect(changeTimes(tail.stdout)).toHaveLength(3);
    expect(tail.stdout).toContain('← FleetAutoscaler default/game (Chain) decided');
    // A stretch of time: by the clock, or back from the log's end (3 h after the start).
    const stretch = await explain('--since', '2026-04-01T01:00:00Z', '--until', '2026-04-01T01:02:00Z');
    expect(changeTimes(stretch.stdout).length).toBeGreaterThan(0);
    for (const t of changeTimes(stretch.stdout)) expect(t >= Date.UTC(2026, 3, 1, 1) && t <= Date.UTC(2026, 3, 1, 1, 2)).toBe(true);
    const last = await explain('--since', '2m', '--all');
    expect(changeTimes(last.stdout).length).toBeGreaterThan(0);
    for (const t of changeTimes(last.stdout)) expect(t).toBeGreaterThanOrEqual(Date.UTC(2026, 3, 1, 2, 58) - 1000);
    const none = await explain('--until', '2026-03-01T00:00:00Z');
    expect(none.code).toBe(0);
    expect(none.stdout).toContain(`None of the ${total.toLocaleString('en')} changes`);

    // Bad values: exit 2, naming the flag, nothing read.
    for (const [flags, message] of [
      [['--since', 'yesterday'], '--since: "yesterday" is neither a time'],
      [['--until', '2026-13-01T00:00:00Z'], '--until: "2026-13-01T00:00:00Z" is neither a time'],
      [['--tail', '0'], '--tail: "0" is not a whole number from 1'],
      [['--tail', '3', '--all'], 'give --tail or --all, not both'],
    ] as const) {
      const bad = await explain(...flags);
      expect(bad.code, flags.join(' ')).toBe(2);
      expect(bad.stderr).toContain(message);
    }
  }, seconds(300));

  it('puts several scenario files side by side', async () => {
    const other = join(dir, 'late.yaml');
    writeFileSync(other, SCENARIO.replace('name: evening', 'name: late').replace('seed: 21', 'seed: 22'));
    const out = join(dir, 'files');
    const run = await runCli(['simulate', scenarioFile, other, '--out', out], seconds(240));
    expect(run.code, run.stderr).toBe(0);
    const summaries = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Array<Summary & { seed: number }>;
    expect(summaries.map((s) => [s.variant, s.seed])).toEqual([
      ['evening', 21],
      ['late', 22],
    ]);
    // Each file keeps its own seed, so its own players.
    expect(summaries[0]!.allocations.requests).not.toBe(summaries[1]!.allocations.requests);
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('href="late/index.html"');
  }, seconds(300));

  it('refuses a bad scenario with the file, line and field, and runs nothing', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, SCENARIO.replace('retry: { interval: 2s, timeout: 30s }', 'retry: { every: 2s }'));
    const out = join(dir, 'bad-out');
    const run = await runCli(['simulate', bad, '--out', out], seconds(30));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${bad}:41: spec.demand.retry.every: unknown field (known: interval, timeout)`);
    expect(existsSync(out)).toBe(false);

    // A policy Agones would refuse, in the second variant: the first does not run either.
    const varied = await runCli(['simulate', scenarioFile, '--out', out, '--vary', 'autoscaler.chain.1.buffer.bufferSize=5,0'], seconds(30));
    expect(varied.code).toBe(2);
    expect(varied.stderr).toMatch(/FleetAutoscaler\.autoscaling\.agones\.dev "game" is invalid: spec\.policy\.chain\[1\]\.policy\.buffer\.bufferSize: Invalid value: 0/);
    expect(existsSync(out)).toBe(false);

    const log = await runCli(['simulate', scenarioFile, '--out', out, '--log', 'some'], seconds(30));
    expect(log.code).toBe(2);
    expect(log.stderr).toContain('--log must be one of full, compact, none, not "some"');
    const jobs = await runCli(['simulate', scenarioFile, '--out', out, '--jobs', '0'], seconds(30));
    expect(jobs.code).toBe(2);
    expect(jobs.stderr).toContain('--jobs must be a whole number from 1, not "0"');
    expect(existsSync(out)).toBe(false);
  }, seconds(120));

  it('refuses inputs that would never end, naming the file, the line and the field, and a device for a file, without a crash', async () => {
    const lineOf = (text: string, needle: string) => text.split('\n').findIndex((line) => line.includes(needle)) + 1;
    const variants: Array<{ name: string; from: string; to: string; field: string; says: RegExp }> = [
      { name: 'forever', from: 'duration: 3h', to: 'duration: .inf', field: 'spec.duration', says: /is not a duration/ },
      { name: 'a-year', from: 'duration: 3h', to: 'duration: 8784h', field: 'spec.duration', says: /must be at most 744h/ },
      { name: 'nodes', from: 'nodes: 5', to: 'nodes: 1e9', field: 'spec.nodes', says: /must be at most 10000, not 1000000000/ },
      { name: 'rate', from: '{ at: 1h, rate: 0.6 }', to: '{ at: 1h, rate: 1e9 }', field: 'spec.demand.arrivals.steps[1].rate', says: /is up to 10,800,000,000,000 arrivals; a run takes at most 50,000,000/ },
      { name: 'nanosecond', from: 'nodes: 5', to: 'nodes: 5\n  step: 1ns', field: 'spec.step', says: /must be at least 1ms/ },
      { name: 'millisecond', from: 'nodes: 5', to: 'nodes: 5\n  step: 1ms', field: 'spec.step', says: /steps the clock 10,800,000 times in 3h; at most 10,000,000/ },
      { name: 'retry', from: 'interval: 2s, timeout: 30s', to: 'interval: 1ms, timeout: 30s', field: 'spec.demand.retry.interval', says: /would try 30,000 times/ },
    ];
    for (const { name, from, to, field, says } of variants) {
      const file = join(dir, `${name}.yaml`);
      const text = SCENARIO.replace(from, to);
      writeFileSync(file, text);
      const out = join(dir, `${name}-out`);
      const run = await runCli(['simulate', file, '--out', out], seconds(30));
      expect(run.code, `${name}: ${run.stderr}`).toBe(2);
      expect(run.stderr, name).toContain(`fleetsim simulate: ${file}:${lineOf(text, to.split('\n').pop()!.trim())}: ${field}: `);
      expect(run.stderr, name).toMatch(says);
      expect(existsSync(out), name).toBe(false);
    }

    // A device as the scenario, or as a file the scenario names: refused before anything is read from it.
    const device = await runCli(['simulate', '/dev/zero', '--out', join(dir, 'zero-out')], seconds(30));
    expect(device.code, device.stderr).toBe(2);
    expect(device.stderr).toBe('fleetsim simulate: /dev/zero: cannot read it: not a regular file (a character device)\n');
    const named = join(dir, 'named.yaml');
    const text = SCENARIO.replace('  resources:\n', '  resources:\n    - /dev/zero\n');
    writeFileSync(named, text);
    const resource = await runCli(['simulate', named, '--out', join(dir, 'named-out')], seconds(30));
    expect(resource.code, resource.stderr).toBe(2);
    expect(resource.stderr).toContain(`${named}:${lineOf(text, '- /dev/zero')}: spec.resources[0]: cannot read /dev/zero: not a regular file (a character device)`);
    const large = join(dir, 'large.yaml');
    writeFileSync(large, `${SCENARIO}#${'x'.repeat(2 * 1024 * 1024)}\n`);
    const tooLarge = await runCli(['simulate', large, '--out', join(dir, 'large-out')], seconds(30));
    expect(tooLarge.code, tooLarge.stderr).toBe(2);
    expect(tooLarge.stderr).toContain(`${large}: cannot read it: 2 MiB: more than the 1 MiB fleetsim reads from such a file`);
  }, seconds(300));
});
