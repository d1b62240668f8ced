import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { renderRun } from '../reports/render.js';
import type { RunData, Series, ServerFigures, TargetResult } from '../reports/run-data.js';
import { parseFeatureGates } from '../server/features.js';
import { countEvents, fleetOverTime } from './event-log-figures.js';
import { K6_THRESHOLDS_FAILED, type K6Outcome, findK6, k6Version, runK6 } from './k6.js';
import { type K6Summary, type SeriesFigures, counterTotal, readSamples, readSummary, seriesFigures, thresholdResults } from './k6-results.js';
import { REPO_ROOT } from './paths.js';
import { ProcessSampler, readMachineBusySeconds } from './proc-stats.js';
import { type BenchSettings, SCENARIOS, type ScenarioDefinition, scriptPath } from './scenarios.js';
import { type RunningFleetsim, gameServerNames, request, requestJson, startBaselineProcess, startFleetsim, waitForFleet } from './servers.js';
import { ALLOCATION_PROTO } from '../server/grpc/allocation-grpc.js';

/**
 * One `fleetsim bench` run: a fresh fleetsim with the scenario's fixture, the real k6 against
 * it, then (with --baseline) the same script against the baseline server; the figures go to
 * `run.json` in the run's folder and the report renderer turns that into the report.
 */

export type Log = (line: string) => void;

interface TargetRun {
  result: TargetResult;
  outcome: K6Outcome;
  summary: K6Summary;
  figures: SeriesFigures;
  dropped: number;
  /** CPU seconds during the k6 run: the server's, k6's, the whole machine's, and the rest. */
  cpu: { server: number; k6: number; machine: number; other: number };
  /** The server's resident memory over the run. */
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

async function runTarget(
  target: 'fleetsim' | 'baseline',
  definition: ScenarioDefinition,
  settings: BenchSettings,
  dir: string,
  server: { baseUrl: string; pid: number },
  k6: string,
  namesFile: string | undefined,
  log: Log,
  extraEnv: Record<string, string> = {},
): Promise<TargetRun> {
  const { baseUrl } = server;
  const summaryPath = join(dir, `k6-${target}-summary.json`);
  const jsonPath = join(dir, `k6-${target}.json`);
  const env: Record<string, string> = { BASE_URL: baseUrl, TARGET: target, ...definition.k6Env(settings), ...extraEnv };
  if (namesFile) env.NAMES_FILE = namesFile;
  log(`  k6 → ${target} (${baseUrl})`);
  // Prometheus scrapes fleetsim, not the baseline: what fleetsim's metrics cost shows in the ratio.
  const scraper = target === 'fleetsim' && settings.scrapeSeconds > 0 ? new MetricsScraper(baseUrl, settings.scrapeSeconds) : undefined;
  const serverSampler = new ProcessSampler(server.pid);
  let k6Sampler: ProcessSampler | undefined;
  const machineAtStart = readMachineBusySeconds();
  serverSampler.start();
  scraper?.start();
  let outcome: K6Outcome;
  let serverFigures: { cpuSeconds: number; memory: Series };
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
      onStart: (pid) => {
        k6Sampler = new ProcessSampler(pid, 200);
        k6Sampler.start();
      },
    });
  } finally {
    await scraper?.stop();
    serverFigures = serverSampler.stop();
    k6Cpu = k6Sampler?.stop().cpuSeconds ?? 0;
  }
  const machineBusy = readMachineBusySeconds() - machineAtStart;
  if (scraper) log(`  scraped ${baseUrl}/metrics ${scraper.scrapes} times (every ${settings.scrapeSeconds} s)${scraper.failures ? `, ${scraper.failures} failed` : ''}`);
  const cpu = {
    server: round(serverFigures.cpuSeconds, 2),
    k6: round(k6Cpu, 2),
    machine: round(machineBusy, 2),
    // Everything else the machine did meanwhile (this harness included, which mostly waits).
    other: round(Math.max(0, machineBusy - serverFigures.cpuSeconds - k6Cpu), 2),
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
  return { result, outcome, summary, figures, dropped: counterTotal(summary, 'dropped_iterations'), cpu, memory: serverFigures.memory };
}

/**
 * The allocator's address and the client's certificate files, read from its Service and Secrets
 * as Agones's guide tells a client to, for a script that calls it over mutual TLS.
 */
export async function allocatorClientFiles(fleetsim: RunningFleetsim, dir: string): Promise<Record<string, string>> {
  const secret = async (namespace: string, name: string, key: string) => {
    const object = await requestJson<{ data: Record<string, string> }>(fleetsim.baseUrl, 'GET', `/api/v1/namespaces/${namespace}/secrets/${name}`);
    return Buffer.from(object.data[key] ?? '', 'base64').toString('utf8');
  };
  if (!fleetsim.allocatorAddress) throw new Error('fleetsim printed no allocator address');
  return {
    ALLOCATOR_ADDRESS: fleetsim.allocatorAddress,
    CLIENT_CERT: writeText(join(dir, 'client.crt'), await secret('default', 'allocator-client.default', 'tls.crt')),
    CLIENT_KEY: writeText(join(dir, 'client.key'), await secret('default', 'allocator-client.default', 'tls.key')),
    CA_CERT: writeText(join(dir, 'ca.crt'), await secret('agones-system', 'allocator-tls-ca', 'tls-ca.crt')),
    PROTO_DIR: dirname(ALLOCATION_PROTO),
  };
}

function writeText(path: string, text: string): string {
  writeFileSync(path, text.endsWith('\n') ? text : `${text}\n`);
  return path;
}

export async function runBench(settings: BenchSettings, dir: string, log: Log): Promise<BenchResult> {
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
  try {
    fleetsim = await startFleetsim({
      dbPath,
      logPath: join(dir, 'fleetsim.log'),
      manifests,
      profiles,
      nodes,
      maxPods: 110,
      featureGates: gates,
      allocatorModel: settings.allocatorModel,
      allocatorTls: definition.allocatorTls,
    });
    log(`  fleetsim serving on ${fleetsim.baseUrl} (pid ${fleetsim.process.pid}, ${nodes} nodes)`);
    const tlsEnv = definition.allocatorTls ? await allocatorClientFiles(fleetsim, dir) : {};
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
    // Scraped once before the load, as a running Prometheus would have: metrics are followed from then on.
    if (settings.scrapeSeconds > 0) await request(fleetsim.baseUrl, 'GET', '/metrics');
    if (settings.baseline) {
      // Recorded before the run, so the baseline answers exactly what fleetsim answers to a fresh fleet.
      const config = await definition.capture(fleetsim.baseUrl, settings, names);
      baselineConfigPath = writeText(join(dir, 'baseline-config.json'), JSON.stringify(config, null, 2));
    }
    fleetsimRun = await runTarget('fleetsim', definition, settings, dir, { baseUrl: fleetsim.baseUrl, pid: fleetsim.process.pid }, k6, namesFile, log, tlsEnv);
  } finally {
    await fleetsim?.process.stop();
  }

  const { startedAtMs, endedAtMs } = fleetsimRun.outcome;
  const server: ServerFigures = {
    // fleetsim is left as it is: allocation latency is the request side, k6's http_req_duration.
    allocationLatencyHistogram: definition.allocation ? fleetsimRun.figures.latencyHistogram : [],
    eventsCommitted: countEvents(dbPath, startedAtMs, endedAtMs),
    cpuSeconds: fleetsimRun.cpu.server,
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
      baselineRun = await runTarget('baseline', definition, settings, dir, { baseUrl: baseline.baseUrl, pid: baseline.process.pid }, k6, namesFile, log);
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

  const fleetsimOk = fleetsimRun.outcome.exitCode === 0 && fleetsimRun.result.thresholds.every((t) => t.ok);
  const data: RunData = {
    version: 1,
    scenario: settings.scenario,
    startedAt: startedAt.toISOString(),
    durationSeconds: round((endedAtMs - startedAtMs) / 1000),
    options: {
      duration: settings.duration,
      loadSeconds: settings.durationSeconds,
      rate: settings.rate,
      vus: settings.vus,
      fleetSize: settings.fleetSize,
      session: settings.session,
      p99Ms: settings.p99Ms,
      baseline: settings.baseline,
      nodes,
      featureGates: gates,
      allocatorModel: settings.allocatorModel,
      scrapeMetricsSeconds: settings.scrapeSeconds,
      k6: version,
      cpus: cpus().length,
      baselineRatioMeaning: definition.ratioMeaning,
      ...(settings.scenarioFile && { scenarioFile: relative(REPO_ROOT, settings.scenarioFile) }),
      ...(settings.timeScale !== undefined && { timeScale: settings.timeScale }),
      droppedIterations: fleetsimRun.dropped,
      k6CpuSeconds: fleetsimRun.cpu.k6,
      otherCpuSeconds: fleetsimRun.cpu.other,
      ...(baselineRun && {
        baselineDroppedIterations: baselineRun.dropped,
        baselineServerCpuSeconds: baselineRun.cpu.server,
        baselineK6CpuSeconds: baselineRun.cpu.k6,
        baselineOtherCpuSeconds: baselineRun.cpu.other,
      }),
    },
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
    ok: fleetsimOk,
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(data, null, 2));

  // The report (index.html with SVG charts, summary.md) is the renderer's: reports/render.ts.
  await renderRun(dir);
  return { dir, data, report: describeRun(data, definition, fleetsimRun, baselineRun) };
}

const fmt = (value: number, digits = 1) => value.toFixed(digits);

function describeTarget(run: TargetRun, unit: string): string {
  const r = run.result;
  const outcomes = Object.entries(r.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const dropped = run.dropped > 0 ? `, ${run.dropped} iterations dropped` : '';
  const cpu = `CPU s: server ${fmt(run.cpu.server)}, k6 ${fmt(run.cpu.k6)}, other programs ${fmt(run.cpu.other)}`;
  return `${r.target.padEnd(8)} ${fmt(r.requestRate)} ${unit}/s, p50 ${fmt(r.latency.p50, 2)} ms, p99 ${fmt(r.latency.p99, 2)} ms, max ${fmt(r.latency.max, 1)} ms (${outcomes}${dropped}; ${cpu})`;
}

function describeRun(data: RunData, definition: ScenarioDefinition, fleetsim: TargetRun, baseline: TargetRun | undefined): string[] {
  const unit = definition.requests.metric === 'watch_delivered' ? 'deliveries' : 'requests';
  const lines = [`fleetsim bench ${data.scenario}: ${data.ok ? 'ok' : 'FAILED'}`];
  lines.push(`  ${describeTarget(fleetsim, unit)}`);
  if (baseline) lines.push(`  ${describeTarget(baseline, unit)}`);
  if (data.baselineRatio !== undefined) lines.push(`  ratio ${fmt(data.baselineRatio, 3)}: ${definition.ratioMeaning}`);
  // Other programs on the machine take CPU from the server and k6 alike: say so when they did.
  for (const run of [fleetsim, baseline]) {
    if (run && run.cpu.other > 0.1 * data.durationSeconds * cpus().length) {
      lines.push(`  warning: other programs used ${fmt(run.cpu.other)} CPU s during the ${run.result.target} run (${cpus().length} cores): its figures are disturbed`);
    }
  }
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
