import { runToEnd } from './run-process.js';
import type { AllocatorOptions } from '../server/allocation/allocator.js';
import { ALLOCATOR_MODEL_FLAGS, allocatorModelOptions, describeAllocatorModel, parseAllocatorModel } from '../server/allocation/allocator-model-flags.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../server/flags.js';
import type { AgonesLoadResult, AgonesLoadRun } from '../reports/agones-load-data.js';
import { parseAllocationload, parseRunscenario } from '../reports/agones-load-data.js';
import { agonesLoadSummary, writeAgonesLoadReport } from '../reports/agones-load-report.js';
import { allocatorClientFiles } from './bench.js';
import { formatDuration, parseDuration } from './durations.js';
import { scenarioFileFlag } from './scenario-file.js';
import { countEvents } from './event-log-figures.js';
import { runFolder } from './paths.js';
import { MAX_PODS_PER_NODE, churningFleet, churningFleetNodes, sessionProfile } from './scenarios.js';
import { readAllocatorClient, requestJson, startFleetsim, waitForFleet } from './servers.js';

/**
 * `fleetsim bench agones-load`: Agones's own allocation load tools (test/load/allocation in the
 * Agones repository), built from its source as they are (`go build -mod=vendor`) and run
 * unchanged against a fresh `fleetsim serve --allocator-tls auto`, with the client certificate
 * and address a client reads from the allocator's Secrets and Service:
 *
 *  - `runscenario` (the default): a scenario file of `duration,clients,intervalMs` lines; each
 *    client calls Allocate every interval for the duration. Its durations can be scaled
 *    (--time-scale, --duration): the tool is given a copy of the file with its stages scaled (and
 *    without comments and blank lines, which the tool cannot read);
 *  - `allocationload`: --clients clients each making --per-client calls at once.
 *
 * Both allocate from the namespace `default` with no selector, as they do against a cluster; the
 * fleet there churns (allocated servers shut down after --session s and a Buffer autoscaler
 * replaces them). The rates and errors the tool prints are read back into a report.
 */

const FLEET = 'bench-agones-load';
const TOOLS = ['runscenario', 'allocationload'] as const;
type Tool = (typeof TOOLS)[number];

const FLAGS: FlagSpec[] = [
  { name: 'tool', type: 'string', default: 'runscenario', help: "Agones's tool: runscenario (a scenario file) or allocationload (clients × calls at once)" },
  { name: 'scenario-file', type: 'string', help: 'runscenario: lines duration,clients,intervalMs (default scenarios/agones/fixed.txt)' },
  { name: 'time-scale', type: 'number', help: 'runscenario: multiply every duration in the file by this' },
  { name: 'duration', type: 'string', help: 'runscenario: the whole file scaled to this length (30s, 2m)' },
  { name: 'clients', type: 'number', default: 40, help: 'allocationload: clients allocating in parallel' },
  { name: 'per-client', type: 'number', default: 100, help: 'allocationload: allocations each client makes' },
  { name: 'fleet-size', type: 'number', default: 1000, help: 'Ready game servers the fleet keeps (a Buffer autoscaler refills it)' },
  { name: 'session', type: 'number', default: 10, help: 'seconds an allocated game server plays before it shuts down' },
  { name: 'allocator-model', type: 'string', default: 'exact', help: "the server's allocator: exact, or agones-batch" },
  ...ALLOCATOR_MODEL_FLAGS,
  { name: 'agones-src', type: 'string', env: 'AGONES_SRC', help: 'an extracted Agones tree (with vendor/), where the tool is built' },
  { name: 'rebuild', type: 'boolean', default: false, help: 'build the tool again even if a build is there' },
  { name: 'out', type: 'string', help: 'run folder (default reports/out/<timestamp>-agones-load/)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const AGONES_LOAD_USAGE = `fleetsim bench agones-load: Agones's own allocation load tools (runscenario, allocationload) against a fresh fleetsim

${flagsHelp(FLAGS)}

The tools are Go programs in the Agones repository (test/load/allocation), built with go build -mod=vendor.`;

interface AgonesLoadSettings {
  tool: Tool;
  src: string;
  rebuild: boolean;
  fleetSize: number;
  session: number;
  allocator: AllocatorOptions;
  out: string;
  scenarioFile?: string;
  /** The scenario file's stages, scaled, as the tool is given them. */
  scaledScenario?: string;
  timeScale?: number;
  expectedSeconds: number;
  clients: number;
  perClient: number;
}

function positiveFlag(value: unknown, name: string, whole: boolean): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n))) throw new FlagError(`--${name} must be a ${whole ? 'whole ' : ''}number > 0`);
  return n;
}

export function agonesLoadSettings(argv: readonly string[]): AgonesLoadSettings | 'help' {
  const { values, positional, given } = parseFlags(argv, FLAGS, process.env);
  if (values.help) return 'help';
  if (positional.length > 0) throw new FlagError(`agones-load takes no scenario name (got ${positional.join(' ')}); --tool picks the tool`);
  const tool = String(values.tool);
  if (!(TOOLS as readonly string[]).includes(tool)) throw new FlagError(`--tool must be runscenario or allocationload, not "${tool}"`);
  const src = values['agones-src'] === undefined ? '' : resolve(String(values['agones-src']));
  if (!src || !existsSync(join(src, 'test', 'load', 'allocation', tool))) {
    throw new FlagError('--agones-src (or AGONES_SRC) must name an extracted Agones tree with test/load/allocation and vendor/');
  }
  const allocator = allocatorModelOptions(parseAllocatorModel(values['allocator-model']), values, given);
  const settings: AgonesLoadSettings = {
    tool: tool as Tool,
    src,
    rebuild: values.rebuild === true,
    fleetSize: positiveFlag(values['fleet-size'], 'fleet-size', true),
    session: positiveFlag(values.session, 'session', false),
    allocator,
    out: values.out !== undefined ? resolve(String(values.out)) : runFolder('agones-load'),
    expectedSeconds: 0,
    clients: positiveFlag(values.clients, 'clients', true),
    perClient: positiveFlag(values['per-client'], 'per-client', true),
  };
  const scenarioFlags = ['scenario-file', 'time-scale', 'duration'].filter((f) => values[f] !== undefined);
  if (tool === 'allocationload') {
    if (scenarioFlags.length > 0) throw new FlagError(`--${scenarioFlags[0]} is for --tool runscenario`);
    settings.expectedSeconds = 60 + (settings.clients * settings.perClient) / 100;
    return settings;
  }
  const { file, stages, totalSeconds: total } = scenarioFileFlag(values['scenario-file']);
  if (values.duration !== undefined && values['time-scale'] !== undefined) throw new FlagError('give --duration or --time-scale, not both');
  let timeScale = 1;
  if (values['time-scale'] !== undefined) timeScale = positiveFlag(values['time-scale'], 'time-scale', false);
  if (values.duration !== undefined) {
    try {
      timeScale = parseDuration(String(values.duration)) / total;
    } catch (error) {
      throw new FlagError(`--duration: ${(error as Error).message}`);
    }
    if (!(timeScale > 0)) throw new FlagError('--duration must be longer than 0');
  }
  settings.scenarioFile = file;
  settings.timeScale = timeScale;
  settings.scaledScenario = stages.map((s) => `${formatDuration(Math.round(s.seconds * timeScale * 1000) / 1000)},${s.clients},${s.intervalMs}`).join('\n');
  settings.expectedSeconds = total * timeScale + 60;
  return settings;
}

/** The tool's binary, built from the Agones tree unless a build is there already. */
export function buildTool(settings: Pick<AgonesLoadSettings, 'src' | 'tool' | 'rebuild'>, log: (line: string) => void): string {
  const binary = join(settings.src, '.fleetsim', settings.tool);
  if (existsSync(binary) && !settings.rebuild) return binary;
  mkdirSync(join(settings.src, '.fleetsim'), { recursive: true });
  log(`  building Agones's ${settings.tool} (go build -mod=vendor ./test/load/allocation/${settings.tool})…`);
  execFileSync('go', ['build', '-mod=vendor', '-o', binary, `./test/load/allocation/${settings.tool}`], { cwd: settings.src, stdio: 'inherit' });
  return binary;
}

export async function runAgonesLoad(settings: AgonesLoadSettings, log: (line: string) => void): Promise<AgonesLoadRun> {
  const dir = settings.out;
  mkdirSync(dir, { recursive: true });
  const binary = buildTool(settings, log);
  const startedAt = new Date();
  const dbPath = join(dir, 'events.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
  const manifests = join(dir, 'fixture.yaml');
  writeFileSync(manifests, churningFleet(FLEET, settings.fleetSize));
  const profiles = join(dir, 'profiles.yaml');
  writeFileSync(profiles, sessionProfile(settings.session));
  const fleetsim = await startFleetsim({
    dbPath,
    logPath: join(dir, 'fleetsim.log'),
    manifests,
    profiles,
    nodes: churningFleetNodes(settings.fleetSize),
    maxPods: MAX_PODS_PER_NODE,
    featureGates: '',
    allocator: settings.allocator,
    allocatorTls: true,
  });
  let run: AgonesLoadRun;
  try {
    log(`  fleetsim serving on ${fleetsim.baseUrl}, its allocator on ${fleetsim.allocatorAddress} (mutual TLS)`);
    await waitForFleet(fleetsim.baseUrl, FLEET, settings.fleetSize, 'ready', 60_000 + settings.fleetSize * 20, (status) => log(`  waiting for fleet ${FLEET}: ${status}`));
    const client = allocatorClientFiles(await readAllocatorClient(fleetsim), dir);
    const [ip, port] = [client.ALLOCATOR_ADDRESS!.slice(0, client.ALLOCATOR_ADDRESS!.lastIndexOf(':')), client.ALLOCATOR_ADDRESS!.slice(client.ALLOCATOR_ADDRESS!.lastIndexOf(':') + 1)];
    const args = ['--ip', ip, '--port', port, '--namespace', 'default', '--key', client.CLIENT_KEY!, '--cert', client.CLIENT_CERT!, '--cacert', client.CA_CERT!];
    if (settings.tool === 'runscenario') args.push('--scenariosFile', writeScenario(dir, settings.scaledScenario!));
    else args.push('--numberofclients', String(settings.clients), '--perclientallocations', String(settings.perClient));
    log(`  ${settings.tool} ${args.join(' ')}`);
    const toolStarted = Date.now();
    const { output, code: exitCode } = await runToEnd(binary, args, settings.expectedSeconds * 1000 + 120_000, true);
    writeFileSync(join(dir, `agones-${settings.tool}.log`), output);
    const toolEnded = Date.now();
    const result: AgonesLoadResult =
      settings.tool === 'runscenario' ? parseRunscenario(output) : parseAllocationload(output, settings.clients, settings.perClient);
    const fleet = await requestJson<{ status?: { replicas?: number; readyReplicas?: number; allocatedReplicas?: number } }>(
      fleetsim.baseUrl,
      'GET',
      `/apis/agones.dev/v1/namespaces/default/fleets/${FLEET}`,
    );
    run = {
      version: 1,
      startedAt: startedAt.toISOString(),
      agonesSource: settings.src,
      command: [settings.tool, ...args],
      fleetSize: settings.fleetSize,
      session: settings.session,
      allocatorModel: describeAllocatorModel(settings.allocator),
      ...(settings.scenarioFile && { scenarioFile: settings.scenarioFile, timeScale: settings.timeScale }),
      result,
      eventsCommitted: 0,
      fleetAtEnd: { replicas: fleet.status?.replicas ?? 0, ready: fleet.status?.readyReplicas ?? 0, allocated: fleet.status?.allocatedReplicas ?? 0 },
      exitCode,
    };
    await fleetsim.process.stop();
    run.eventsCommitted = countEvents(dbPath, toolStarted, toolEnded);
  } finally {
    await fleetsim.process.stop();
  }
  writeAgonesLoadReport(dir, run);
  return run;
}

function writeScenario(dir: string, text: string): string {
  const path = join(dir, 'scenario.txt');
  writeFileSync(path, `${text}\n`);
  return path;
}

export async function agonesLoadCommand(argv: string[]): Promise<number> {
  const settings = agonesLoadSettings(argv);
  if (settings === 'help') {
    console.log(AGONES_LOAD_USAGE);
    return 0;
  }
  console.log(`fleetsim bench agones-load: Agones's ${settings.tool} against a fresh fleetsim (report in ${settings.out})`);
  const run = await runAgonesLoad(settings, (line) => console.log(line));
  for (const line of agonesLoadSummary(run)) console.log(line);
  console.log(`  report:   ${join(settings.out, 'index.html')}`);
  return run.exitCode === 0 ? 0 : 1;
}
