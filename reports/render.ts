/**
 * The report of one load-test run: reads `<dir>/run.json` and writes `index.html` (one
 * self-contained page with inline SVG charts), `summary.json` and `summary.md` beside it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  escapeXml,
  formatBytes,
  formatCount,
  formatDuration,
  formatMs,
  formatPercent,
  formatRate,
  formatRatio,
  formatSignificant,
  formatTimestamp,
} from './format.js';
import { type Card, type Cell, type Chart, badge, cards, chartGrid, code, htmlPage, htmlTable, metaLine, section } from './page.js';
import { fleetChart, latencyChart, latencyHistogramChart, memoryChart, outcomesChart, requestRateChart, type Side } from './run-charts.js';
import type { RunData, TargetResult } from './run-data.js';
import { bucketCounts, readRun } from './run-file.js';
import { type RunSummary, figureRows, formatFigure, measuredName, remoteNotes, summarizeRun, summaryMarkdown, targetName } from './summary.js';

/** The files `renderRun` writes into a run's folder. */
export const RUN_REPORT_FILES = ['index.html', 'summary.json', 'summary.md'] as const;

export const FLEETSIM_COLOR = '#2563eb';
export const BASELINE_COLOR = '#64748b';

/** Reads `<dir>/run.json` and writes `index.html`, `summary.json` and `summary.md` into `dir`. */
export async function renderRun(dir: string): Promise<void> {
  const run = await readRun(dir);
  const summary = summarizeRun(run);
  await Promise.all([
    writeFile(join(dir, 'index.html'), runPage(run, summary)),
    writeFile(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`),
    writeFile(join(dir, 'summary.md'), summaryMarkdown(summary)),
  ]);
}

function targetSides(run: RunData): Array<Side<TargetResult>> {
  return [
    { name: measuredName(run.remote), color: FLEETSIM_COLOR, dashed: false, data: run.fleetsim },
    ...(run.baseline ? [{ name: 'baseline', color: BASELINE_COLOR, dashed: true, data: run.baseline }] : []),
  ];
}

/** The charts of a run that has data for them, in page order. */
export function runCharts(run: RunData): Chart[] {
  const targets = targetSides(run);
  const until = run.durationSeconds;
  const withBaseline = run.baseline ? ' — fleetsim solid, baseline dashed' : '';
  const charts: Chart[] = [
    { title: 'Request rate', note: `requests completed per second${withBaseline}`, wide: true, draw: (w) => requestRateChart(targets, w, until) },
    { title: 'Request latency', note: `p50, p95 and p99 per second${withBaseline}`, wide: true, draw: (w) => latencyChart(targets, w, until) },
  ];
  if (run.fleet.length > 0) {
    const fleet = [{ name: 'fleet', color: FLEETSIM_COLOR, dashed: false, data: run.fleet }];
    const source = run.remote ? "from the cluster's API (kubectl get --watch)" : 'from the event log';
    charts.push({ title: 'Fleet', note: `replicas, Ready and Allocated game servers, ${source}`, wide: true, draw: (w) => fleetChart(fleet, w, until) });
  }
  const outcomes = targets.map((t) => ({ ...t, data: t.data.outcomes }));
  if (outcomes.some((o) => Object.keys(o.data).length > 0)) {
    charts.push({ title: 'Outcomes', note: "by status (allocations, or the scenario's own counters)", wide: false, draw: (w) => outcomesChart(outcomes, w) });
  }
  if (run.watchDelivery && run.watchDelivery.histogram.length > 0) {
    const watch = run.watchDelivery;
    const side = { name: 'changes', color: '#0d9488', dashed: false, data: { buckets: bucketCounts(watch.histogram, watch.count), summary: watch } };
    charts.push({
      title: 'Watch delivery latency',
      note: `${formatCount(watch.count)} changes, from commit to the watcher`,
      wide: false,
      draw: (w) => latencyHistogramChart('Watch delivery latency distribution', 'changes', [side], w),
    });
  }
  const server = run.server;
  if (server && server.allocationLatencyHistogram.length > 0) {
    const side = { name: 'allocations', color: FLEETSIM_COLOR, dashed: false, data: { buckets: bucketCounts(server.allocationLatencyHistogram) } };
    charts.push({
      title: 'Allocation request latency',
      note: 'each allocation request, as k6 measured it',
      wide: false,
      draw: (w) => latencyHistogramChart('Allocation request latency', 'allocations', [side], w),
    });
  }
  if (server && server.memory.length > 0) {
    const memory = [{ name: 'resident memory', color: '#9333ea', dashed: false, data: server.memory }];
    charts.push({ title: 'Server memory', note: 'resident set size', wide: false, draw: (w) => memoryChart(memory, w, until) });
  }
  return charts;
}

/** The headline numbers, as cards above the charts. */
function keyCards(summary: RunSummary): Card[] {
  const { fleetsim, baseline, server, watchDeliveryMs: watch } = summary;
  const allocated = fleetsim.outcomes.Allocated;
  const outcomeTotal = Object.values(fleetsim.outcomes).reduce((a, b) => a + b, 0);
  const list: Card[] = [
    { label: 'Request rate', value: formatRate(fleetsim.requestRate), note: baseline ? `baseline ${formatRate(baseline.requestRate)}` : `${formatCount(fleetsim.latencyMs.count)} requests` },
    { label: 'Latency p95', value: formatMs(fleetsim.latencyMs.p95), note: `p50 ${formatMs(fleetsim.latencyMs.p50)} · p99 ${formatMs(fleetsim.latencyMs.p99)}` },
  ];
  if (summary.baselineRatio !== null) list.push({ label: 'Rate vs baseline', value: formatRatio(summary.baselineRatio), note: 'fleetsim / baseline' });
  if (allocated !== undefined) {
    list.push({ label: 'Allocated', value: formatCount(allocated), note: fleetsim.allocatedShare === null ? undefined : `${formatPercent(fleetsim.allocatedShare)} of ${formatCount(outcomeTotal)}` });
  }
  const failed = summary.thresholds.failed;
  list.push({
    label: 'Thresholds',
    value: `${summary.thresholds.passed} / ${summary.thresholds.passed + failed}`,
    note: failed > 0 ? `${failed} failed` : 'all passed',
    tone: failed > 0 ? 'bad' : 'good',
  });
  if (server) {
    list.push(
      { label: 'Server CPU', value: formatFigure(server.cpuCores, 'cores'), note: `${formatSignificant(server.cpuSeconds)} CPU seconds` },
      { label: 'Server memory', value: server.memoryPeakBytes === null ? '—' : formatBytes(server.memoryPeakBytes), note: 'peak resident' },
      { label: 'Events committed', value: formatCount(server.eventsCommitted), note: formatRate(server.eventsPerSecond) },
    );
  }
  if (watch) list.push({ label: 'Watch delivery p99', value: formatMs(watch.p99), note: `p50 ${formatMs(watch.p50)} · p95 ${formatMs(watch.p95)}` });
  return list;
}

function figuresTable(summary: RunSummary): string {
  const hasBaseline = summary.baseline !== null;
  const rows = figureRows(summary).map((row): Cell[] => [
    row.label,
    { text: formatFigure(row.fleetsim, row.unit), className: 'num' },
    ...(hasBaseline ? [{ text: row.scope === 'run' ? '' : formatFigure(row.baseline, row.unit), className: 'num' }] : []),
  ]);
  const headers: Cell[] = ['', { text: measuredName(summary.remote), className: 'num' }, ...(hasBaseline ? [{ text: 'baseline', className: 'num' }] : [])];
  return htmlTable(headers, rows);
}

function thresholdsTable(summary: RunSummary): string {
  if (summary.thresholds.results.length === 0) return '<p class="muted">No thresholds were set.</p>';
  return htmlTable(
    ['target', 'metric', 'threshold', 'result'],
    summary.thresholds.results.map((t) => [
      targetName(t.target, summary.remote),
      { text: t.metric, code: true },
      { text: t.expression, code: true },
      { text: t.ok ? '✓ pass' : '✗ FAIL', className: t.ok ? 'good' : 'bad' },
    ]),
  );
}

function optionsTable(run: RunData): string {
  const entries = Object.entries(run.options);
  if (entries.length === 0) return '<p class="muted">None recorded.</p>';
  return htmlTable(
    ['option', 'value'],
    entries.map(([name, value]) => [{ text: name, code: true }, typeof value === 'number' ? formatSignificant(value, 6) : String(value)]),
  );
}

/** The HTML of a run's page. */
export function runPage(run: RunData, summary: RunSummary = summarizeRun(run)): string {
  const header = [
    '<header>',
    `<h1>Load test ${code(run.scenario)} ${badge(run.ok)}</h1>`,
    metaLine([
      `started ${escapeXml(formatTimestamp(run.startedAt))}`,
      `ran ${escapeXml(formatDuration(run.durationSeconds))}`,
      run.remote ? `remote allocator ${code(run.remote.allocator)}` : run.baseline ? 'fleetsim and the baseline server' : 'fleetsim only',
    ]),
    '</header>',
  ].join('\n');
  const body = [
    header,
    // Above every figure: a FAIL on a busy machine may be the machine's doing.
    ...summary.disturbed.map((sentence) => `<p class="warning">Warning: ${escapeXml(sentence)}.</p>`),
    ...(run.remote ? [section('Remote target', remoteNotes(run.remote).map((note) => `<p>${escapeXml(note)}</p>`).join('\n'))] : []),
    `<section>\n${cards(keyCards(summary))}\n</section>`,
    section('Charts', chartGrid(runCharts(run))),
    `<section class="columns">\n<div>\n<h2>Key figures</h2>\n${figuresTable(summary)}\n</div>\n` +
      `<div>\n<h2>Thresholds</h2>\n${thresholdsTable(summary)}\n<h2 class="spaced">Options</h2>\n${optionsTable(run)}\n</div>\n</section>`,
    '<footer>Rendered from run.json by <code>fleetsim report render</code>. Also in this folder: summary.json, summary.md.</footer>',
  ];
  return htmlPage(`Load test ${run.scenario} — ${run.ok ? 'PASS' : 'FAIL'}`, body.join('\n'));
}
