import { describeAllocatorModel } from '../server/allocation/allocator-model-flags.js';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { renderRun } from '../reports/render.js';
import type { OtherPrograms, RunData, Series, ServerFigures, TargetResult } from '../reports/run-data.js';
import { disturbances } from '../reports/summary.js';
import { parseFeatureGates } from '../server/features.js';
import { countEvents, fleetOverTime } from './event-log-figures.js';
import { K6_THRESHOLDS_FAILED, type K6Outcome, findK6, k6Version, runK6 } from './k6.js';
import { type K6Summary, type SeriesFigures, counterTotal, readSamples, readSummary, seriesFigures, thresholdResults } from './k6-results.js';
import { REPO_ROOT } from './paths.js';
import { ProcessSampler, readMachineBusySeconds } from './proc-stats.js';
import { RemoteFleet, fleetSamples } from './remote-fleet.js';
import { type RemoteTarget, probeAllocator } from './remote-target.js';
import { type BenchSettings, SCENARIOS, type ScenarioDefinition, remoteChurningFleet, remoteSessionSeconds, scriptPath } from './scenarios.js';
import { type AllocatorClient, type RunningFleetsim, gameServerNames, readAllocatorClient, request, startBaselineProcess, startFleetsim, waitForFleet } from './servers.js';
import { ALLOCATION_PROTO } from '../server/grpc/allocation-grpc.js';

/**
 * One `fleetsim bench` run: a fresh fleetsim with the scenario's fixture, the real k6 against
 * it, then (with --baseline) the same script against the baseline server; the figures go to
 * `run.json` in the run's folder and the report renderer turns that into the report. With
 * --target-allocator the same script allocates from another cluster instead (runRemoteBench).
 */

export type Log = (line: string) => void;

interface TargetRun {
  result: TargetResult;
  outcome: K6Outcome;
  summary: K6Summary;
  figures: SeriesFigures;
  dropped: number;
  /** CPU seconds during the k6 run: the server's (a local one), k6's, the whole machine's, and the rest. */
  cpu: { server?: number; k6: number; machine: number; other: number };
  /** The server's resident memory over the run (a local one). */
  memory: Series;
}

export interface BenchResult {
  dir: string;
  data: RunData;
  /** A short account of the run for the console. */
  report: string[];
}

/** GET /metrics every `seconds` while the load runs, one scrape at a time and 10 s at most, as Prometheus does. */
class MetricsScraper {
  scrapes = 0;
  failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly seconds: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = request(this.baseUrl, 'GET', '/metrics', undefined, 10_000)
        .then(
          (answer) => void (answer.status === 200 ? this.scrapes++ : this.failures++),
          () => void this.failures++,
        )
        .finally(() => (this.inFlight = undefined));
    }, this.seconds * 1000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** What k6 is pointed at: a local server (its process sampled), or a remote cluster's allocator. */
type K6Target = { kind: 'local'; baseUrl: string; pid: number } | { kind: 'remote'; remote: RemoteTarget };

/** k6's settings for allocating from a remote allocator over mutual TLS (scenarios/lib/common.ts). */
function remoteK6Env(remote: RemoteTarget): Record<string, string> {
  return {
    TARGET: 'remote',
    ALLOCATOR_URL: remote.allocatorUrl,
    CLIENT_CERT: remote.clientCert,
    CLIENT_KEY: remote.clientKey,
    NAMESPACE: remote.namespace,
    FLEET: remote.fleet,
    // A remote cluster's resource API is its Kubernetes API server, behind its own authentication: all through the allocator.
    RESOURCE_API_SHARE: '0',
  };
}

async function runTarget(
  target: 'fleetsim' | 'baseline',
  definition: ScenarioDefinition,
  settings: BenchSettings,
  dir: string,
  server: K6Target,
  k6: string,
  namesFile: string | undefined,
  log: Log,
  extraEnv: Record<string, string> = {},
): Promise<TargetRun> {
  const summaryPath = join(dir, `k6-${target}-summary.json`);
  const jsonPath = join(dir, `k6-${target}.json`);
  const local = server.kind === 'local' ? server : undefined;
  const env: Record<string, string> =
    server.kind === 'local'
      ? { BASE_URL: server.baseUrl, TARGET: target, ...definition.k6Env(settings), ...extraEnv }
      : { ...definition.k6Env(settings), ...remoteK6Env(server.remote) };
  if (namesFile) env.NAMES_FILE = namesFile;
  log(`  k6 → ${server.kind === 'local' ? `${target} (${server.baseUrl})` : `remote allocator (${server.remote.allocatorUrl})`}`);
  // Prometheus scrapes fleetsim, not the baseline: what fleetsim's metrics cost shows in the ratio.
  const scraper = local && target === 'fleetsim' && settings.scrapeSeconds > 0 ? new MetricsScraper(local.baseUrl, settings.scrapeSeconds) : undefined;
  const serverSampler = local ? new ProcessSampler(local.pid) : undefined;
  let k6Sampler: ProcessSampler | undefined;
  const machineAtStart = readMachineBusySeconds();
  serverSampler?.start();
  scraper?.start();
  let outcome: K6Outcome;
  let serverFigures: { cpuSeconds: number; memory: Series } | undefined;
  let k6Cpu: number;
  try {
    outcome = await runK6({
      k6,
      script: scriptPath(definition.name),
      env,
      summaryPath,
      jsonPath,
      logPath: join(dir, `k6-${target}.log`),
      timeoutMs: (definition.expectedSeconds(settings) + 90) * 1000,
      cwd: REPO_ROOT,
      // k6 takes no CA of its own: Go reads its roots from SSL_CERT_FILE (and the system's directory).
      ...(server.kind === 'remote' && server.remote.ca !== undefined && { processEnv: { SSL_CERT_FILE: server.remote.ca } }),
      onStart: (pid) => {
        k6Sampler = new ProcessSampler(pid, 200);
        k6Sampler.start();
      },
    });
  } finally {
    await scraper?.stop();
    serverFigures = serverSampler?.stop();
    k6Cpu = k6Sampler?.stop().cpuSeconds ?? 0;
  }
  const machineBusy = readMachineBusySeconds() - machineAtStart;
  if (scraper) log(`  scraped ${local!.baseUrl}/metrics ${scraper.scrapes} times (every ${settings.scrapeSeconds} s)${scraper.failures ? `, ${scraper.failures} failed` : ''}`);
  const serverCpu = serverFigures?.cpuSeconds ?? 0;
  const cpu = {
    ...(serverFigures && { server: round(serverFigures.cpuSeconds, 2) }),
    k6: round(k6Cpu, 2),
    machine: round(machineBusy, 2),
    // Everything else the machine did meanwhile (this harness included, which mostly waits).
    other: round(Math.max(0, machineBusy - serverCpu - k6Cpu), 2),
  };
  if (outcome.exitCode !== 0 && outcome.exitCode !== K6_THRESHOLDS_FAILED) {
    throw new Error(`k6 against ${target} failed (exit ${outcome.exitCode}${outcome.timedOut ? ', stopped after its time limit' : ''}); see ${join(dir, `k6-${target}.log`)}`);
  }
  if (!existsSync(summaryPath)) throw new Error(`k6 wrote no summary (${summaryPath}); see ${join(dir, `k6-${target}.log`)}`);
  const summary = readSummary(summaryPath);
  const samples = await readSamples(jsonPath, outcome.startedAtMs, definition.requests, definition.latency);
  if (!settings.keepRaw) rmSync(jsonPath, { force: true });
  const figures = seriesFigures(samples);
  const outcomes: Record<string, number> = {};
  for (const [label, metric] of Object.entries(definition.outcomes)) outcomes[label] = counterTotal(summary, metric);
  const result: TargetResult = {
    target,
    requestRate: round(samples.requestCount / Math.max(settings.durationSeconds, 0.001)),
    latency: figures.latency,
    series: {
      requestRate: figures.requestRateSeries,
      latencyP50: figures.latencyP50,
      latencyP95: figures.latencyP95,
      latencyP99: figures.latencyP99,
    },
    outcomes,
    thresholds: thresholdResults(summary),
    k6Summary: summary,
  };
  return { result, outcome, summary, figures, dropped: counterTotal(summary, 'dropped_iterations'), cpu, memory: serverFigures?.memory ?? [] };
}

/** The allocator's address and the client's certificate as files, for a script that calls it over mutual TLS. */
export function allocatorClientFiles(client: AllocatorClient, dir: string): Record<string, string> {
  return {
    ALLOCATOR_ADDRESS: client.address,
    CLIENT_CERT: writeText(join(dir, 'client.crt'), client.cert),
    CLIENT_KEY: writeText(join(dir, 'client.key'), client.key),
    CA_CERT: writeText(join(dir, 'ca.crt'), client.ca),
    PROTO_DIR: dirname(ALLOCATION_PROTO),
  };
}

function writeText(path: string, text: string): string {
  writeFileSync(path, text.endsWith('\n') ? text : `${text}\n`);
  return path;
}

export async function runBench(settings: BenchSettings, dir: string, log: Log): Promise<BenchResult> {
  if (settings.remote) return runRemoteBench(settings, settings.remote, dir, log);
  const definition = SCENARIOS[settings.scenario];
  mkdirSync(dir, { recursive: true });
  const startedAt = new Date();
  const k6 = await findK6();
  const version = await k6Version(k6);
  log(`fleetsim bench ${settings.scenario}: ${definition.summary}`);
  log(`  ${version}; run folder ${relative(process.cwd(), dir) || '.'}`);

  const fixture = definition.fixture(settings);
  const manifests = fixture.manifests ? writeText(join(dir, 'fixture.yaml'), fixture.manifests) : undefined;
  const profiles = fixture.profiles ? writeText(join(dir, 'profiles.yaml'), fixture.profiles) : undefined;
  const dbPath = join(dir, 'events.db');
  // A fresh cluster every run: an event log left in a reused folder would be restored from.
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
  const nodes = definition.nodes(settings);
  const gates = definition.featureGates;

  let fleetsim: RunningFleetsim | undefined;
  let fleetsimRun: TargetRun;
  let namesFile: string | undefined;
  let names: string[] = [];
  let baselineConfigPath: string | undefined;
  /** For a scenario over mutual TLS: the allocator's client, and its files for k6. */
  let allocatorClient: AllocatorClient | undefined;
  let tlsEnv: Record<string, string> = {};
  try {
    fleetsim = await startFleetsim({
      dbPath,
      logPath: join(dir, 'fleetsim.log'),
      manifests,
      profiles,
      nodes,
      maxPods: 110,
      featureGates: gates,
      allocator: settings.allocator,
      allocatorTls: definition.allocatorTls,
    });
    log(`  fleetsim serving on ${fleetsim.baseUrl} (pid ${fleetsim.process.pid}, ${nodes} nodes)`);
    if (definition.allocatorTls) {
      allocatorClient = await readAllocatorClient(fleetsim);
      tlsEnv = allocatorClientFiles(allocatorClient, dir);
    }
    if (definition.fleet) {
      const waited = await waitForFleet(
        fleetsim.baseUrl,
        definition.fleet.name,
        settings.fleetSize,
        definition.fleet.waitFor,
        60_000 + settings.fleetSize * 20,
        (status) => log(`  waiting for fleet ${definition.fleet!.name}: ${status}`),
      );
      log(`  fleet ${definition.fleet.name}: ${settings.fleetSize} game servers ${definition.fleet.waitFor === 'ready' ? 'Ready' : 'up'} after ${(waited / 1000).toFixed(1)} s`);
      if (definition.needsNames) {
        names = await gameServerNames(fleetsim.baseUrl, definition.fleet.name);
        namesFile = writeText(join(dir, 'gameservers.txt'), names.join('\n'));
      }
    }
    // Scraped once before the load, as a running Prometheus would have.
    if (settings.scrapeSeconds > 0) await request(fleetsim.baseUrl, 'GET', '/metrics');
    if (settings.baseline) {
      // Recorded before the run, so the baseline answers exactly what fleetsim answers to a fresh fleet.
      const config = await definition.capture(fleetsim.baseUrl, settings, names, allocatorClient);
      baselineConfigPath = writeText(join(dir, 'baseline-config.json'), JSON.stringify(config, null, 2));
    }
    fleetsimRun = await runTarget('fleetsim', definition, settings, dir, { kind: 'local', baseUrl: fleetsim.baseUrl, pid: fleetsim.process.pid }, k6, namesFile, log, tlsEnv);
  } finally {
    await fleetsim?.process.stop();
  }

  const { startedAtMs, endedAtMs } = fleetsimRun.outcome;
  const server: ServerFigures = {
    // fleetsim is left as it is: allocation latency is the request side, k6's http_req_duration.
    allocationLatencyHistogram: definition.allocation ? fleetsimRun.figures.latencyHistogram : [],
    eventsCommitted: countEvents(dbPath, startedAtMs, endedAtMs),
    cpuSeconds: fleetsimRun.cpu.server ?? 0,
    memory: fleetsimRun.memory,
  };
  const fleet = fleetOverTime(dbPath, {
    fromMs: startedAtMs,
    toMs: endedAtMs,
    gates: parseFeatureGates(gates),
    fleet: definition.fleet ? { namespace: 'default', name: definition.fleet.name } : undefined,
  });

  let baselineRun: TargetRun | undefined;
  if (settings.baseline && baselineConfigPath) {
    const baseline = await startBaselineProcess(baselineConfigPath, join(dir, 'baseline.log'));
    try {
      // The same client certificate, pointed at the canned allocator.
      const baselineEnv = baseline.allocatorAddress ? { ...tlsEnv, ALLOCATOR_ADDRESS: baseline.allocatorAddress } : {};
      baselineRun = await runTarget('baseline', definition, settings, dir, { kind: 'local', baseUrl: baseline.baseUrl, pid: baseline.process.pid }, k6, namesFile, log, baselineEnv);
    } finally {
      await baseline.process.stop();
    }
  }

  if (settings.scenario === 'watch-fanout') {
    // Watcher j watches game server j mod G and the driver changes them round-robin: each change
    // reaches W/G sockets on average.
    const watched = settings.fleetSize > 0 ? settings.vus / settings.fleetSize : 0;
    for (const run of [fleetsimRun, baselineRun]) {
      if (run) run.result.outcomes.expectedDeliveries = Math.round(run.result.outcomes.changes! * watched);
    }
  }

  const data: RunData = {
    ...runHeader(settings, startedAt, fleetsimRun),
    options: {
      ...runOptions(settings, version, fleetsimRun),
      baseline: settings.baseline,
      nodes,
      featureGates: gates,
      allocatorModel: describeAllocatorModel(settings.allocator),
      scrapeMetricsSeconds: settings.scrapeSeconds,
      baselineRatioMeaning: definition.ratioMeaning,
      ...(baselineRun && {
        baselineDroppedIterations: baselineRun.dropped,
        baselineServerCpuSeconds: baselineRun.cpu.server ?? 0,
        baselineK6CpuSeconds: baselineRun.cpu.k6,
      }),
    },
    otherPrograms: otherPrograms(fleetsimRun, baselineRun),
    fleetsim: fleetsimRun.result,
    ...(baselineRun && {
      baseline: baselineRun.result,
      baselineRatio: baselineRun.result.requestRate > 0 ? round(fleetsimRun.result.requestRate / baselineRun.result.requestRate, 3) : 0,
    }),
    server,
    fleet,
    ...(settings.scenario === 'watch-fanout' && {
      watchDelivery: { ...fleetsimRun.figures.latency, histogram: fleetsimRun.figures.latencyHistogram },
    }),
    ok: passed(fleetsimRun),
  };
  return writeRun(dir, data, definition, fleetsimRun, baselineRun);
}

/** Whether k6 finished with every threshold passed. */
const passed = (run: TargetRun) => run.outcome.exitCode === 0 && run.result.thresholds.every((t) => t.ok);

/** What every run.json starts with; its duration is k6's. */
function runHeader(settings: BenchSettings, startedAt: Date, run: TargetRun): Pick<RunData, 'version' | 'scenario' | 'startedAt' | 'durationSeconds'> {
  const { startedAtMs, endedAtMs } = run.outcome;
  return { version: 1, scenario: settings.scenario, startedAt: startedAt.toISOString(), durationSeconds: round((endedAtMs - startedAtMs) / 1000) };
}

/** The options every run records: the load asked for, and what k6 and the machine did. */
function runOptions(settings: BenchSettings, k6: string, run: TargetRun): RunData['options'] {
  return {
    duration: settings.duration,
    loadSeconds: settings.durationSeconds,
    rate: settings.rate,
    vus: settings.vus,
    fleetSize: settings.fleetSize,
    session: settings.session,
    p99Ms: settings.p99Ms,
    k6,
    cpus: cpus().length,
    ...(settings.scenarioFile && { scenarioFile: relative(REPO_ROOT, settings.scenarioFile) }),
    ...(settings.timeScale !== undefined && { timeScale: settings.timeScale }),
    droppedIterations: run.dropped,
    k6CpuSeconds: run.cpu.k6,
  };
}

/** What other programs took from the machine during each side's run, as the report records it. */
function otherPrograms(run: TargetRun, baseline?: TargetRun): OtherPrograms {
  return { cores: cpus().length, fleetsim: run.cpu.other, ...(baseline && { baseline: baseline.cpu.other }) };
}

/** Writes `run.json` and the report (index.html with SVG charts, summary.md: reports/render.ts). */
async function writeRun(dir: string, data: RunData, definition: ScenarioDefinition, run: TargetRun, baselineRun?: TargetRun): Promise<BenchResult> {
  writeFileSync(join(dir, 'run.json'), JSON.stringify(data, null, 2));
  await renderRun(dir);
  return { dir, data, report: describeRun(data, definition, run, baselineRun) };
}

/**
 * The scenario against another cluster's allocator service (`--target-allocator`): only k6 (and,
 * with --kubeconfig, kubectl) runs here. The handshake and the cluster are checked before anything
 * is created, so a refused certificate or an unreachable cluster leaves nothing behind (exit 2).
 */
async function runRemoteBench(settings: BenchSettings, remote: RemoteTarget, dir: string, log: Log): Promise<BenchResult> {
  const definition = SCENARIOS[settings.scenario];
  const manifests = remoteChurningFleet(remote.fleet, remote.namespace, settings.fleetSize, settings.session);
  const fleet = remote.kubeconfig ? new RemoteFleet(remote.kubeconfig, remote.namespace, remote.fleet, manifests) : undefined;
  const probe = await probeAllocator(remote);
  await fleet?.check();
  const k6 = await findK6();
  const version = await k6Version(k6);
  mkdirSync(dir, { recursive: true });
  const startedAt = new Date();
  log(`fleetsim bench ${settings.scenario} against ${remote.allocatorUrl}: every allocation through its allocator service, over mutual TLS`);
  log(`  ${version}; run folder ${relative(process.cwd(), dir) || '.'}`);
  log(`  the allocator accepted the client certificate (GET / answered ${probe})`);

  let run: TargetRun;
  let leftBehind: Error | undefined;
  try {
    if (fleet) {
      writeText(join(dir, 'fleet.yaml'), manifests);
      const created = await fleet.create();
      log(`  created ${created.join(', ')} in namespace ${remote.namespace} (fleet.yaml)`);
      fleet.watch();
      const waited = await fleet.waitReady(settings.fleetSize, 120_000 + settings.fleetSize * 50, (status) => log(`  waiting for fleet ${remote.fleet}: ${status}`));
      log(`  fleet ${remote.fleet}: ${settings.fleetSize} game servers Ready after ${(waited / 1000).toFixed(1)} s`);
    } else {
      log(`  no --kubeconfig: fleet ${remote.namespace}/${remote.fleet} must exist with Ready game servers; its status is not read`);
    }
    run = await runTarget('fleetsim', definition, settings, dir, { kind: 'remote', remote }, k6, undefined, log);
  } finally {
    if (fleet) {
      await fleet.remove().then(
        () => log(`  deleted fleet ${remote.fleet} and its autoscaler`),
        (error: Error) => (leftBehind = error),
      );
    }
  }

  const data: RunData = {
    ...runHeader(settings, startedAt, run),
    options: {
      ...runOptions(settings, version, run),
      ...(fleet && { session: remoteSessionSeconds(settings.session) }),
      targetAllocator: remote.allocatorUrl,
      namespace: remote.namespace,
      fleet: remote.fleet,
    },
    fleetsim: run.result,
    remote: { allocator: remote.allocatorUrl, namespace: remote.namespace, fleet: remote.fleet, fleetManagement: fleet ? 'created' : 'assumed' },
    otherPrograms: otherPrograms(run),
    fleet: fleet ? fleetSamples(fleet.statuses, run.outcome.startedAtMs, run.outcome.endedAtMs) : [],
    ok: passed(run),
  };
  const result = await writeRun(dir, data, definition, run);
  // The report is written either way, but a fleet left on someone's cluster fails the command.
  if (leftBehind) throw leftBehind;
  return result;
}

const fmt = (value: number, digits = 1) => value.toFixed(digits);

function describeTarget(run: TargetRun, unit: string, remote: boolean): string {
  const r = run.result;
  const outcomes = Object.entries(r.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const dropped = run.dropped > 0 ? `, ${run.dropped} iterations dropped` : '';
  const server = run.cpu.server === undefined ? '' : `server ${fmt(run.cpu.server)}, `;
  const cpu = `CPU s: ${server}k6 ${fmt(run.cpu.k6)}, other programs ${fmt(run.cpu.other)}`;
  return `${(remote ? 'remote' : r.target).padEnd(8)} ${fmt(r.requestRate)} ${unit}/s, p50 ${fmt(r.latency.p50, 2)} ms, p99 ${fmt(r.latency.p99, 2)} ms, max ${fmt(r.latency.max, 1)} ms (${outcomes}${dropped}; ${cpu})`;
}

function describeRun(data: RunData, definition: ScenarioDefinition, fleetsim: TargetRun, baseline: TargetRun | undefined): string[] {
  const unit = definition.requests.metric === 'watch_delivered' ? 'deliveries' : 'requests';
  const lines = [`fleetsim bench ${data.scenario}${data.remote ? ` against ${data.remote.allocator}` : ''}: ${data.ok ? 'ok' : 'FAILED'}`];
  lines.push(`  ${describeTarget(fleetsim, unit, data.remote !== undefined)}`);
  if (baseline) lines.push(`  ${describeTarget(baseline, unit, false)}`);
  if (data.baselineRatio !== undefined) lines.push(`  ratio ${fmt(data.baselineRatio, 3)}: ${definition.ratioMeaning}`);
  // Other programs on the machine take CPU from the server and k6 alike: say so when they did.
  for (const sentence of disturbances(data)) lines.push(`  warning: ${sentence}`);
  for (const t of fleetsim.result.thresholds) lines.push(`  ${t.ok ? '✓' : '✗'} ${t.metric} ${t.expression}`);
  if (data.server) {
    const rss = data.server.memory.reduce((max, [, bytes]) => Math.max(max, bytes), 0);
    lines.push(
      `  server: ${fmt(data.server.cpuSeconds, 1)} CPU s over ${fmt(data.durationSeconds, 1)} s, peak RSS ${fmt(rss / 1048576, 0)} MiB, ${data.server.eventsCommitted} events committed`,
    );
  }
  const last = data.fleet.at(-1);
  if (last) lines.push(`  fleet at the end: ${last.replicas} replicas, ${last.ready} Ready, ${last.allocated} Allocated`);
  return lines;
}
