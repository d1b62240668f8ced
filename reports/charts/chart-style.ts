/**
 * What the report charts share, as pieces of Apache ECharts options: sizes, font and colours, the
 * legend and plot area, value axes and their tick labels, clock ticks for time, "no data".
 *
 * The option builders here and beside (line-chart.ts, bar-chart.ts, histogram.ts) are pure
 * functions from data to an ECharts option object. They import ECharts's types only, so their
 * compiled modules run no ECharts code and reach nothing but ../format.js: a browser page that has
 * loaded ECharts (see browser-bundle.ts) can import them and pass the same options to
 * `chart.setOption`. svg.ts renders them on the server.
 */
import type { EChartsOption, LegendComponentOption, TitleComponentOption, YAXisComponentOption } from 'echarts';
import { formatCompact } from '../format.js';

export interface Axis {
  label: string;
  /** Formats tick labels; by default numbers, all with a unit suffix (5k, 10k) if the largest needs one. */
  format?: (value: number) => string;
}

export const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
const FONT_SIZE = 12;
/** Average advance of a character at FONT_SIZE in a sans-serif face, for guessing what fits. */
const CHAR_WIDTH = 6.8;
export const TEXT_COLOR = '#1f2937';
export const MUTED_COLOR = '#6b7280';
export const GRID_COLOR = '#e5e7eb';
export const AXIS_COLOR = '#9ca3af';
/** How a dashed series is drawn: dash and gap lengths. */
export const DASH = [7, 4];

export function textWidth(text: string, fontSize = FONT_SIZE): number {
  return text.length * CHAR_WIDTH * (fontSize / FONT_SIZE);
}

const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/** Ticks for seconds from 0 to `max`, on steps a clock reads well (15 s, 1 min, 5 min …). */
export function timeTicks(max: number, target = 8): number[] {
  const end = Number.isFinite(max) && max > 0 ? max : 1;
  const step = TIME_STEPS.find((s) => end / s <= target) ?? Math.ceil(end / target / 86400) * 86400;
  const ticks: number[] = [];
  for (let t = 0; t <= end + 1e-9; t += step) ticks.push(t);
  return ticks;
}

/** Default tick labels: plain numbers, or all with a unit suffix (5k, 10k) when the largest value needs one. */
export function tickFormat(largest: number): (value: number) => string {
  return Math.abs(largest) >= 10_000 ? (value) => formatCompact(value, 1000) : (value) => formatCompact(value);
}

export function dataMax(values: Iterable<number>): number {
  let max = 0;
  for (const v of values) if (Number.isFinite(v) && v > max) max = v;
  return max;
}

export function dataMin(values: Iterable<number>): number {
  let min = 0;
  for (const v of values) if (Number.isFinite(v) && v < min) min = v;
  return min;
}

const LEGEND_TOP = 4;
const LEGEND_ROW = 20;
const LEGEND_LEFT = 48;

/** How many rows the legend wraps into at this width, by ECharts's item layout and a guessed text width. */
function legendRowCount(names: readonly string[], width: number): number {
  const room = width - LEGEND_LEFT - 24;
  let rows = names.length > 0 ? 1 : 0;
  let x = 0;
  for (const name of names) {
    const itemWidth = 25 + 5 + textWidth(name) + 10;
    if (x > 0 && x + itemWidth > room) {
      rows += 1;
      x = 0;
    }
    x += itemWidth;
  }
  return rows;
}

export interface LegendEntry {
  name: string;
  /** A box swatch for bars; a stroke with the series's dash for lines. */
  swatch: 'box' | 'line';
}

/**
 * ECharts draws a line series's legend swatch as its stroke with a dot on it; the dot covers the
 * dash that tells a baseline or run B apart, so it is made invisible.
 */
function legendItem(entry: LegendEntry): NonNullable<LegendComponentOption['data']>[number] {
  return entry.swatch === 'box' ? { name: entry.name, icon: 'roundRect' } : { name: entry.name, itemStyle: { opacity: 0 } };
}

/**
 * What every chart starts from: a still picture (no animation, no hover states that a static page
 * cannot use), the page's font, the legend across the top and the plot below it with room for the
 * axis labels and titles.
 */
export function baseOption(width: number, legend: readonly LegendEntry[]): EChartsOption {
  const legendOption: LegendComponentOption = {
    show: legend.length > 0,
    top: LEGEND_TOP,
    left: LEGEND_LEFT,
    right: 24,
    itemWidth: 22,
    itemHeight: 10,
    itemGap: 16,
    textStyle: { color: TEXT_COLOR, fontSize: FONT_SIZE },
    data: legend.map(legendItem),
  };
  return {
    animation: false,
    textStyle: { fontFamily: FONT_FAMILY, fontSize: FONT_SIZE, color: TEXT_COLOR },
    legend: legendOption,
    grid: {
      left: 12,
      right: 24,
      top: LEGEND_TOP + legendRowCount(legend.map((e) => e.name), width) * LEGEND_ROW + 14,
      bottom: 8,
      // Axis labels and titles sit inside the chart's box rather than past its edge.
      outerBoundsMode: 'same',
      outerBoundsContain: 'all',
    },
  };
}

/**
 * The value (y) axis: gridlines, tick labels, and its title turned along it. `headroom` (a share,
 * "12%") stretches it above the largest value, for labels drawn there.
 */
export function valueAxis(axis: Axis, largest: number, headroom?: string): YAXisComponentOption {
  return {
    type: 'value',
    boundaryGap: headroom ? [0, headroom] : undefined,
    name: axis.label,
    nameLocation: 'middle',
    nameGap: 44,
    nameTextStyle: { color: TEXT_COLOR, fontSize: FONT_SIZE },
    axisLabel: { color: MUTED_COLOR, formatter: axis.format ?? tickFormat(largest) },
    splitLine: { lineStyle: { color: GRID_COLOR } },
    axisLine: { show: false },
    axisTick: { show: false },
  };
}

/** Shared look of an x axis: its title centred below, muted tick labels, no gridlines. */
export function xAxisStyle(label: string) {
  return {
    name: label,
    nameLocation: 'middle',
    nameGap: 30,
    nameTextStyle: { color: TEXT_COLOR, fontSize: FONT_SIZE },
    axisLine: { lineStyle: { color: AXIS_COLOR } },
    axisTick: { lineStyle: { color: AXIS_COLOR } },
    axisLabel: { color: MUTED_COLOR },
    splitLine: { show: false },
  } as const;
}

/** "no data" over an empty plot. */
export function noDataTitle(empty: boolean): TitleComponentOption {
  return { show: empty, text: 'no data', left: 'center', top: 'middle', textStyle: { color: MUTED_COLOR, fontSize: 14, fontWeight: 'normal' } };
}
