/**
 * The pages and tables of `fleetsim simulate`: one run (`index.html`, `summary.md`) and a
 * comparison of variants side by side. Everything is drawn from `summary.json` alone, so a report
 * is rebuilt the same from the same figures.
 */
import { NO_VALUE, escapeXml, formatCount, formatDuration, formatPercent, formatSignificant, markdownText } from './format.js';
import { type Card, type Chart, cards, chartGrid, htmlPage, htmlTable, metaLine, section } from './page.js';
import { lineChartSvg, scatterChartSvg } from './charts/svg.js';
import type { LineSeries } from './charts/line-chart.js';
import type { SimulationSeries, SimulationSummary } from './simulation-data.js';

export const SIMULATION_REPORT_FILES = ['index.html', 'summary.json', 'summary.md'] as const;

/** Colours of the variants of a comparison, in order. */
const VARIANT_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04', '#db2777'];

const orNone = <T>(value: T | null | undefined, format: (v: T) => string) => (value === null || value === undefined ? NO_VALUE : format(value));
const seconds = (s: number) => (s < 1 ? `${formatSignificant(s * 1000)} ms` : formatDuration(s));
const money = (summary: SimulationSummary, amount: number) => `${formatSignificant(amount, 4)} ${summary.cost.currency}`;
const hours = (h: number) => `${formatSignificant(h, 4)} h`;

/** The figures every page and table shows, in one list so the page and the markdown agree. */
function figures(s: SimulationSummary): Array<{ label: string; value: string; note?: string }> {
  const a = s.allocations;
  return [
    { label: 'players asked', value: formatCount(a.requests) },
    { label: 'allocated', value: formatCount(a.allocated), note: `${formatCount(a.allocatedFirstTry)} at the first try` },
    { label: 'gave up', value: formatCount(a.failed), note: orNone(a.failureRate, formatPercent) },
    { label: 'wait p50 / p99', value: s.waitSeconds ? `${seconds(s.waitSeconds.p50)} / ${seconds(s.waitSeconds.p99)}` : NO_VALUE, note: s.waitSeconds ? `max ${seconds(s.waitSeconds.max)}` : undefined },
    { label: 'Ready-but-idle GameServer-hours', value: hours(s.gameServers.readyHours), note: `${orNone(s.gameServers.idleShare, formatPercent)} of ${hours(s.gameServers.totalHours)}` },
    ...(s.rooms ? [{ label: `idle ${s.rooms.counter}`, value: orNone(s.rooms.idleShare, formatPercent), note: `${hours(s.rooms.inUseHours)} used of ${hours(s.rooms.capacityHours)}` }] : []),
    { label: 'node-hours', value: hours(s.nodes.nodeHours), note: `${s.nodes.min}–${s.nodes.peak} nodes` },
    { label: 'cost', value: money(s, s.cost.total), note: s.cost.perAllocation === null ? undefined : `${money(s, s.cost.perAllocation)} per allocation` },
    { label: 'autoscaler', value: `${s.autoscaler.scaleUps} up, ${s.autoscaler.scaleDowns} down`, note: `peak ${formatCount(s.gameServers.peak)} GameServers` },
  ];
}

function describe(s: SimulationSummary): string[] {
  return [
    `${formatDuration(s.durationSeconds)} from ${s.start}, seed ${s.seed}`,
    `demand: ${s.demand}`,
    `sessions: ${s.sessions}`,
    `${formatCount(s.events)} events in the log`,
  ];
}

export function simulationMarkdown(s: SimulationSummary): string {
  const title = `# Simulation: ${markdownText(s.scenario)}${s.variant ? ` (${markdownText(s.variant)})` : ''}`;
  const rows = figures(s).map((f) => `| ${f.label} | ${f.value} | ${f.note ?? ''} |`);
  return [title, '', ...describe(s).map((line) => `- ${markdownText(line)}`), '', '| figure | value | |', '|---|---|---|', ...rows, ''].join('\n');
}

type SeriesKey = { [K in keyof SimulationSeries]-?: SimulationSeries[K] extends Array<number | null> | undefined ? K : never }[keyof SimulationSeries];

interface Line {
  name: string;
  key: SeriesKey;
  color: string;
  dashed?: boolean;
}

function timeChart(title: string, yLabel: string, series: SimulationSeries, lines: readonly Line[], wide = false, until?: number): Chart {
  return {
    title,
    wide,
    draw: (width) =>
      lineChartSvg({
        label: title,
        width,
        height: 280,
        x: { label: 'simulated time', time: true, end: until },
        y: { label: yLabel },
        series: lines
          .filter((line) => series[line.key] !== undefined)
          .map(
            (line): LineSeries => ({
              name: line.name,
              color: line.color,
              dashed: line.dashed,
              points: series.t.map((t, i) => [t, series[line.key]![i] ?? Number.NaN] as const),
            }),
          ),
      }),
  };
}

function runCharts(s: SimulationSummary): Chart[] {
  const series = s.series;
  const until = s.durationSeconds;
  const charts = [
    timeChart('Players', 'per second', series, [
      { name: 'asked', key: 'arrivalsPerSecond', color: '#64748b' },
      { name: 'allocated', key: 'allocatedPerSecond', color: '#16a34a' },
      { name: 'refused (retried)', key: 'refusedPerSecond', color: '#d97706', dashed: true },
      { name: 'gave up', key: 'failedPerSecond', color: '#dc2626' },
    ], true, until),
    timeChart('GameServers', 'GameServers', series, [
      { name: 'all', key: 'gameServers', color: '#64748b' },
      { name: 'Ready', key: 'readyGameServers', color: '#16a34a' },
      { name: 'Allocated', key: 'allocatedGameServers', color: '#7c3aed' },
      { name: 'desired (autoscaler)', key: 'desiredReplicas', color: '#0891b2', dashed: true },
    ], true, until),
    timeChart('Wait from asking to allocated', 'seconds', series, [
      { name: 'p50', key: 'waitP50Seconds', color: '#0891b2' },
      { name: 'p99', key: 'waitP99Seconds', color: '#dc2626' },
    ], false, until),
    timeChart('Nodes', 'nodes', series, [{ name: 'nodes', key: 'nodes', color: '#475569' }], false, until),
    timeChart(`Cost so far (${s.cost.currency})`, s.cost.currency, series, [{ name: 'cost', key: 'cost', color: '#b45309' }], false, until),
  ];
  if (s.rooms) {
    charts.push(timeChart(`Rooms (counter ${s.rooms.counter})`, 'rooms', series, [
      { name: 'capacity', key: 'roomsCapacity', color: '#64748b' },
      { name: 'in use', key: 'roomsInUse', color: '#7c3aed' },
    ], false, until));
  }
  return charts;
}

export function simulationPage(s: SimulationSummary): string {
  const title = `Simulation: ${s.scenario}${s.variant ? ` (${s.variant})` : ''}`;
  const list: Card[] = figures(s).map((f) => ({ label: f.label, value: f.value, note: f.note }));
  const decisions = s.autoscaler.decisions.slice(0, 100);
  const body = [
    `<h1>${escapeXml(title)}</h1>`,
    metaLine(describe(s).map((line) => `<span>${escapeXml(line)}</span>`)),
    section('Figures', cards(list)),
    section('Over time', chartGrid(runCharts(s))),
    section(
      `Autoscaler decisions${s.autoscaler.decisions.length > decisions.length ? ` (first ${decisions.length} of ${s.autoscaler.decisions.length})` : ''}`,
      decisions.length
        ? htmlTable(['at', 'fleet', { text: 'from', className: 'num' }, { text: 'to', className: 'num' }], decisions.map((d) => [formatDuration(d.t), d.fleet, { text: String(d.from), className: 'num' }, { text: String(d.to), className: 'num' }]))
        : '<p class="meta">The fleets were never scaled.</p>',
    ),
    `<footer>fleetsim simulate · ${escapeXml(s.file)} · replay or explain the run's log: fleetsim explain --db fleetsim.db fleet/NAME</footer>`,
  ];
  return htmlPage(title, body.join('\n'));
}

// -- comparison -----------------------------------------------------------------------------------

const COMPARED: Array<{ label: string; value: (s: SimulationSummary) => string }> = [
  { label: 'gave up', value: (s) => `${formatCount(s.allocations.failed)} (${orNone(s.allocations.failureRate, formatPercent)})` },
  { label: 'wait p50', value: (s) => orNone(s.waitSeconds?.p50, seconds) },
  { label: 'wait p99', value: (s) => orNone(s.waitSeconds?.p99, seconds) },
  { label: 'Ready-idle GS-hours', value: (s) => hours(s.gameServers.readyHours) },
  { label: 'peak GameServers', value: (s) => formatCount(s.gameServers.peak) },
  { label: 'node-hours', value: (s) => hours(s.nodes.nodeHours) },
  { label: 'cost', value: (s) => money(s, s.cost.total) },
];

const variantName = (s: SimulationSummary) => s.variant ?? s.scenario;

export function comparisonMarkdown(runs: readonly SimulationSummary[]): string {
  const header = `| variant | ${COMPARED.map((c) => c.label).join(' | ')} |`;
  const rule = `|---|${COMPARED.map(() => '---:').join('|')}|`;
  const rows = runs.map((s) => `| ${markdownText(variantName(s))} | ${COMPARED.map((c) => c.value(s)).join(' | ')} |`);
  return [`# Simulation compared: ${markdownText(runs[0]?.scenario ?? '')}`, '', `- ${markdownText(describe(runs[0]!).slice(0, 3).join(' · '))}`, '', header, rule, ...rows, ''].join('\n');
}

/** The trade-off in one picture: what each variant cost against the players it failed (and made wait). */
export function tradeOffChartSvg(runs: readonly SimulationSummary[], width: number): string {
  return scatterChartSvg({
    label: 'Cost against players who gave up',
    width,
    height: 340,
    x: { label: `cost (${runs[0]?.cost.currency ?? ''})`, format: (v) => formatSignificant(v) },
    y: { label: 'players who gave up (%)', format: (v) => formatSignificant(v) },
    points: runs.map((s, i) => ({
      label: `${variantName(s)} · p99 wait ${orNone(s.waitSeconds?.p99, seconds)}`,
      color: VARIANT_COLORS[i % VARIANT_COLORS.length]!,
      x: s.cost.total,
      y: (s.allocations.failureRate ?? 0) * 100,
    })),
  });
}

export function comparisonPage(runs: readonly SimulationSummary[], links: readonly string[]): string {
  const title = `Simulation compared: ${runs[0]?.scenario ?? ''}`;
  const table = htmlTable(
    ['variant', ...COMPARED.map((c) => ({ text: c.label, className: 'num' }))],
    runs.map((s, i) => [
      { text: variantName(s), href: links[i] },
      ...COMPARED.map((c) => ({ text: c.value(s), className: 'num' })),
    ]),
  );
  const gameServers: Chart = {
    title: 'GameServers over time',
    wide: true,
    draw: (width) =>
      lineChartSvg({
        label: 'GameServers over time, by variant',
        width,
        height: 300,
        x: { label: 'simulated time', time: true, end: runs[0]?.durationSeconds },
        y: { label: 'GameServers' },
        series: runs.map((s, i) => ({
          name: variantName(s),
          color: VARIANT_COLORS[i % VARIANT_COLORS.length]!,
          points: s.series.t.map((t, j) => [t, s.series.gameServers[j]!] as const),
        })),
      }),
  };
  const tradeOff: Chart = { title: 'The trade-off: cost against players who gave up', wide: true, draw: (width) => tradeOffChartSvg(runs, width) };
  const body = [
    `<h1>${escapeXml(title)}</h1>`,
    metaLine(describe(runs[0]!).slice(0, 3).map((line) => `<span>${escapeXml(line)}</span>`)),
    section('Side by side', table),
    section('Charts', chartGrid([tradeOff, gameServers])),
    '<footer>fleetsim simulate · each variant ran with the same seed and the same players</footer>',
  ];
  return htmlPage(title, body.join('\n'));
}
