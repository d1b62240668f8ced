import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunData } from '../reports/run-data.js';
import { K6 } from './helpers/k6.js';
import { cleanEnv, killAll, runCli } from './helpers/process.js';
import { seconds } from './helpers/time-scale.js';
import { skipWithout } from './helpers/tools.js';

/**
 * `fleetsim bench` end to end, as CI runs it: each scenario for a few seconds with the real k6
 * against a fresh `fleetsim serve`, small fleets and rates. Each run must pass its k6 thresholds
 * (exit code 0, `ok: true` in run.json) and leave a report with charts. The latency thresholds
 * are loosened with --p99-ms: CI shares two cores with other end-to-end tests, and a p99 of a
 * few hundred samples is one slow request; `npm run bench` holds the real targets.
 */

const runs = mkdtempSync(join(tmpdir(), 'fleetsim-bench-e2e-'));
afterAll(async () => {
  await killAll();
  rmSync(runs, { recursive: true, force: true });
});

async function bench(scenario: string, args: string[]): Promise<{ dir: string; data: RunData; stdout: string }> {
  const dir = join(runs, scenario);
  const result = await runCli(['bench', scenario, '--out', dir, ...args], seconds(100), cleanEnv({ FLEETSIM_K6: K6.path }));
  const output = `exit ${result.code} signal ${result.signal}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
  expect(result.code, output).toBe(0);
  expect(existsSync(join(dir, 'run.json')), output).toBe(true);
  const data = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunData;
  expect(data.ok, output).toBe(true);
  expect(data.fleetsim.thresholds.length).toBeGreaterThan(0);
  expect(data.fleetsim.thresholds.every((t) => t.ok)).toBe(true);
  // The server's own figures and the fleet over time come from /proc and the event log.
  expect(data.server!.eventsCommitted).toBeGreaterThan(0);
  expect(data.server!.memory.length).toBeGreaterThan(0);
  expect(data.fleet.length).toBeGreaterThan(0);
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  // Charts drawn into the page itself: inline SVG, no script to run, nothing to fetch.
  expect(html).toMatch(/<svg class="chart" role="img" aria-label="Request rate over time"/);
  expect(html).not.toMatch(/<script|<link|\bsrc=|\bhref=/i);
  return { dir, data, stdout: result.stdout };
}

describe('fleetsim bench with the real k6', () => {
  skipWithout(K6);

  it('allocation-throughput: allocations through both endpoints against a churning fleet, with the baseline', { timeout: seconds(120) }, async () => {
    const { data, stdout } = await bench('allocation-throughput', [
      '--duration', '3s', '--rate', '40', '--vus', '10', '--fleet-size', '60', '--session', '1', '--p99-ms', '1000', '--baseline',
    ]);
    expect(data.fleetsim.outcomes.Allocated).toBeGreaterThan(0);
    expect(data.fleetsim.outcomes.error).toBe(0);
    expect(data.fleetsim.requestRate).toBeGreaterThan(0);
    expect(data.baseline?.requestRate).toBeGreaterThan(0);
    expect(data.baselineRatio).toBeGreaterThan(0);
    expect(stdout).toMatch(/ratio \d+\.\d+/);
    // Allocated game servers shut down after their 1 s session and the fleet replaces them.
    expect(data.server!.eventsCommitted).toBeGreaterThan(data.fleetsim.outcomes.Allocated!);
  });

  it('watch-fanout: every change reaches its watchers, on fleetsim and on the baseline', { timeout: seconds(120) }, async () => {
    const { data } = await bench('watch-fanout', ['--duration', '3s', '--rate', '10', '--vus', '20', '--fleet-size', '5', '--p99-ms', '1000', '--baseline']);
    expect(data.watchDelivery!.count).toBeGreaterThan(0);
    expect(data.watchDelivery!.histogram.length).toBeGreaterThan(0);
    for (const target of [data.fleetsim, data.baseline!]) {
      expect(target.outcomes.delivered).toBeGreaterThan(0);
      // Each change reaches the 4 sockets watching its game server; a change that lands as a
      // late watcher connects, or after the sockets close, is not counted: allow a little slack.
      expect(target.outcomes.delivered).toBeGreaterThanOrEqual(Math.floor(target.outcomes.expectedDeliveries! * 0.9));
      expect(target.outcomes.delivered).toBeLessThanOrEqual(target.outcomes.expectedDeliveries!);
      expect(target.outcomes.socketErrors).toBe(0);
    }
  });

  it('sidecar-lifecycle: VUs live whole game-server lives through the sidecar', { timeout: seconds(120) }, async () => {
    const { data } = await bench('sidecar-lifecycle', ['--duration', '3s', '--vus', '4', '--session', '1', '--p99-ms', '1000']);
    expect(data.fleetsim.outcomes.completed).toBeGreaterThan(0);
    expect(data.fleetsim.outcomes.failed).toBe(0);
  });

  it("agones-scenario: Agones's fixed scenario, scaled down to seconds", { timeout: seconds(120) }, async () => {
    const { data } = await bench('agones-scenario', ['--duration', '3s', '--fleet-size', '60', '--p99-ms', '1000']);
    expect(data.fleetsim.outcomes.Allocated).toBeGreaterThan(0);
    expect(data.options.timeScale).toBeCloseTo(3 / 4200);
  });
});
