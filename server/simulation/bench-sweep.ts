import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMachineLoad, watchMachineLoad } from '../bench/machine-load.js';
import { BenchRun } from '../bench/record.js';
import { REPO_ROOT } from '../../loadtest/paths.js';
import { runSimulations } from './runs.js';
import type { EventLogDetail } from './runner.js';
import { parseVary } from './vary.js';

/**
 * `npm run bench:sweep`: a sweep of four variants of the diurnal day (four buffer sizes), run one
 * after another in one process (`--jobs 1`), then at once in processes of their own (`--jobs`
 * the machine's cores), and the ratio of their wall times. Target (issue 40): the parallel sweep
 * in at most 0.6× the serial one on 2 cores. The two sweeps must write the same reports: a
 * difference fails the run. Then the same two sweeps with no event log (`--log none`): the ratio
 * the simulation itself allows, whatever its log costs. BENCH_SCENARIO=file and
 * BENCH_VARY='path=v1,v2,…' sweep others; BENCH_JOBS sets the parallel sweep's processes.
 */

const scenario = process.env.BENCH_SCENARIO ?? join(REPO_ROOT, 'examples', 'simulate', 'diurnal.yaml');
const vary = parseVary(process.env.BENCH_VARY ?? 'autoscaler.buffer.bufferSize=10,50,100,150');
const jobs = Number(process.env.BENCH_JOBS ?? availableParallelism());
if (!Number.isInteger(jobs) || jobs < 2) throw new Error(`BENCH_JOBS must be a whole number from 2, not ${process.env.BENCH_JOBS}`);

const bench = BenchRun.start('bench:sweep');
const out = mkdtempSync(join(tmpdir(), 'fleetsim-bench-sweep-'));
try {
  const sweep = async (name: string, sweepJobs: number, eventLog: EventLogDetail) => {
    const machine = watchMachineLoad();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await runSimulations({ files: [scenario], vary, out: join(out, name), jobs: sweepJobs, eventLog, log: (line) => console.log(line) });
    const wallSeconds = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpuBefore);
    const load = machine();
    console.log(`${name}: ${vary.values.length} variants, ${sweepJobs} at a time, in ${wallSeconds.toFixed(1)} s; ${describeMachineLoad(load)}`);
    return { wallSeconds, cpuSeconds: (user + system) / 1e6, load, summary: readFileSync(join(out, name, 'summary.json'), 'utf8') };
  };
  /** A sweep one variant at a time, then `jobs` at a time, of the same variants: they must report the same figures. */
  const sweeps = async (eventLog: EventLogDetail, label: string) => {
    const serial = await sweep(`serial${label}`, 1, eventLog);
    const parallel = await sweep(`parallel${label}`, jobs, eventLog);
    if (parallel.summary !== serial.summary) bench.fail(`the parallel sweep${label} reported other figures than the serial one (summary.json differs)`);
    return { serial, parallel };
  };
  const { serial, parallel } = await sweeps('compact', '');
  const what = `${vary.values.length} variants of ${scenario.replace(`${REPO_ROOT}/`, '')} (${vary.path})`;
  bench.figure({ name: `serial sweep: ${what}, wall time`, value: serial.wallSeconds, unit: 's', machine: serial.load });
  // A serial sweep runs in this process: its threads (the log's writer, GC) use part of a second
  // core already, and the parallel sweep can at best share out that CPU over the cores.
  const serialCores = serial.cpuSeconds / serial.wallSeconds;
  bench.figure({ name: 'serial sweep: cores in use (its CPU-seconds ÷ wall time)', value: serialCores, unit: '' });
  bench.figure({ name: `serial sweep's cores in use ÷ ${availableParallelism()} cores: the parallel ratio its CPU allows`, value: serialCores / availableParallelism(), unit: '×' });
  bench.figure({ name: `parallel sweep (${jobs} processes): wall time`, value: parallel.wallSeconds, unit: 's', machine: parallel.load });
  bench.figure({
    name: `parallel sweep's wall time against the serial one's (${availableParallelism()} cores)`,
    value: parallel.wallSeconds / serial.wallSeconds,
    unit: '×',
    target: { bound: 'max', value: 0.6, basis: 'issue 40: four diurnal variants in at most 0.6× the serial time on 2 cores' },
  });
  // Without a log, each variant is the simulation alone: two at once on the machine's cores still
  // cost more CPU each than one alone, and this ratio is the lowest a sweep of them reaches here.
  const { serial: serialBare, parallel: parallelBare } = await sweeps('none', ' with no log');
  bench.figure({ name: 'serial sweep with no event log (--log none): wall time', value: serialBare.wallSeconds, unit: 's', machine: serialBare.load });
  bench.figure({ name: 'serial sweep with no event log: cores in use', value: serialBare.cpuSeconds / serialBare.wallSeconds, unit: '' });
  bench.figure({ name: `parallel sweep with no event log (${jobs} processes): wall time`, value: parallelBare.wallSeconds, unit: 's', machine: parallelBare.load });
  bench.figure({ name: "parallel sweep's wall time against the serial one's, with no event log: the simulation's own floor", value: parallelBare.wallSeconds / serialBare.wallSeconds, unit: '×' });
} finally {
  rmSync(out, { recursive: true, force: true });
}
if (!bench.finish().record.pass) process.exitCode = 1;
