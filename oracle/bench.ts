import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FlagError, type FlagSpec, flagsHelp, parseDuration, parseFlags, runScript } from '../server/flags.js';
import { buildTool } from '../loadtest/agones-load.js';
import { allocatorClientFiles } from '../loadtest/bench.js';
import { type Measured, ROUTES, median, runWrk, wrkAvailable, wrkScript } from '../loadtest/bench-sidecar.js';
import { CLI, runFolder } from '../loadtest/paths.js';
import { readRssBytes } from '../loadtest/proc-stats.js';
import { RemoteFleet } from '../loadtest/remote-fleet.js';
import { runToEnd, runWithInput } from '../loadtest/run-process.js';
import { SIMPLE_GAME_SERVER_IMAGE, remoteChurningFleet } from '../loadtest/scenarios.js';
import { type RunningFleetsim, readAllocatorClient, startFleetsim } from '../loadtest/servers.js';
import { kubeconfigText } from '../server/k8s/kubeconfig.js';
import { BenchRun, type Figure } from '../server/bench/record.js';
import { parseAllocationload } from '../reports/agones-load-data.js';
import type { RunData } from '../reports/run-data.js';
import { cgroupProcessesByProc } from './cgroup.js';
import { readConfig } from './config.js';
import { ALLOCATOR_IP, CONTROL_NETNS, ORACLE_DIST, oraclePaths } from './paths.js';
import { insideOracle, rerunInOracle } from './rerun.js';

/**
 * `npm run oracle:bench`: fleetsim and real Agones (the oracle) measured side by side, each driven
 * the same way, as a cluster: through kubectl and its allocator service over mutual TLS.
 *
 *  - fleets of 100 and 1,000 (or the most the machine's memory holds) to Ready, and their memory;
 *  - the k6 allocation scenario (`fleetsim bench allocation-throughput --target-allocator`);
 *  - Agones's own allocation load tool (test/load/allocation/allocationload, built from its source);
 *  - a GameServer's sidecar under wrk: Agones's sdk-server in a pod beside simple-game-server,
 *    against fleetsim serve's sidecar of a GameServer running the same simple-game-server.
 *
 * It runs inside the oracle's namespace (it starts itself there), where the oracle's API server,
 * allocator and pods are reachable; the fleetsim it compares is started there too. The figures and
 * their ratios are printed and written as a benchmark record, bench-results/<time>-oracle-bench.json.
 */

const FLAGS: FlagSpec[] = [
  { name: 'parts', type: 'string', default: 'ready,k6,agones-load,sidecar', help: 'what to measure (comma-separated): ready, k6, agones-load, sidecar' },
  { name: 'sizes', type: 'string', default: '100,1000', help: 'fleet sizes brought to Ready (a size the memory cannot hold is lowered, and said)' },
  { name: 'allocation-fleet', type: 'number', default: 300, help: 'Ready GameServers for the allocation runs (k6, agones-load)' },
  { name: 'rate', type: 'number', default: 40, help: 'k6: allocations offered per second' },
  { name: 'vus', type: 'number', default: 20, help: 'k6: most allocations in flight' },
  { name: 'duration', type: 'string', default: '5s', help: 'k6: length of the load (rate × duration should stay below the fleet, as no game server is replaced meanwhile)' },
  { name: 'clients', type: 'number', default: 10, help: 'agones-load: clients allocating at once' },
  { name: 'per-client', type: 'number', default: 20, help: 'agones-load: allocations each client makes' },
  { name: 'sidecar-seconds', type: 'number', default: 10, help: 'sidecar: seconds of each wrk run' },
  { name: 'pairs', type: 'number', default: 3, help: 'sidecar: runs per route on each side, alternating (the median is told)' },
  { name: 'out', type: 'string', help: 'folder for the runs (default reports/out/<time>-oracle-bench)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

const USAGE = `npm run oracle:bench -- [flags]: fleetsim and the oracle (real Agones) measured side by side

${flagsHelp(FLAGS)}`;

/** About a GameServer of the oracle: its sdk-server and simple-game-server (proportional set size, docs/oracle.md). */
const ORACLE_BYTES_PER_GAMESERVER = 15 * 2 ** 20;
/** What the oracle's control plane and Agones take, and a margin for the rest of the machine. */
const ORACLE_MARGIN_BYTES = 3 * 2 ** 30;
/** Agones's own pods, which count against the nodes' pods. */
const SYSTEM_PODS = 6;
const NAMESPACE = 'default';

/** One of the two, as a client sees a cluster: kubectl through a kubeconfig, an allocator over mutual TLS, its memory. */
interface Side {
  label: 'fleetsim' | 'Agones';
  kubeconfig: string;
  allocator: { host: string; port: number; cert: string; key: string; ca: string };
  /** Bytes of memory it holds now (fleetsim: its process's RSS; the oracle: the PSS of every process of its control group). */
  memory(): number;
  stop(): Promise<void>;
}

type Log = (line: string) => void;

async function main(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument "${positional[0]}"`);
  if (!insideOracle()) return rerunInside(argv);
  const parts = new Set(String(values.parts).split(',').map((part) => part.trim()));
  const unknown = [...parts].filter((part) => !['ready', 'k6', 'agones-load', 'sidecar'].includes(part));
  if (unknown.length > 0) throw new FlagError(`--parts: no part ${unknown.join(', ')} (ready, k6, agones-load, sidecar)`);
  const sizes = String(values.sizes).split(',').map(Number);
  if (!sizes.every((size) => Number.isInteger(size) && size > 0)) throw new FlagError('--sizes: whole numbers, comma-separated');
  const out = values.out === undefined ? runFolder('oracle-bench') : String(values.out);
  mkdirSync(out, { recursive: true });
  const log: Log = (line) => console.log(line);
  const run = BenchRun.start('oracle:bench');
  run.note(`the oracle: ${oracleVersion()}`);
  const notes: string[] = [];
  const figures: Figure[] = [];
  if (parts.has('ready')) {
    for (const wanted of sizes) figures.push(...(await fleetToReady(fittingSize(wanted, notes, log), out, log)));
  }
  const allocationFleet = values['allocation-fleet'] as number;
  if (parts.has('k6')) figures.push(...(await k6Allocation(allocationFleet, String(values.duration), values.rate as number, values.vus as number, out, log)));
  if (parts.has('agones-load')) figures.push(...(await agonesLoad(allocationFleet, values.clients as number, values['per-client'] as number, out, log)));
  if (parts.has('sidecar')) figures.push(...(await sidecars(values['sidecar-seconds'] as number, values.pairs as number, out, log)));
  for (const figure of figures) run.figure(figure);
  for (const note of notes) run.note(note);
  run.finish();
  console.log(`runs: ${out}`);
  return 0;
}

/** A fleet size the oracle can hold: its nodes' pods and the machine's available memory; lowered to hundreds when not, with a note. */
function fittingSize(wanted: number, notes: string[], log: Log): number {
  const config = readConfig(oraclePaths().config);
  const pods = config.nodes * config.maxPods - SYSTEM_PODS;
  const memory = Math.floor((availableMemoryBytes() - ORACLE_MARGIN_BYTES) / ORACLE_BYTES_PER_GAMESERVER);
  const size = Math.min(wanted, pods, memory);
  if (size >= wanted) return wanted;
  const lowered = Math.max(100, Math.floor(size / 100) * 100);
  const why = pods < memory ? `the oracle's ${config.nodes} nodes take ${config.maxPods} pods each (npm run oracle -- up --max-pods N)` : `the machine has ${(availableMemoryBytes() / 2 ** 30).toFixed(1)} GiB available and a GameServer of the oracle takes about 15 MiB`;
  const note = `a fleet of ${wanted} does not fit (${why}): measured ${lowered} instead`;
  notes.push(note);
  log(note);
  return lowered;
}

function availableMemoryBytes(): number {
  const line = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return Number(line?.[1] ?? 0) * 1024;
}

/** The oracle: its kubeconfig, its allocator (the client certificate `up` made), its control group's memory. */
function oracleSide(): Side {
  const paths = oraclePaths();
  const client = paths.allocatorClient;
  return {
    label: 'Agones',
    kubeconfig: paths.kubeconfig,
    allocator: { host: ALLOCATOR_IP, port: 443, cert: join(client, 'tls.crt'), key: join(client, 'tls.key'), ca: join(client, 'ca.crt') },
    memory: () => cgroupProcessesByProc().reduce((sum, pid) => sum + pssBytes(pid), 0),
    stop: async () => {},
  };
}

/** The proportional set size of a process (0 once it is gone). */
function pssBytes(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/**
 * A fresh `fleetsim serve` as a cluster: its event log on disk, nodes for `size` GameServers, its
 * allocator on mutual TLS with the client certificate read from its Secrets.
 */
async function fleetsimSide(dir: string, size: number, options: { listen?: boolean } = {}): Promise<Side & { fleetsim: RunningFleetsim }> {
  mkdirSync(dir, { recursive: true });
  const fleetsim = await startFleetsim({
    dbPath: join(dir, 'events.db'),
    logPath: join(dir, 'fleetsim.log'),
    nodes: Math.max(3, Math.ceil((size + 10) / 110)),
    maxPods: 110,
    featureGates: '',
    allocatorTls: true,
    noListen: options.listen !== true,
    ...(options.listen && { portRange: '28000-28099' }),
  });
  const client = allocatorClientFiles(await readAllocatorClient(fleetsim), dir);
  const address = client.ALLOCATOR_ADDRESS!;
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigText(fleetsim.baseUrl));
  return {
    label: 'fleetsim',
    fleetsim,
    kubeconfig,
    allocator: { host: address.slice(0, address.lastIndexOf(':')), port: Number(address.slice(address.lastIndexOf(':') + 1)), cert: client.CLIENT_CERT!, key: client.CLIENT_KEY!, ca: client.CA_CERT! },
    memory: () => readRssBytes(fleetsim.process.pid),
    stop: () => fleetsim.process.stop(10_000),
  };
}

/** A Packed fleet of the example game server, as a user writes it. */
function readyFleet(name: string, size: number): string {
  return stringify({
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name, namespace: NAMESPACE },
    spec: { replicas: size, template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'simple-game-server', image: SIMPLE_GAME_SERVER_IMAGE }] } } } } },
  });
}

/** Time from `kubectl create` to `size` Ready, the memory that took, and the time `kubectl delete --wait` takes. */
async function fleetToReady(size: number, out: string, log: Log): Promise<Figure[]> {
  const figures: Figure[] = [];
  const measured: Record<string, { ready: number; deleted: number; perGameServer: number }> = {};
  for (const make of [oracleSide, () => fleetsimSide(join(out, `ready-${size}-fleetsim`), size)]) {
    const side = await make();
    try {
      const name = `bench-ready-${size}`;
      const fleet = new RemoteFleet(side.kubeconfig, NAMESPACE, name, readyFleet(name, size));
      await fleet.check();
      const before = side.memory();
      log(`${side.label}: a fleet of ${size} to Ready…`);
      const started = Date.now();
      await fleet.create();
      fleet.watch();
      await fleet.waitReady(size, 60 * 60_000, (status) => log(`  ${side.label} ${name}: ${status}`));
      const ready = (Date.now() - started) / 1000;
      const perGameServer = (side.memory() - before) / size;
      const deleting = Date.now();
      await fleet.remove();
      await gameServersGone(side, name);
      const deleted = (Date.now() - deleting) / 1000;
      log(`  ${side.label}: Ready in ${ready.toFixed(1)} s, ${(perGameServer / 2 ** 20).toFixed(2)} MiB a GameServer, deleted in ${deleted.toFixed(1)} s`);
      measured[side.label] = { ready, deleted, perGameServer };
      figures.push(
        { name: `fleet of ${size} to Ready, ${side.label}`, value: ready, unit: 's' },
        { name: `fleet of ${size}: memory per GameServer, ${side.label}`, value: perGameServer / 2 ** 20, unit: 'MiB', note: side.label === 'fleetsim' ? "serve's RSS" : "the oracle's PSS" },
        { name: `fleet of ${size} deleted, ${side.label}`, value: deleted, unit: 's' },
      );
    } finally {
      await side.stop();
    }
  }
  figures.push(
    { name: `fleet of ${size} to Ready: Agones's time / fleetsim's`, value: measured.Agones!.ready / measured.fleetsim!.ready, unit: '×' },
    { name: `fleet of ${size}: Agones's memory per GameServer / fleetsim's`, value: measured.Agones!.perGameServer / measured.fleetsim!.perGameServer, unit: '×' },
  );
  return figures;
}

/** Waits until no GameServer of the fleet is left (kubectl delete waits for the Fleet, not for its GameServers). */
async function gameServersGone(side: Side, fleet: string): Promise<void> {
  for (;;) {
    const run = await runWithInput('kubectl', ['--kubeconfig', side.kubeconfig, '-n', NAMESPACE, 'get', 'gameservers', '-l', `agones.dev/fleet=${fleet}`, '-o', 'name'], '', 60_000);
    if (run.code === 0 && run.stdout.trim() === '') return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The same k6 scenario and settings through each side's allocator, with the fleet (and its autoscaler) the harness creates. */
async function k6Allocation(fleetSize: number, duration: string, rate: number, vus: number, out: string, log: Log): Promise<Figure[]> {
  const seconds = parseDuration(duration, '--duration') / 1000;
  if (rate * seconds > fleetSize * 0.8) log(`note: ${rate}/s for ${seconds} s asks for more than 80% of the fleet of ${fleetSize}: later allocations may find none Ready`);
  const results: Record<string, RunData> = {};
  for (const make of [oracleSide, () => fleetsimSide(join(out, 'k6-fleetsim'), fleetSize)]) {
    const side = await make();
    try {
      const dir = join(out, `k6-${side.label}`);
      const { allocator } = side;
      const args = ['bench', 'allocation-throughput', '--target-allocator', `https://${allocator.host}:${allocator.port}`, '--client-cert', allocator.cert, '--client-key', allocator.key, '--ca', allocator.ca];
      // A session far longer than the run: no game server is replaced while k6 runs, on either side.
      args.push('--kubeconfig', side.kubeconfig, '--fleet-size', String(fleetSize), '--rate', String(rate), '--vus', String(vus), '--duration', duration, '--session', '3600', '--out', dir);
      log(`${side.label}: k6 allocation-throughput, ${rate}/s for ${duration}, fleet of ${fleetSize}…`);
      const run = await runToEnd(process.execPath, [CLI, ...args], 60 * 60_000, true);
      writeFileSync(join(out, `k6-${side.label}.log`), run.output);
      if (!existsSync(join(dir, 'run.json'))) throw new Error(`k6 against ${side.label} wrote no run.json:\n${run.output.slice(-2000)}`);
      results[side.label] = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as RunData;
      const r = results[side.label]!.fleetsim;
      log(`  ${side.label}: ${r.requestRate.toFixed(1)} req/s, p50 ${r.latency.p50.toFixed(1)} ms, p99 ${r.latency.p99.toFixed(1)} ms, ${JSON.stringify(r.outcomes)}`);
    } finally {
      await side.stop();
    }
  }
  const f = results.fleetsim!.fleetsim;
  const a = results.Agones!.fleetsim;
  const allocated = (r: typeof f) => r.outcomes.Allocated ?? 0;
  return [
    { name: 'k6 allocation: requests/s, fleetsim', value: f.requestRate, unit: '/s', note: `${allocated(f)} Allocated` },
    { name: 'k6 allocation: requests/s, Agones', value: a.requestRate, unit: '/s', note: `${allocated(a)} Allocated` },
    { name: 'k6 allocation: p50, fleetsim', value: f.latency.p50, unit: 'ms' },
    { name: 'k6 allocation: p50, Agones', value: a.latency.p50, unit: 'ms' },
    { name: 'k6 allocation: p99, fleetsim', value: f.latency.p99, unit: 'ms' },
    { name: 'k6 allocation: p99, Agones', value: a.latency.p99, unit: 'ms' },
    { name: 'k6 allocation: fleetsim requests/s / Agones', value: f.requestRate / a.requestRate, unit: '×' },
    { name: 'k6 allocation: Agones p99 / fleetsim p99', value: a.latency.p99 / f.latency.p99, unit: '×' },
  ];
}

/** Agones's allocationload against each side's allocator (gRPC over mutual TLS), the fleet created as a user would. */
async function agonesLoad(fleetSize: number, clients: number, perClient: number, out: string, log: Log): Promise<Figure[]> {
  const src = oraclePaths().agonesSrc;
  const binary = buildTool({ src, tool: 'allocationload', rebuild: false }, log);
  const rates: Record<string, number> = {};
  const figures: Figure[] = [];
  for (const make of [oracleSide, () => fleetsimSide(join(out, 'agones-load-fleetsim'), fleetSize)]) {
    const side = await make();
    const name = 'bench-agones-load';
    const fleet = new RemoteFleet(side.kubeconfig, NAMESPACE, name, remoteChurningFleet(name, NAMESPACE, fleetSize, 3600));
    try {
      await fleet.check();
      await fleet.create();
      fleet.watch();
      log(`${side.label}: a fleet of ${fleetSize} for allocationload…`);
      await fleet.waitReady(fleetSize, 60 * 60_000, (status) => log(`  ${side.label} ${name}: ${status}`));
      const { allocator } = side;
      const args = ['--ip', allocator.host, '--port', String(allocator.port), '--namespace', NAMESPACE, '--key', allocator.key, '--cert', allocator.cert, '--cacert', allocator.ca];
      args.push('--numberofclients', String(clients), '--perclientallocations', String(perClient));
      const { output } = await runToEnd(binary, args, 30 * 60_000, true);
      writeFileSync(join(out, `agones-load-${side.label}.log`), output);
      const result = parseAllocationload(output, clients, perClient);
      rates[side.label] = result.allocationRate;
      log(`  ${side.label}: ${result.allocations} allocations, ${result.failures} failures in ${result.seconds.toFixed(1)} s: ${result.allocationRate.toFixed(1)}/s`);
      figures.push({ name: `allocationload ${clients}×${perClient}: allocations/s, ${side.label}`, value: result.allocationRate, unit: '/s', note: `${result.failures} failed` });
    } finally {
      await fleet.remove().catch((error: Error) => log(`  ${side.label}: ${error.message}`));
      await side.stop();
    }
  }
  figures.push({ name: `allocationload ${clients}×${perClient}: fleetsim / Agones`, value: rates.fleetsim! / rates.Agones!, unit: '×' });
  return figures;
}

/**
 * A GameServer's sidecar under wrk, route by route, the two sides in turn: on the oracle, Agones's
 * sdk-server of a GameServer's pod (wrk in the pod's network, through nsenter); on fleetsim, the
 * sidecar serve runs for a GameServer whose process is the same simple-game-server binary.
 */
async function sidecars(seconds: number, pairs: number, out: string, log: Log): Promise<Figure[]> {
  if (!wrkAvailable()) throw new FlagError('the sidecar part needs wrk (Debian: apt-get install wrk)');
  const paths = oraclePaths();
  const dir = join(out, 'sidecar');
  mkdirSync(dir, { recursive: true });
  const oracle = oracleSide();
  const fleetsim = await fleetsimSide(join(dir, 'fleetsim'), 1, { listen: true });
  const portFile = join(dir, 'fleetsim-sdk-port');
  const game = join(paths.agonesBin, 'simple-game-server');
  const gameServer = (command?: string) =>
    JSON.stringify({
      apiVersion: 'agones.dev/v1',
      kind: 'GameServer',
      metadata: { name: 'bench-sidecar', ...(command && { annotations: { 'fleetsim.dev/command': command } }) },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'simple-game-server', image: SIMPLE_GAME_SERVER_IMAGE }] } } },
    });
  const figures: Figure[] = [];
  try {
    await kubectl(oracle, ['create', '-f', '-'], gameServer());
    await kubectl(fleetsim, ['create', '-f', '-'], gameServer(`echo $AGONES_SDK_HTTP_PORT > ${portFile} && exec ${game}`));
    for (const side of [oracle, fleetsim]) await kubectl(side, ['wait', 'gameserver/bench-sidecar', '--for=jsonpath={.status.state}=Ready', '--timeout=300s']);
    const sdkServer = sdkServerPid('bench-sidecar');
    const targets = [
      { side: oracle, url: 'http://127.0.0.1:9358', pid: sdkServer, wrapper: ['nsenter', '-t', String(sdkServer), '-n'] },
      { side: fleetsim, url: `http://127.0.0.1:${readFileSync(portFile, 'utf8').trim()}`, pid: fleetsim.fleetsim.process.pid, wrapper: [] as string[] },
    ];
    // Agones's sdk-server answers once its watch of the GameServer has synced, which can lag Ready.
    for (const target of targets) await answering(target.url + '/gameserver', target.wrapper);
    for (const route of ROUTES) {
      const script = join(dir, `${route.method}-${route.path.replace(/\W+/g, '-')}.lua`);
      writeFileSync(script, wrkScript(route));
      const runs: Record<string, Measured[]> = { Agones: [], fleetsim: [] };
      for (let pair = 0; pair < pairs; pair++) {
        for (const target of targets) runs[target.side.label]!.push(await runWrk(target.url + route.path, script, seconds, target.pid, target.wrapper));
        log(`  ${route.name} pair ${pair + 1}: ${targets.map((t) => `${t.side.label} ${runs[t.side.label]!.at(-1)!.requestsPerSecond.toFixed(0)}/s p99 ${runs[t.side.label]!.at(-1)!.p99Ms.toFixed(2)} ms`).join(', ')}`);
      }
      const rps = (label: string) => median(runs[label]!.map((r) => r.requestsPerSecond));
      const p99 = (label: string) => median(runs[label]!.map((r) => r.p99Ms));
      const errors = Object.values(runs).flat().reduce((sum, r) => sum + r.errors, 0);
      figures.push(
        { name: `sidecar ${route.name}: requests/s, fleetsim`, value: rps('fleetsim'), unit: '/s' },
        { name: `sidecar ${route.name}: requests/s, Agones sdk-server`, value: rps('Agones'), unit: '/s' },
        { name: `sidecar ${route.name}: p99, fleetsim`, value: p99('fleetsim'), unit: 'ms' },
        { name: `sidecar ${route.name}: p99, Agones sdk-server`, value: p99('Agones'), unit: 'ms' },
        { name: `sidecar ${route.name}: fleetsim / Agones requests/s`, value: rps('fleetsim') / rps('Agones'), unit: '×', ...(errors > 0 && { note: `${errors} failed answers` }) },
      );
    }
  } finally {
    await kubectl(oracle, ['delete', 'gameserver/bench-sidecar', '--ignore-not-found', '--wait=true']).catch(() => undefined);
    await fleetsim.stop();
  }
  return figures;
}

/** Waits until `url` answers 200 (curl through `wrapper`, as wrk will reach it). */
async function answering(url: string, wrapper: readonly string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const argv = [...wrapper, 'curl', '-s', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', url];
    const run = await runWithInput(argv[0]!, argv.slice(1), '', 10_000);
    if (run.stdout.trim() === '200') return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 in 5 minutes (last: ${run.stdout.trim() || run.stderr.trim()})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function kubectl(side: Side, args: string[], input = ''): Promise<string> {
  const run = await runWithInput('kubectl', ['--kubeconfig', side.kubeconfig, '-n', NAMESPACE, ...args], input, 330_000);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} on ${side.label}: ${run.stderr.trim().split('\n').at(-1)}`);
  return run.stdout;
}

/** The sdk-server of the oracle's GameServer `name`: the process whose environment names it. */
function sdkServerPid(name: string): number {
  for (const pid of cgroupProcessesByProc()) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environ.includes(`GAMESERVER_NAME=${name}`) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sdk-server')) return pid;
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no sdk-server of GameServer ${name} among the oracle's processes`);
}

function oracleVersion(): string {
  try {
    const record = JSON.parse(readFileSync(oraclePaths().buildRecord, 'utf8')) as { agonesVersion?: string; kubeVersion?: string };
    return `Agones ${record.agonesVersion ?? '?'} on Kubernetes ${record.kubeVersion ?? '?'}`;
  } catch {
    return 'unknown';
  }
}

function rerunInside(argv: string[]): Promise<number> {
  if (!readdirSync('/run/netns', { withFileTypes: true }).some((entry) => entry.name === CONTROL_NETNS)) throw new FlagError('the oracle is not up: npm run oracle -- up');
  return rerunInOracle(join(ORACLE_DIST, 'bench.js'), argv);
}

runScript(() => main(process.argv.slice(2)));
