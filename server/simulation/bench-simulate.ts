import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { watchMachineLoad } from '../bench/machine-load.js';
import { join } from 'node:path';
import type { SimulationTiming } from '../../reports/simulation-data.js';
import { REPO_ROOT } from '../../loadtest/paths.js';
import { runSimulations } from './runs.js';

/**
 * `npm run bench:simulate`: a whole simulated day, as fast as the machine allows (it lives beside
 * the simulation it measures: the bench floor sits below it). Runs examples/simulate/bench-day.yaml
 * (a fleet peaking at ~10,000 GameServers, one 20-minute session each) and bench-day-rooms.yaml
 * (the same peak with 6 rooms per server: ~50 allocations/s), and prints for each the wall time,
 * simulated seconds per wall second and peak memory. Target: each day in under 60 s.
 * BENCH_SCENARIOS=file,file runs others. The npm script gives V8 a 128 MB young generation:
 * a simulated day makes short-lived objects by the gigabyte.
 */

const TARGET_SECONDS = 60;
const DEFAULT = ['bench-day.yaml', 'bench-day-rooms.yaml'].map((f) => join(REPO_ROOT, 'examples', 'simulate', f));
const files = process.env.BENCH_SCENARIOS ? process.env.BENCH_SCENARIOS.split(',') : DEFAULT;

let ok = true;
for (const file of files) {
  const out = mkdtempSync(join(tmpdir(), 'fleetsim-bench-simulate-'));
  const machine = watchMachineLoad();
  try {
    const [summary] = await runSimulations({ files: [file], out, log: (line) => console.log(line) });
    const timing = JSON.parse(readFileSync(join(out, 'timing.json'), 'utf8')) as SimulationTiming;
    const pass = timing.wallSeconds < TARGET_SECONDS;
    ok &&= pass;
    const a = summary!.allocations;
    console.log(
      `${summary!.scenario}: ${summary!.durationSeconds / 3600} h simulated in ${timing.wallSeconds.toFixed(1)} s wall = ` +
        `${Math.round(timing.speedup)} simulated s per wall s; ${a.requests.toLocaleString('en')} players, ` +
        `${a.allocated.toLocaleString('en')} allocated, peak ${summary!.gameServers.peak.toLocaleString('en')} GameServers, ` +
        `${summary!.events.toLocaleString('en')} events; peak memory ${Math.round(timing.peakRssBytes / 2 ** 20)} MiB RSS, ` +
        `${Math.round(timing.peakHeapBytes / 2 ** 20)} MiB heap; ${machine()}`,
    );
    console.log(`  target: the day in under ${TARGET_SECONDS} s: ${pass ? 'PASS' : 'FAIL'}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
console.log(ok ? 'result: PASS' : 'result: FAIL');
if (!ok) process.exitCode = 1;
