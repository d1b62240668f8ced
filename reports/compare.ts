/**
 * Two runs side by side: their key figures with the change from A to B, and their charts overlaid
 * (A solid, B dashed). Writes `index.html` and `compare.md` into the output folder and returns the
 * Markdown table, which the CLI prints.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { escapeXml, formatDuration, formatTimestamp, markdownCode, markdownText } from './format.js';
import { type Cell, type Chart, RUN_A_COLOR, RUN_B_COLOR, chartGrid, code, htmlPage, htmlTable, section } from './page.js';
import { fleetChart, latencyChart, latencyHistogramChart, memoryChart, outcomesChart, requestRateChart, type Side } from './run-charts.js';
import type { RunData } from './run-data.js';
import { bucketCounts, readRun } from './run-file.js';
import { type FigureRow, type RunSummary, type Unit, figureRows, formatFigure, markdownTable, statusWord, summarizeRun } from './summary.js';

/** Changes smaller than this share of A's value count as "same". */
export const SAME_WITHIN = 0.01;

export type Verdict = 'better' | 'worse' | 'same' | '';

export interface ComparisonRow {
  key: string;
  label: string;
  unit: Unit;
  better: FigureRow['better'];
  a: number | null;
  b: number | null;
}

/** fleetsim's figures of both runs, matched by key; a figure only one run has keeps its place. */
export function compareSummaries(a: RunSummary, b: RunSummary): ComparisonRow[] {
  const rowsA = figureRows(a);
  const rowsB = figureRows(b);
  const order = rowsA.map((r) => r.key);
  rowsB.forEach((row, i) => {
    if (order.includes(row.key)) return;
    const previous = i > 0 ? order.indexOf(rowsB[i - 1]!.key) : -1;
    order.splice(previous + 1, 0, row.key);
  });
  const byKey = (rows: FigureRow[]) => new Map(rows.map((r) => [r.key, r]));
  const mapA = byKey(rowsA);
  const mapB = byKey(rowsB);
  return order.map((key) => {
    const template = (mapA.get(key) ?? mapB.get(key))!;
    return {
      key,
      label: template.label,
      unit: template.unit,
      better: template.better,
      a: mapA.get(key)?.fleetsim ?? null,
      b: mapB.get(key)?.fleetsim ?? null,
    };
  });
}

function known(value: number | null): value is number {
  return value !== null && Number.isFinite(value);
}

/** B's value relative to A's: 0.2 for 20 % more; null when A is zero or either is unknown. */
export function relativeChange(row: ComparisonRow): number | null {
  if (!known(row.a) || !known(row.b) || row.a === 0) return null;
  return (row.b - row.a) / Math.abs(row.a);
}

/** The change from A to B in the figure's unit, with the relative change: "+200/s (+20.0%)". */
export function formatDelta(row: ComparisonRow): string {
  if (!known(row.a) || !known(row.b)) return '—';
  const delta = row.b - row.a;
  if (delta === 0) return '0';
  const sign = delta > 0 ? '+' : '-';
  const size = Math.abs(delta);
  if (row.unit === 'share') return `${sign}${(size * 100).toFixed(2)} pp`;
  const relative = relativeChange(row);
  const percent = relative === null ? '' : ` (${sign}${(Math.abs(relative) * 100).toFixed(1)}%)`;
  return `${sign}${formatFigure(size, row.unit)}${percent}`;
}

/** Whether B is better than A on a figure with a direction; "same" within SAME_WITHIN. */
export function verdict(row: ComparisonRow): Verdict {
  if (row.better === null || !known(row.a) || !known(row.b)) return '';
  const relative = relativeChange(row);
  const size = relative === null ? (row.b === row.a ? 0 : Infinity) : Math.abs(relative);
  if (size < SAME_WITHIN) return 'same';
  const up = row.b > row.a;
  return up === (row.better === 'higher') ? 'better' : 'worse';
}

export interface RunRef {
  /** The folder, as the user named it. */
  dir: string;
  run: RunData;
  summary: RunSummary;
}

/** The Markdown comparison: which run is which, then every figure with its change. */
export function comparisonMarkdown(a: RunRef, b: RunRef, rows: readonly ComparisonRow[]): string {
  const runs = markdownTable(
    ['', 'A', 'B'],
    [
      ['run', markdownCode(a.dir, true), markdownCode(b.dir, true)],
      ['scenario', markdownCode(a.run.scenario, true), markdownCode(b.run.scenario, true)],
      ['started', formatTimestamp(a.run.startedAt), formatTimestamp(b.run.startedAt)],
      ['result', `**${statusWord(a.run.ok)}**`, `**${statusWord(b.run.ok)}**`],
    ],
    ['left', 'left', 'left'],
  );
  const figures = markdownTable(
    ['figure', 'A', 'B', 'change', 'B vs A'],
    rows.map((row) => [markdownText(row.label), formatFigure(row.a, row.unit), formatFigure(row.b, row.unit), formatDelta(row), verdict(row)]),
    ['left', 'right', 'right', 'right', 'left'],
  );
  return [
    '# fleetsim load tests compared',
    '',
    runs,
    '',
    figures,
    '',
    `Figures are fleetsim's. "same": within ${SAME_WITHIN * 100}% of A.`,
    '',
  ].join('\n');
}

function comparisonCharts(a: RunRef, b: RunRef): Chart[] {
  const side = <T>(name: 'A' | 'B', data: T): Side<T> => ({
    name,
    color: name === 'A' ? RUN_A_COLOR : RUN_B_COLOR,
    dashed: name === 'B',
    data,
  });
  const both = <T>(pick: (run: RunData) => T | undefined): Array<Side<T>> =>
    [side('A', pick(a.run)), side('B', pick(b.run))].filter((s): s is Side<T> => s.data !== undefined);
  const note = 'A solid, B dashed';
  const until = Math.max(a.run.durationSeconds, b.run.durationSeconds);
  const charts: Chart[] = [
    { title: 'Request rate', note: `fleetsim, ${note}`, wide: true, draw: (w) => requestRateChart(both((r) => r.fleetsim), w, until) },
    { title: 'Request latency', note: `fleetsim p50, p95, p99 — ${note}`, wide: true, draw: (w) => latencyChart(both((r) => r.fleetsim), w, until) },
  ];
  const fleets = both((r) => (r.fleet.length > 0 ? r.fleet : undefined));
  if (fleets.length > 0) charts.push({ title: 'Fleet', note, wide: true, draw: (w) => fleetChart(fleets, w, until) });
  const outcomes = both((r) => (Object.keys(r.fleetsim.outcomes).length > 0 ? r.fleetsim.outcomes : undefined));
  if (outcomes.length > 0) charts.push({ title: 'Outcomes', note: 'fleetsim', wide: false, draw: (w) => outcomesChart(outcomes, w) });
  const watch = both((r) => (r.watchDelivery && r.watchDelivery.histogram.length > 0 ? { buckets: bucketCounts(r.watchDelivery.histogram, r.watchDelivery.count) } : undefined));
  if (watch.length > 0) {
    charts.push({ title: 'Watch delivery latency', wide: false, draw: (w) => latencyHistogramChart('Watch delivery latency distribution', 'changes', watch, w) });
  }
  const allocation = both((r) =>
    r.server && r.server.allocationLatencyHistogram.length > 0 ? { buckets: bucketCounts(r.server.allocationLatencyHistogram) } : undefined,
  );
  if (allocation.length > 0) {
    charts.push({ title: 'Allocation latency in the server', wide: false, draw: (w) => latencyHistogramChart('Allocation latency inside the server', 'allocations', allocation, w) });
  }
  const memory = both((r) => (r.server && r.server.memory.length > 0 ? r.server.memory : undefined));
  if (memory.length > 0) charts.push({ title: 'Server memory', note, wide: false, draw: (w) => memoryChart(memory, w, until) });
  return charts;
}

function runsTable(a: RunRef, b: RunRef): string {
  const row = (ref: RunRef, name: string): Cell[] => [
    { text: name, className: name === 'A' ? 'run-a' : 'run-b' },
    { text: ref.dir, code: true },
    { text: ref.run.scenario, code: true },
    formatTimestamp(ref.run.startedAt),
    formatDuration(ref.run.durationSeconds),
    { text: statusWord(ref.run.ok), className: ref.run.ok ? 'good' : 'bad' },
  ];
  return htmlTable(['', 'run', 'scenario', 'started', 'duration', 'result'], [row(a, 'A'), row(b, 'B')]);
}

function figuresTable(rows: readonly ComparisonRow[]): string {
  const tone = (v: Verdict): string => (v === 'better' ? 'good' : v === 'worse' ? 'bad' : 'muted');
  return htmlTable(
    ['figure', { text: 'A', className: 'num' }, { text: 'B', className: 'num' }, { text: 'change', className: 'num' }, 'B vs A'],
    rows.map((row) => {
      const v = verdict(row);
      return [
        row.label,
        { text: formatFigure(row.a, row.unit), className: 'num' },
        { text: formatFigure(row.b, row.unit), className: 'num' },
        { text: formatDelta(row), className: `num ${tone(v)}` },
        { text: v, className: tone(v) },
      ];
    }),
  );
}

/** The HTML of a comparison page. */
export function comparisonPage(a: RunRef, b: RunRef, rows: readonly ComparisonRow[] = compareSummaries(a.summary, b.summary)): string {
  const body = [
    `<header>\n<h1>Load tests compared</h1>\n<p class="meta">A ${code(a.run.scenario)} against B ${code(b.run.scenario)}; charts overlay A (solid) and B (dashed).</p>\n</header>`,
    section('Runs', runsTable(a, b)),
    section('Key figures', `${figuresTable(rows)}\n<p class="muted">Figures are fleetsim's. "same": within ${escapeXml(String(SAME_WITHIN * 100))}% of A.</p>`),
    section('Charts', chartGrid(comparisonCharts(a, b))),
    '<footer>Rendered by <code>fleetsim report compare</code>. Also in this folder: compare.md.</footer>',
  ];
  return htmlPage(`Load tests compared: ${a.run.scenario} / ${b.run.scenario}`, body.join('\n'));
}

/** Where a comparison goes without --out: beside run A, named after both runs. */
export function defaultCompareDir(a: string, b: string): string {
  return join(dirname(resolve(a)), `compare-${basename(resolve(a))}-vs-${basename(resolve(b))}`);
}

/**
 * Compares the runs in folders `a` and `b`: writes `index.html` and `compare.md` into `out`
 * (default: `defaultCompareDir(a, b)`) and returns the Markdown.
 */
export async function compareRuns(a: string, b: string, out?: string): Promise<string> {
  const [runA, runB] = await Promise.all([readRun(a), readRun(b)]);
  const refA: RunRef = { dir: a, run: runA, summary: summarizeRun(runA) };
  const refB: RunRef = { dir: b, run: runB, summary: summarizeRun(runB) };
  const rows = compareSummaries(refA.summary, refB.summary);
  const markdown = comparisonMarkdown(refA, refB, rows);
  const dir = out ?? defaultCompareDir(a, b);
  await mkdir(dir, { recursive: true });
  await Promise.all([writeFile(join(dir, 'index.html'), comparisonPage(refA, refB, rows)), writeFile(join(dir, 'compare.md'), markdown)]);
  return markdown;
}
