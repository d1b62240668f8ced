import { join, resolve } from 'node:path';
import { ALLOCATOR_MODEL_FLAGS, allocatorModelOptions, parseAllocatorModel } from '../server/allocation/allocator-model-flags.js';
import { FlagError, type FlagSpec, type FlagValues, flagsHelp, parseFlags } from '../server/flags.js';
import { runBench } from './bench.js';
import { agonesLoadCommand } from './agones-load.js';
import { formatDuration, parseDuration } from './durations.js';
import { scenarioFileFlag } from './scenario-file.js';
import { runFolder } from './paths.js';
import { REMOTE_FLAGS, remoteTarget } from './remote-target.js';
import { type BenchSettings, SCENARIOS, SCENARIO_NAMES, isScenarioName } from './scenarios.js';

const FLAGS: FlagSpec[] = [
  { name: 'duration', type: 'string', help: 'length of the load (k6 duration: 3s, 30s, 2m); agones-scenario: the whole file scaled to this' },
  { name: 'rate', type: 'number', help: 'allocations/s (allocation-throughput), changes/s (watch-fanout), pings/s per game server (sidecar-lifecycle)' },
  { name: 'vus', type: 'number', help: 'most requests in flight (allocation), WebSocket watchers (watch-fanout), game servers at once (sidecar-lifecycle)' },
  { name: 'fleet-size', type: 'number', help: 'game servers in the fixture fleet' },
  { name: 'session', type: 'number', help: 'seconds an allocated game server plays before it shuts down (a lifecycle VU: its session)' },
  { name: 'p99-ms', type: 'number', help: "the latency p99 (ms) the scenario's threshold allows" },
  { name: 'baseline', type: 'boolean', default: false, help: 'also run the same script against the baseline server and report the ratio' },
  { name: 'out', type: 'string', help: 'run folder (default reports/out/<timestamp>-<scenario>/)' },
  { name: 'scenario-file', type: 'string', help: 'agones-scenario: lines duration,clients,intervalMs (default scenarios/agones/fixed.txt)' },
  { name: 'time-scale', type: 'number', help: 'agones-scenario: multiply every duration in the file by this' },
  { name: 'allocator-model', type: 'string', default: 'exact', help: "the server's allocator: exact, or agones-batch (Agones's allocator: replicas with lagging caches, batches, update conflicts)" },
  ...ALLOCATOR_MODEL_FLAGS,
  { name: 'scrape-metrics', type: 'number', default: 5, help: "seconds between scrapes of fleetsim's /metrics during its run, as Prometheus would (0: none)" },
  { name: 'keep-raw', type: 'boolean', default: false, help: "keep k6's raw JSON output (one line per sample; large) in the run folder" },
  ...REMOTE_FLAGS,
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const BENCH_USAGE = `fleetsim bench <scenario>: a k6 load test against a fresh fleetsim on 127.0.0.1, with a report
(or, with --target-allocator, the allocation scenarios against another cluster's allocator service)

Scenarios:
${SCENARIO_NAMES.map((name) => {
  const d = SCENARIOS[name].defaults;
  const defaults = name === 'agones-scenario' ? `fleet ${d.fleetSize}` : `${d.duration}, rate ${d.rate}, vus ${d.vus}${d.fleetSize ? `, fleet ${d.fleetSize}` : ''}`;
  return `  ${name.padEnd(22)} ${SCENARIOS[name].summary} (defaults: ${defaults})`;
}).join('\n')}

${flagsHelp(FLAGS)}

fleetsim bench agones-load runs Agones's own load tools instead of k6 (fleetsim bench agones-load --help).

k6 is the real one: k6 on the PATH, else the pinned release built by \`npm run setup:k6\` (FLEETSIM_K6 names another binary).`;

function positive(values: FlagValues, name: string, fallback: number, allowZero = false): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) throw new FlagError(`--${name} must be a number ${allowZero ? '>= 0' : '> 0'}`);
  return n;
}

function whole(values: FlagValues, name: string, fallback: number): number {
  const n = positive(values, name, fallback);
  if (!Number.isInteger(n)) throw new FlagError(`--${name} must be a whole number`);
  return n;
}

/** The run's settings from the command line, defaults filled in. */
export function benchSettings(argv: readonly string[]): { settings: BenchSettings; out: string } | 'help' {
  const { values, positional, given } = parseFlags(argv, FLAGS, {});
  if (values.help) return 'help';
  if (positional.length !== 1) throw new FlagError(`name one scenario: ${SCENARIO_NAMES.join(', ')}`);
  const scenario = positional[0]!;
  if (!isScenarioName(scenario)) throw new FlagError(`no scenario "${scenario}"; there are ${SCENARIO_NAMES.join(', ')}`);
  const d = SCENARIOS[scenario].defaults;
  const settings: BenchSettings = {
    scenario,
    duration: '',
    durationSeconds: 0,
    rate: positive(values, 'rate', d.rate),
    vus: whole(values, 'vus', d.vus),
    fleetSize: whole(values, 'fleet-size', d.fleetSize || 1),
    session: positive(values, 'session', d.session || 1),
    p99Ms: positive(values, 'p99-ms', d.p99Ms),
    baseline: values.baseline === true,
    keepRaw: values['keep-raw'] === true,
    scrapeSeconds: positive(values, 'scrape-metrics', 5, true),
    allocator: allocatorModelOptions(parseAllocatorModel(values['allocator-model']), values, given),
  };
  const definition = SCENARIOS[scenario];
  const remote = remoteTarget(values, given, scenario, definition.allocation ? definition.fleet?.name : undefined);
  if (remote) settings.remote = remote;
  if (scenario === 'sidecar-lifecycle') settings.fleetSize = 0;
  if (scenario === 'watch-fanout') settings.session = 0;

  const durationText = values.duration === undefined ? undefined : String(values.duration);
  let durationSeconds: number | undefined;
  if (durationText !== undefined) {
    try {
      durationSeconds = parseDuration(durationText);
    } catch (error) {
      throw new FlagError(`--duration: ${(error as Error).message}`);
    }
    if (!(durationSeconds > 0)) throw new FlagError('--duration must be longer than 0');
  }

  if (scenario === 'agones-scenario') {
    const { file, stages, totalSeconds: total } = scenarioFileFlag(values['scenario-file']);
    if (durationSeconds !== undefined && values['time-scale'] !== undefined) throw new FlagError('give --duration or --time-scale, not both');
    const timeScale = durationSeconds !== undefined ? durationSeconds / total : positive(values, 'time-scale', 1);
    settings.scenarioFile = file;
    settings.stages = stages;
    settings.timeScale = timeScale;
    settings.durationSeconds = total * timeScale;
    settings.duration = formatDuration(Math.round(settings.durationSeconds * 1000) / 1000);
    settings.rate = Math.max(...stages.map((s) => (s.clients * 1000) / s.intervalMs));
  } else {
    if (values['scenario-file'] !== undefined || values['time-scale'] !== undefined) {
      throw new FlagError('--scenario-file and --time-scale are for agones-scenario');
    }
    settings.durationSeconds = durationSeconds ?? parseDuration(d.duration);
    settings.duration = durationText ?? d.duration;
  }

  const out = values.out !== undefined ? resolve(String(values.out)) : runFolder(scenario);
  return { settings, out };
}

export async function benchCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'agones-load') return agonesLoadCommand(argv.slice(1));
  const parsed = benchSettings(argv);
  if (parsed === 'help') {
    console.log(BENCH_USAGE);
    return 0;
  }
  const result = await runBench(parsed.settings, parsed.out, (line) => console.log(line));
  for (const line of result.report) console.log(line);
  console.log(`  run data: ${join(result.dir, 'run.json')}`);
  console.log(`  report:   ${join(result.dir, 'index.html')}`);
  return result.data.ok ? 0 : 1;
}
