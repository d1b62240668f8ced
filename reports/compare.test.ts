import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { barsOf, chartsOf, linesOf, plottedStrokes, textsOf } from '../test/helpers/chart-svg.js';
import { type ComparisonRow, compareRuns, compareSummaries, defaultCompareDir, formatDelta, verdict } from './compare.js';
import { RUN_A_COLOR, RUN_B_COLOR } from './page.js';
import { reportCommand } from './report-command.js';
import type { RunData } from './run-data.js';
import { sampleRun } from './run-fixture.js';
import { summarizeRun } from './summary.js';
import { tempDir } from '../test/helpers/temp-dir.js';

function runDir(parent: string, name: string, run: RunData): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
  return dir;
}

/** Run A and a run B that is faster, fails one threshold, and saw a new outcome. */
function twoRuns(): { a: RunData; b: RunData } {
  const a = sampleRun({ scenario: 'allocate-burst' });
  a.fleetsim.requestRate = 1000;
  a.fleetsim.latency.p99 = 40;
  a.fleetsim.outcomes = { Allocated: 50_000, UnAllocated: 100, error: 12 };
  a.server!.cpuSeconds = 90;

  const b = sampleRun({ scenario: 'allocate-burst', seed: 2 });
  b.fleetsim.requestRate = 1200;
  b.fleetsim.latency.p99 = 30;
  b.fleetsim.outcomes = { Allocated: 60_000, UnAllocated: 2_000, error: 30, Timeout: 4 };
  b.fleetsim.thresholds[0]!.ok = false;
  b.ok = false;
  b.server!.cpuSeconds = 90.5;
  return { a, b };
}

function row(rows: ComparisonRow[], key: string): ComparisonRow {
  const found = rows.find((r) => r.key === key);
  if (!found) throw new Error(`no row ${key}`);
  return found;
}

describe('compareSummaries', () => {
  const { a, b } = twoRuns();
  const rows = compareSummaries(summarizeRun(a), summarizeRun(b));

  it('puts the change from A to B and whether it is an improvement on every figure', () => {
    expect([formatDelta(row(rows, 'requestRate')), verdict(row(rows, 'requestRate'))]).toEqual(['+200/s (+20.0%)', 'better']);
    expect([formatDelta(row(rows, 'latency.p99')), verdict(row(rows, 'latency.p99'))]).toEqual(['-10 ms (-25.0%)', 'better']);
    expect([formatDelta(row(rows, 'outcome.error')), verdict(row(rows, 'outcome.error'))]).toEqual(['+18 (+150.0%)', 'worse']);
    expect([formatDelta(row(rows, 'outcome.UnAllocated')), verdict(row(rows, 'outcome.UnAllocated'))]).toEqual(['+1,900 (+1900.0%)', 'worse']);
    expect([formatDelta(row(rows, 'duration')), verdict(row(rows, 'duration'))]).toEqual(['0', '']);
    expect([formatDelta(row(rows, 'thresholdsFailed')), verdict(row(rows, 'thresholdsFailed'))]).toEqual(['+1', 'worse']);
    // Half a CPU second more out of 90 is within the 1% that counts as the same.
    expect([formatDelta(row(rows, 'server.cpuSeconds')), verdict(row(rows, 'server.cpuSeconds'))]).toEqual(['+0.5 s (+0.6%)', 'same']);
    // Shares move in percentage points: 99.78% of A's outcomes were Allocated, 96.72% of B's.
    expect([formatDelta(row(rows, 'allocatedShare')), verdict(row(rows, 'allocatedShare'))]).toEqual(['-3.06 pp', 'worse']);
  });

  it('keeps a figure only one run has, next to its neighbours', () => {
    const keys = rows.map((r) => r.key);
    expect(keys.slice(keys.indexOf('outcome.Allocated'), keys.indexOf('outcome.Allocated') + 4)).toEqual([
      'outcome.Allocated',
      'outcome.UnAllocated',
      'outcome.error',
      'outcome.Timeout',
    ]);
    expect(row(rows, 'outcome.Timeout')).toMatchObject({ a: null, b: 4 });
    expect(formatDelta(row(rows, 'outcome.Timeout'))).toBe('—');
  });
});

describe('compareRuns', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes an HTML page with both runs overlaid and returns the Markdown table', async () => {
    const parent = tempDir('fleetsim-compare-');
    const { a, b } = twoRuns();
    const dirA = runDir(parent, 'run-a', a);
    const dirB = runDir(parent, 'run-b', b);
    const out = join(parent, 'out');
    const markdown = await compareRuns(dirA, dirB, out);

    expect(readFileSync(join(out, 'compare.md'), 'utf8')).toBe(markdown);
    expect(markdown).toContain('| figure | A | B | change | B vs A |');
    expect(markdown).toContain('| request rate | 1,000/s | 1,200/s | +200/s (+20.0%) | better |');
    expect(markdown).toContain('| latency p99 | 40 ms | 30 ms | -10 ms (-25.0%) | better |');
    expect(markdown).toContain('| outcome error | 12 | 30 | +18 (+150.0%) | worse |');
    expect(markdown).toContain('| result | **PASS** | **FAIL** |');

    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const charts = chartsOf(html);
    expect(charts.size).toBe(7);
    // A solid, B dashed, in their colours, on every chart over time.
    const rate = charts.get('Request rate over time')!;
    expect(linesOf(rate).map((line) => [line.color, line.dash])).toEqual([[RUN_A_COLOR, ''], [RUN_B_COLOR, '7,4']]);
    expect(textsOf(rate)).toEqual(expect.arrayContaining(['A', 'B', 'requests / s']));
    const latency = charts.get('Request latency percentiles over time')!;
    expect(textsOf(latency)).toEqual(expect.arrayContaining(['A p50', 'A p95', 'A p99', 'B p50', 'B p95', 'B p99']));
    expect(linesOf(latency).map((line) => line.dash)).toEqual(['', '', '', '7,4', '7,4', '7,4']);
    // B saw an outcome A did not: both runs' bars for every outcome.
    const outcomes = charts.get('Outcomes')!;
    expect(barsOf(outcomes).map((bar) => bar.color)).toEqual([...Array(4).fill(RUN_A_COLOR), ...Array(4).fill(RUN_B_COLOR)]);
    expect(textsOf(outcomes)).toContain('Timeout');
    // Histograms overlay both runs; percentile markers belong to one run's page only.
    const watch = charts.get('Watch delivery latency distribution')!;
    expect(new Set(barsOf(watch).map((bar) => bar.color))).toEqual(new Set([RUN_A_COLOR, RUN_B_COLOR]));
    expect(plottedStrokes(watch).filter((stroke) => stroke.dash === '4,3')).toEqual([]);
    expect(html).toContain('<td class="num good">+200/s (+20.0%)</td>');
    expect(html).toContain('<td class="num bad">+18 (+150.0%)</td>');
    expect(html).not.toMatch(/<script|<link|\bsrc=|\bhref=|url\((?!#)/i);
  });

  it('writes beside run A when no folder is given', async () => {
    const parent = tempDir('fleetsim-compare-');
    const { a, b } = twoRuns();
    const dirA = runDir(parent, 'run-a', a);
    const dirB = runDir(parent, 'run-b', b);
    await compareRuns(dirA, dirB);
    expect(defaultCompareDir(dirA, dirB)).toBe(join(parent, 'compare-run-a-vs-run-b'));
    expect(existsSync(join(parent, 'compare-run-a-vs-run-b', 'index.html'))).toBe(true);
  });

  it('is the `fleetsim report compare` command, the table on stdout', async () => {
    const parent = tempDir('fleetsim-compare-');
    const { a, b } = twoRuns();
    const dirA = runDir(parent, 'run-a', a);
    const dirB = runDir(parent, 'run-b', b);
    const stdout: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });
    vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await reportCommand(['compare', dirA, dirB, '--out', join(parent, 'cmp')])).toBe(0);
    expect(stdout.join('')).toContain('| request rate | 1,000/s | 1,200/s | +200/s (+20.0%) | better |');
    expect(existsSync(join(parent, 'cmp', 'index.html'))).toBe(true);

    expect(await reportCommand(['render', dirA])).toBe(0);
    expect(existsSync(join(dirA, 'index.html'))).toBe(true);
    await expect(reportCommand(['compare', dirA])).rejects.toThrow(/two run folders/);
    await expect(reportCommand(['publish'])).rejects.toThrow(/unknown report action/);
  });
});
