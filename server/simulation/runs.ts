import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { SimulationSummary, SimulationTiming } from '../../reports/simulation-data.js';
import { comparisonMarkdown, comparisonPage, simulationMarkdown, simulationPage } from '../../reports/simulation-report.js';
import { type Scenario, type ScenarioSource, parseScenario, readScenario } from './scenario.js';
import { checkScenario, simulate } from './runner.js';
import { type Variation, applyVariation, variantLabel } from './vary.js';

/**
 * `fleetsim simulate`: one scenario, one scenario varied (`--vary`), or several scenario files
 * side by side. Every variant is read and set up before any runs, so a mistake in the last one
 * stops the whole before anything has run; each variant gets its own folder (report and log).
 */

export interface SimulateRequest {
  files: string[];
  /**
   * A scenario that is no file (a recording's): read afresh for each run. It runs first as it is,
   * under `label`, then once per --vary value.
   */
  source?: { read: () => ScenarioSource; label: string };
  vary?: Variation;
  out: string;
  log: (line: string) => void;
}

interface Variant {
  label: string | null;
  scenario: Scenario;
  dir: string;
}

/** A folder name for a label: `bufferSize=10%` → `bufferSize-10pct`. */
function slug(label: string): string {
  return label.replace(/%/g, 'pct').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'variant';
}

function plan(request: SimulateRequest): Variant[] {
  const { files, vary, out, source: given } = request;
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

/** `24 h`, or `61.5 min` for a run not of whole hours (a recording's). */
function durationText(ms: number): string {
  const hours = ms / 3_600_000;
  return Number.isInteger(hours) ? `${hours} h` : `${Math.round(ms / 6_000) / 10} min`;
}

/** The run's log file, new: a leftover from an earlier run in the same folder is removed. */
function freshLog(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'fleetsim.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  return db;
}

export async function runSimulations(request: SimulateRequest): Promise<SimulationSummary[]> {
  const variants = plan(request);
  for (const variant of variants) await checkScenario(variant.scenario);
  const summaries: SimulationSummary[] = [];
  const timings: SimulationTiming[] = [];
  for (const variant of variants) {
    const name = variant.label ? `${variant.scenario.name} (${variant.label})` : variant.scenario.name;
    request.log(`simulating ${name}: ${durationText(variant.scenario.durationMs)} …`);
    const db = freshLog(variant.dir);
    const result = await simulate(variant.scenario, {
      db,
      onProgress: (simulatedMs, wallMs) => {
        if (simulatedMs % (6 * 3_600_000) === 0) request.log(`  ${simulatedMs / 3_600_000} h simulated in ${(wallMs / 1000).toFixed(1)} s`);
      },
    });
    const summary = { ...result.summary, file: basename(variant.scenario.file), variant: variant.label };
    writeRun(variant.dir, summary, result.timing);
    summaries.push(summary);
    timings.push(result.timing);
    const a = summary.allocations;
    request.log(
      `  ${a.allocated} allocated, ${a.failed} gave up, cost ${summary.cost.total} ${summary.cost.currency}; ` +
        `${result.timing.wallSeconds} s wall (${result.timing.speedup}× real time), peak memory ${Math.round(result.timing.peakRssBytes / 2 ** 20)} MiB`,
    );
    request.log(`  report: ${join(variant.dir, 'index.html')}  log: ${db}`);
  }
  if (variants.length > 1) {
    const links = variants.map((v) => `${basename(v.dir)}/index.html`);
    writeFileSync(join(request.out, 'summary.json'), `${JSON.stringify(summaries, null, 2)}\n`);
    writeFileSync(join(request.out, 'summary.md'), comparisonMarkdown(summaries));
    writeFileSync(join(request.out, 'index.html'), comparisonPage(summaries, links));
    writeFileSync(join(request.out, 'timing.json'), `${JSON.stringify(timings, null, 2)}\n`);
    request.log(`comparison: ${join(request.out, 'index.html')}`);
  }
  return summaries;
}
