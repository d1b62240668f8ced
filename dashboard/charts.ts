import type * as ECharts from 'echarts';
import type { AllocationRate } from './metrics.js';
import { GAMESERVER_STATES } from './states.js';
import type { ClusterSummary, StateCounts } from './summary.js';

/**
 * The page's charts, drawn by ECharts from the bundle the server hands out at
 * /dashboard/echarts.min.js (a classic script: it defines the global `echarts`).
 */
declare const echarts: typeof ECharts;

/** One colour per GameServer state, the same in every chart and table. */
export const STATE_COLORS: Record<string, string> = {
  PortAllocation: '#b0bec5',
  Creating: '#90a4ae',
  Starting: '#78909c',
  Scheduled: '#ffd54f',
  RequestReady: '#ffb300',
  Ready: '#43a047',
  Reserved: '#8e24aa',
  Allocated: '#1e88e5',
  Shutdown: '#616161',
  Error: '#e53935',
  Unhealthy: '#f4511e',
  Unknown: '#bdbdbd',
};

/** A state's colour; a state the page does not know (an old log's, say) takes Unknown's. */
export function stateColor(state: string): string {
  return Object.hasOwn(STATE_COLORS, state) ? STATE_COLORS[state] : STATE_COLORS.Unknown;
}

/** The states any row counts, in the GameServer kind's order (unknown ones last). */
export function statesIn(rows: Array<{ states: StateCounts }>): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const state of Object.keys(row.states)) seen.add(state);
  const known: string[] = GAMESERVER_STATES.filter((s) => seen.has(s));
  return [...known, ...[...seen].filter((s) => !known.includes(s)).sort()];
}

const TEXT = { color: '#cfd8dc' };
const AXIS = { axisLabel: TEXT, axisLine: { lineStyle: { color: '#546e7a' } }, splitLine: { lineStyle: { color: '#263238' } } };

function chartIn(element: HTMLElement): ECharts.ECharts {
  const chart = echarts.init(element, undefined, { renderer: 'canvas' });
  new ResizeObserver(() => chart.resize()).observe(element);
  return chart;
}

/** Stacked bars of GameServers by state, one bar per category. */
function stackedStates(chart: ECharts.ECharts, names: string[], rows: Array<{ states: StateCounts }>, horizontal: boolean, extra: ECharts.SeriesOption[] = []): void {
  const states = statesIn(rows);
  const categoryAxis = { type: 'category' as const, data: names, ...AXIS, axisLabel: { ...TEXT, interval: 0, overflow: 'truncate' as const, width: 180 } };
  const valueAxis = { type: 'value' as const, minInterval: 1, ...AXIS };
  chart.setOption(
    {
      animation: false,
      grid: { left: horizontal ? 190 : 40, right: 16, top: 32, bottom: horizontal ? 24 : 48 },
      legend: { top: 0, textStyle: TEXT, data: states },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: horizontal ? valueAxis : { ...categoryAxis, axisLabel: { ...categoryAxis.axisLabel, rotate: names.length > 12 ? 60 : 0 } },
      yAxis: horizontal ? { ...categoryAxis, inverse: true } : valueAxis,
      dataZoom: !horizontal && names.length > 40 ? [{ type: 'inside' }, { type: 'slider', height: 14, bottom: 0 }] : [],
      series: [
        ...states.map((state) => ({
          name: state,
          type: 'bar' as const,
          stack: 'states',
          barMaxWidth: 28,
          itemStyle: { color: stateColor(state) },
          data: rows.map((row) => row.states[state] ?? 0),
        })),
        ...extra,
      ],
    },
    { replaceMerge: ['series', 'dataZoom'] },
  );
}

export class DashboardCharts {
  private readonly fleets: ECharts.ECharts;
  private readonly nodes: ECharts.ECharts;
  private readonly allocations: ECharts.ECharts;

  constructor(elements: { fleets: HTMLElement; nodes: HTMLElement; allocations: HTMLElement }) {
    this.fleets = chartIn(elements.fleets);
    this.nodes = chartIn(elements.nodes);
    this.allocations = chartIn(elements.allocations);
  }

  /** GameServers by state for each fleet, and for the GameServers no fleet owns. */
  showFleets(summary: ClusterSummary): void {
    const rows: Array<{ name: string; states: StateCounts }> = summary.fleets.map((f) => ({ name: `${f.namespace}/${f.name}`, states: f.states }));
    const setsOutsideFleets = summary.sets.filter((s) => !s.fleet);
    for (const set of setsOutsideFleets) rows.push({ name: `${set.namespace}/${set.name} (set)`, states: set.states });
    if (summary.standalone.total > 0) rows.push({ name: '(no set)', states: summary.standalone.states });
    stackedStates(
      this.fleets,
      rows.map((r) => r.name),
      rows,
      true,
    );
  }

  /** GameServers on each node by state, against what the node takes. */
  showNodes(summary: ClusterSummary): void {
    const rows = [...summary.nodes];
    const names = rows.map((n) => n.name);
    const rowsWithUnscheduled = summary.unscheduled.total > 0 ? [...rows, { name: '(unscheduled)', capacity: 0, ...summary.unscheduled }] : rows;
    const capacity: ECharts.SeriesOption = {
      name: 'capacity',
      type: 'line',
      step: 'middle',
      symbol: 'none',
      lineStyle: { color: '#eceff1', type: 'dashed', width: 1 },
      data: rowsWithUnscheduled.map((n) => n.capacity || null),
    };
    stackedStates(this.nodes, summary.unscheduled.total > 0 ? [...names, '(unscheduled)'] : names, rowsWithUnscheduled, false, [capacity]);
  }

  /** Allocations per second and their latency over the last minutes the page has been open. */
  showAllocations(rates: AllocationRate[]): void {
    const points = (pick: (r: AllocationRate) => number | undefined) => rates.map((r) => [r.at, pick(r) ?? null]);
    this.allocations.setOption({
      animation: false,
      grid: { left: 48, right: 56, top: 32, bottom: 28 },
      legend: { top: 0, textStyle: TEXT },
      tooltip: { trigger: 'axis', valueFormatter: (v: unknown) => (typeof v === 'number' ? v.toFixed(2) : '—') },
      xAxis: { type: 'time', ...AXIS },
      yAxis: [
        { type: 'value', name: 'per s', nameTextStyle: TEXT, min: 0, ...AXIS },
        { type: 'value', name: 'ms', nameTextStyle: TEXT, min: 0, ...AXIS, splitLine: { show: false } },
      ],
      series: [
        { name: 'allocations/s', type: 'line', showSymbol: false, areaStyle: { opacity: 0.15 }, itemStyle: { color: '#1e88e5' }, data: points((r) => r.perSecond) },
        { name: 'UnAllocated/s', type: 'line', showSymbol: false, itemStyle: { color: '#e53935' }, data: points((r) => r.unallocatedPerSecond) },
        { name: 'p50 ms', type: 'line', yAxisIndex: 1, showSymbol: false, connectNulls: true, itemStyle: { color: '#ffb300' }, data: points((r) => r.p50Ms) },
        { name: 'p99 ms', type: 'line', yAxisIndex: 1, showSymbol: false, connectNulls: true, lineStyle: { type: 'dashed' }, itemStyle: { color: '#fb8c00' }, data: points((r) => r.p99Ms) },
      ],
    });
  }
}
