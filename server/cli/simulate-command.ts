import { resolve, join, basename } from 'node:path';
import { FlagError, type FlagSpec, type FlagValues, flagsHelp, parseFlags } from '../flags.js';
import { comparisonLines, recordingScenario, reproductionChecks, writeComparison } from '../simulation/from-recording.js';
import { runSimulations } from '../simulation/runs.js';
import { EVENT_LOG_DETAILS, type EventLogDetail } from '../simulation/runner.js';
import { ScenarioError } from '../simulation/fields.js';
import { parseVary } from '../simulation/vary.js';
import { REPORTS_OUT } from '../../loadtest/paths.js';

const FLAGS: FlagSpec[] = [
  { name: 'out', type: 'string', help: 'report folder (default reports/out/<timestamp>-simulate-<scenario>/)' },
  { name: 'vary', type: 'string', help: "one run per value, e.g. 'autoscaler.buffer.bufferSize=5,10,20,50%'" },
  {
    name: 'from-recording',
    type: 'string',
    help: 'a recording (fleetsim record) instead of a scenario file: its fleets, autoscalers, nodes, changes and demand, run as recorded, then per --vary value',
  },
  {
    name: 'log',
    type: 'string',
    default: 'compact',
    help: "each run's event log: compact (every event, in compressed blocks: replay, explain and serve --read-only read it), full (a row per event), or none",
  },
  { name: 'jobs', alias: 'j', type: 'number', help: 'variants run at once, each in a process of its own (default: the machine\'s cores)' },
  { name: 'node-hour-price', type: 'number', default: 0, help: 'with --from-recording: what a node-hour costs (a recording has no prices)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const SIMULATE_USAGE = `fleetsim simulate <scenario.yaml> [more.yaml …]: a what-if run on the virtual clock, as fast as the machine allows

  Runs the scenario's fleets, autoscalers and nodes with the real controllers and allocator against
  its simulated players, and writes summary.json, summary.md, index.html and the run's log
  (fleetsim.db, compact unless --log says otherwise: replay it, fleetsim explain --db it, or serve
  --read-only it). With --vary or several files, each variant runs with the same seed and players,
  in a process of its own (--jobs at a time), and a comparison page puts them side by side.
  Examples: examples/simulate/.

  With --from-recording out.db (no scenario file), the run as recorded comes first and its figures
  are checked against the recording's (allocations served, peak replicas: PASS or FAIL, exit 1 on a
  FAIL), then every run is set beside the recorded reality. docs/record.md has the whole story.

${flagsHelp(FLAGS)}`;

function eventLogOf(values: FlagValues): EventLogDetail {
  const detail = String(values.log);
  if (!(EVENT_LOG_DETAILS as readonly string[]).includes(detail)) throw new FlagError(`--log must be one of ${EVENT_LOG_DETAILS.join(', ')}, not "${detail}"`);
  return detail as EventLogDetail;
}

/** `--jobs N`: a whole number from 1; undefined when not given (the machine's cores). */
function jobsOf(values: FlagValues): number | undefined {
  if (values.jobs === undefined) return undefined;
  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) throw new FlagError(`--jobs must be a whole number from 1, not "${String(values.jobs)}"`);
  return jobs;
}

function timestamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

export async function simulateCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(SIMULATE_USAGE);
    return 0;
  }
  if (values['from-recording'] !== undefined) return fromRecording(String(values['from-recording']), values, positional);
  if (values['node-hour-price'] !== 0) throw new FlagError('--node-hour-price goes with --from-recording: a scenario file has its own prices');
  if (positional.length === 0) throw new FlagError('simulate needs a scenario file, e.g. fleetsim simulate examples/simulate/diurnal.yaml');
  const vary = values.vary === undefined ? undefined : parseVary(String(values.vary));
  if (vary && positional.length > 1) throw new FlagError('--vary varies one scenario: give one file, or several files and no --vary');
  const jobs = jobsOf(values);
  const eventLog = eventLogOf(values);
  const name = basename(positional[0]!).replace(/\.ya?ml$/, '');
  const out = values.out !== undefined ? resolve(String(values.out)) : join(REPORTS_OUT, `${timestamp(new Date())}-simulate-${name}`);
  try {
    await runSimulations({ files: positional, vary, out, jobs, eventLog, log: (line) => console.log(line) });
  } catch (error) {
    if (error instanceof ScenarioError) {
      console.error(`fleetsim simulate: ${error.message}`);
      return 2;
    }
    throw error;
  }
  return 0;
}

/** `simulate --from-recording DB [--vary …]`: as recorded, checked against the recording, then the variants beside it. */
async function fromRecording(db: string, values: FlagValues, positional: string[]): Promise<number> {
  if (positional.length > 0) throw new FlagError(`--from-recording takes no scenario file (got "${positional[0]}")`);
  const price = Number(values['node-hour-price']);
  if (!(price >= 0)) throw new FlagError('--node-hour-price must be a number >= 0');
  const jobs = jobsOf(values);
  const eventLog = eventLogOf(values);
  const out = values.out !== undefined ? resolve(String(values.out)) : join(REPORTS_OUT, `${timestamp(new Date())}-simulate-recording-${basename(db).replace(/\.db$/, '')}`);
  try {
    const vary = values.vary === undefined ? undefined : parseVary(String(values.vary));
    const recording = recordingScenario(db, { nodeHourPrice: price });
    const summaries = await runSimulations({ files: [], recording: { db, nodeHourPrice: price }, vary, out, jobs, eventLog, log: (line) => console.log(line) });
    const checks = reproductionChecks(recording.history, summaries[0]!);
    const lines = comparisonLines(recording.history, checks, summaries, price);
    writeComparison(out, recording.history, checks, lines);
    console.log('');
    for (const line of lines) console.log(line);
    if (checks.every((c) => c.pass)) return 0;
    console.error('fleetsim simulate: the run as recorded does not reproduce the recording within tolerance (FAIL above): read the variants with care');
    return 1;
  } catch (error) {
    if (error instanceof ScenarioError) {
      console.error(`fleetsim simulate: ${error.message}`);
      return 2;
    }
    throw error;
  }
}
