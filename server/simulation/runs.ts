import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import type { SimulationSummary, SimulationTiming } from '../../reports/simulation-data.js';
import { comparisonMarkdown, comparisonPage, simulationMarkdown, simulationPage } from '../../reports/simulation-report.js';
import { ScenarioError } from './fields.js';
import { AS_RECORDED, recordingScenario } from './from-recording.js';
import { type Scenario, type ScenarioSource, parseScenario, readScenario } from './scenario.js';
import { type EventLogDetail, type SimulationProgress, checkScenario, simulate } from './runner.js';
import { type Variation, applyVariation, variantLabel } from './vary.js';

/**
 * `fleetsim simulate`: one scenario, one scenario varied (`--vary`), or several scenario files
 * side by side. Every variant is read and set up before any runs, so a mistake in the last one
 * stops the whole before anything has run; each variant gets its own folder (report and log).
 * Variants run at once, each in a process of its own (variant-process.ts), as many as `jobs`:
 * a process plans the same variants from the same request and runs its one, so what it writes is
 * what a run in this process writes, byte for byte.
 */

export interface SimulateRequest {
  files: string[];
  /**
   * A recording (`fleetsim record`) instead of files: its scenario runs first as it is (as
   * recorded), then once per --vary value.
   */
  recording?: { db: string; nodeHourPrice: number };
  vary?: Variation;
  out: string;
  /** What each run keeps of its events (default compact). */
  eventLog?: EventLogDetail;
  /** Variants run at once (default: the machine's cores); with 1, one after another in this process. */
  jobs?: number;
  log: (line: string) => void;
}

/** What a variant's process is handed: the request without what cannot cross to it. */
export type PlanRequest = Omit<SimulateRequest, 'log' | 'jobs'>;

export interface Variant {
  label: string | null;
  scenario: Scenario;
  dir: string;
}

/** A folder name for a label: `bufferSize=10%` → `bufferSize-10pct`. */
function slug(label: string): string {
  return label.replace(/%/g, 'pct').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'variant';
}

/** A scenario that is no file (a recording's), read afresh for each run, and the label of its run as it is. */
function sourceOf(request: PlanRequest): { read: () => ScenarioSource; label: string } | undefined {
  if (!request.recording) return undefined;
  const { db, nodeHourPrice } = request.recording;
  return { read: recordingScenario(db, { nodeHourPrice }).read, label: AS_RECORDED };
}

/** Every variant of a request, in order, each read and checked as a scenario (not yet set up). */
export function plan(request: PlanRequest): Variant[] {
  const { files, vary, out } = request;
  const given = sourceOf(request);
  const read = given ? given.read : () => readScenario(files[0]!);
  const varied = (vary?.values ?? []).map((value) => {
    const source = read();
    applyVariation(source, vary!, value);
    const label = variantLabel(vary!, value);
    return { label, scenario: parseScenario(source), dir: join(out, slug(label)) };
  });
  if (given) return [{ label: given.label, scenario: parseScenario(read()), dir: vary ? join(out, slug(given.label)) : out }, ...varied];
  if (vary) return varied;
  if (files.length === 1) return [{ label: null, scenario: parseScenario(readScenario(files[0]!)), dir: out }];
  const seen = new Set<string>();
  return files.map((file) => {
    const scenario = parseScenario(readScenario(file));
    let label = scenario.name;
    if (seen.has(label)) label = basename(file).replace(/\.ya?ml$/, '');
    seen.add(label);
    return { label, scenario, dir: join(out, slug(label)) };
  });
}

function writeRun(dir: string, summary: SimulationSummary, timing: SimulationTiming): void {
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(dir, 'summary.md'), simulationMarkdown(summary));
  writeFileSync(join(dir, 'index.html'), simulationPage(summary));
  writeFileSync(join(dir, 'timing.json'), `${JSON.stringify(timing, null, 2)}\n`);
}

/** `24 h`, or `61.5 min` for a run not of whole hours (a recording's); a part of a run (`of` it) in its run's unit: `6.2 h`. */
function durationText(ms: number, of = ms): string {
  return Number.isInteger(of / 3_600_000) ? `${Math.round(ms / 360_000) / 10} h` : `${Math.round(ms / 6_000) / 10} min`;
}

/** The run's log file, new: a leftover from an earlier run in the same folder is removed. */
function freshLog(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'fleetsim.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  return db;
}

/** The variant's name as its lines tell it: `diurnal (bufferSize=10)`. */
function nameOf(variant: Variant): string {
  return variant.label ? `${variant.scenario.name} (${variant.label})` : variant.scenario.name;
}

/** `6.2 h of 24 h (26%) in 14.1 s, 38,400 events/s, about 41 s to go`: events/s since the last report. */
function progressLine(progress: SimulationProgress, previous: SimulationProgress | undefined): string {
  const fraction = progress.simulatedMs / progress.durationMs;
  const since = previous ?? { wallMs: 0, events: 0 };
  const perSecond = ((progress.events - since.events) * 1000) / Math.max(1, progress.wallMs - since.wallMs);
  const left = fraction > 0 ? (progress.wallMs * (1 - fraction)) / fraction : Infinity;
  return (
    `${durationText(progress.simulatedMs, progress.durationMs)} of ${durationText(progress.durationMs)} (${Math.floor(fraction * 100)}%) ` +
    `in ${(progress.wallMs / 1000).toFixed(1)} s, ${Math.round(perSecond).toLocaleString('en')} events/s, about ${secondsText(left)} to go`
  );
}

function secondsText(ms: number): string {
  if (!Number.isFinite(ms)) return 'an unknown time';
  const seconds = Math.ceil(ms / 1000);
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

export interface VariantResult {
  summary: SimulationSummary;
  timing: SimulationTiming;
}

/** Runs one variant in this process, writes its report and log, and tells how it goes (lines without the variant's name). */
export async function runVariant(variant: Variant, eventLog: EventLogDetail | undefined, log: (line: string) => void, spareCore = true): Promise<VariantResult> {
  const db = freshLog(variant.dir);
  let previous: SimulationProgress | undefined;
  const result = await simulate(variant.scenario, {
    db,
    eventLog,
    spareCore,
    onProgress: (progress) => {
      log(progressLine(progress, previous));
      previous = progress;
    },
  });
  const summary = { ...result.summary, file: basename(variant.scenario.file), variant: variant.label };
  writeRun(variant.dir, summary, result.timing);
  const a = summary.allocations;
  log(
    `${a.allocated} allocated, ${a.failed} gave up, cost ${summary.cost.total} ${summary.cost.currency}; ` +
      `${result.timing.wallSeconds} s wall (${result.timing.speedup}× real time), peak memory ${Math.round(result.timing.peakRssBytes / 2 ** 20)} MiB`,
  );
  log(`report: ${join(variant.dir, 'index.html')}  log: ${eventLog === 'none' ? 'none (--log none)' : db}`);
  return { summary, timing: result.timing };
}

export async function runSimulations(request: SimulateRequest): Promise<SimulationSummary[]> {
  const variants = plan(request);
  for (const variant of variants) await checkScenario(variant.scenario);
  const jobs = Math.min(variants.length, request.jobs ?? availableParallelism());
  let results: VariantResult[];
  if (jobs <= 1) {
    results = [];
    for (const variant of variants) {
      request.log(`simulating ${nameOf(variant)}: ${durationText(variant.scenario.durationMs)} …`);
      results.push(await runVariant(variant, request.eventLog, (line) => request.log(`  ${line}`)));
    }
  } else {
    request.log(`simulating ${variants.length} variants, ${jobs} at a time: ${variants.map(nameOf).join(', ')}`);
    results = await runInProcesses(request, variants, jobs);
  }
  const summaries = results.map((r) => r.summary);
  if (variants.length > 1) {
    const links = variants.map((v) => `${basename(v.dir)}/index.html`);
    writeFileSync(join(request.out, 'summary.json'), `${JSON.stringify(summaries, null, 2)}\n`);
    writeFileSync(join(request.out, 'summary.md'), comparisonMarkdown(summaries));
    writeFileSync(join(request.out, 'index.html'), comparisonPage(summaries, links));
    writeFileSync(join(request.out, 'timing.json'), `${JSON.stringify(results.map((r) => r.timing), null, 2)}\n`);
    request.log(`comparison: ${join(request.out, 'index.html')}`);
  }
  return summaries;
}

/** What a variant's process is told: the request, which of its variants to run, and whether a core is free beside it. */
export interface VariantOrder {
  request: PlanRequest;
  index: number;
  spareCore: boolean;
}

/** What a variant's process says: a line to show, its result, or why it failed. */
export type VariantMessage =
  | { type: 'line'; text: string }
  | { type: 'done'; result: VariantResult }
  | { type: 'failed'; message: string; scenario: boolean };

const VARIANT_PROCESS = new URL('./variant-process.js', import.meta.url);

/**
 * Runs the variants `jobs` at a time, each in a process of its own, their lines told under their
 * labels. The first that fails stops the others (their processes are ended) and is thrown; should
 * this process end first, theirs end with it (variant-process.ts).
 */
async function runInProcesses(request: SimulateRequest, variants: Variant[], jobs: number): Promise<VariantResult[]> {
  const planned: PlanRequest = { files: request.files, recording: request.recording, vary: request.vary, out: request.out, eventLog: request.eventLog };
  const results: VariantResult[] = [];
  const running = new Set<ChildProcess>();
  // With a variant on every core, a process's helper threads (the log's writer, V8's parallel
  // collector) only take time from the others' main threads: each does that work itself.
  const spareCore = jobs < availableParallelism();
  const execArgv = spareCore ? process.execArgv : [...process.execArgv, '--single-threaded-gc'];
  const stopAll = () => {
    for (const child of running) child.kill();
  };
  let next = 0;
  let failure: unknown;
  const runOne = (index: number): Promise<VariantResult> =>
    new Promise((resolve, reject) => {
      const variant = variants[index]!;
      const child = fork(VARIANT_PROCESS, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', execArgv });
      running.add(child);
      let settled = false;
      const settle = (action: () => void) => {
        if (settled) return;
        settled = true;
        running.delete(child);
        action();
      };
      child.on('message', (message: VariantMessage) => {
        if (message.type === 'line') request.log(`  ${variant.label ?? variant.scenario.name}: ${message.text}`);
        else if (message.type === 'done') settle(() => resolve(message.result));
        else settle(() => reject(message.scenario ? new ScenarioError(message.message) : new Error(`${nameOf(variant)}: ${message.message}`)));
      });
      child.on('error', (error) => settle(() => reject(error)));
      child.on('exit', (code, signal) => settle(() => reject(new Error(`${nameOf(variant)}: its process ended (${signal ?? `exit code ${code}`}) before its run finished`))));
      child.send({ request: planned, index, spareCore } satisfies VariantOrder);
    });
  const worker = async () => {
    while (failure === undefined && next < variants.length) {
      const index = next++;
      try {
        results[index] = await runOne(index);
      } catch (error) {
        failure ??= error;
        stopAll();
      }
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  if (failure !== undefined) throw failure;
  return results;
}
