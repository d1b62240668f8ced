import type { BarSeriesOption, EChartsOption, LineSeriesOption, MarkLineComponentOption } from 'echarts';
import { type BarSeries, categoryAxis, largestValue } from './bar-chart.js';
import { type Axis, baseOption, noDataTitle, valueAxis } from './chart-style.js';

/** A histogram as an ECharts option: counts per bucket as adjoining bars, with markers. */

export interface Bucket {
  /** Upper bound of the bucket; null or Infinity for the overflow bucket. */
  le: number | null;
  /** Observations in this bucket alone (not cumulative). */
  count: number;
}

export interface HistogramSeries {
  name: string;
  color: string;
  buckets: readonly Bucket[];
}

export interface Marker {
  label: string;
  value: number;
  color: string;
}

export interface HistogramSpec {
  label: string;
  width: number;
  height: number;
  /** Formats the bucket bounds. */
  x: Required<Axis>;
  y: Axis;
  series: readonly HistogramSeries[];
  /** Vertical lines at values on the x scale (percentiles, say), placed within their bucket. */
  markers?: readonly Marker[];
  /** Formats marker values (with their unit, say); defaults to `x.format`. */
  markerFormat?: (value: number) => string;
}

function isOverflow(le: number | null): boolean {
  return le === null || !Number.isFinite(le);
}

/** Bucket bounds of all series, ascending, the overflow bucket (if any) last. */
function bucketBounds(series: readonly HistogramSeries[]): number[] {
  const bounds = new Set<number>();
  for (const s of series) for (const b of s.buckets) bounds.add(isOverflow(b.le) ? Infinity : b.le!);
  return [...bounds].sort((a, b) => a - b);
}

/**
 * Where `value` falls on the bucket axis, in buckets from the left edge: its bucket's index plus
 * how far between that bucket's bounds it lies.
 */
export function bucketPosition(value: number, bounds: readonly number[]): number {
  const index = bounds.findIndex((le) => value <= le);
  if (index < 0) return bounds.length;
  const upper = bounds[index]!;
  const lower = index === 0 ? Math.min(0, upper) : bounds[index - 1]!;
  const fraction = Number.isFinite(upper) && upper > lower ? (value - lower) / (upper - lower) : 0.5;
  return index + Math.min(1, Math.max(0, fraction));
}

const MARKER_ROW = 14;

/**
 * The markers as dashed vertical lines with their labels at the top, one row lower each so that
 * no label covers another. They ride on a series of their own, placed on a hidden value axis that
 * spans the buckets (0 to their count), since a category axis knows only whole buckets.
 */
function markerSeries(spec: HistogramSpec, bounds: readonly number[]): LineSeriesOption {
  const format = spec.markerFormat ?? spec.x.format;
  const markers = (spec.markers ?? []).filter((m) => Number.isFinite(m.value) && bounds.length > 0);
  const data: MarkLineComponentOption['data'] = markers.map((marker, i) => {
    const at = bucketPosition(marker.value, bounds);
    // Labels near the right edge go left of their line, the others right of it.
    const flip = at > bounds.length * 0.8;
    return {
      name: marker.label,
      xAxis: at,
      lineStyle: { color: marker.color, type: [4, 3], width: 1.5 },
      label: {
        formatter: `${marker.label} ${format(marker.value)}`,
        color: marker.color,
        fontSize: 11,
        position: 'insideEndBottom',
        rotate: 0,
        align: flip ? 'right' : 'left',
        offset: [flip ? -4 : 4, i * MARKER_ROW],
        textBorderColor: '#fff',
        textBorderWidth: 3,
      },
    };
  });
  return {
    type: 'line',
    xAxisIndex: 1,
    data: [],
    markLine: { symbol: 'none', silent: true, animation: false, data },
  };
}

/** Counts per bucket as adjoining bars (series side by side), with optional value markers. */
export function histogramOption(spec: HistogramSpec): EChartsOption {
  const bounds = bucketBounds(spec.series);
  const labels = bounds.map((le, i) =>
    Number.isFinite(le) ? `≤${spec.x.format(le)}` : i > 0 ? `>${spec.x.format(bounds[i - 1]!)}` : 'all',
  );
  const bars: BarSeries[] = spec.series.map((s) => {
    const counts = new Map<number, number>();
    for (const b of s.buckets) {
      const le = isOverflow(b.le) ? Infinity : b.le!;
      counts.set(le, (counts.get(le) ?? 0) + b.count);
    }
    return { name: s.name, color: s.color, values: bounds.map((le) => counts.get(le) ?? 0) };
  });
  const gap = spec.series.length > 1 ? '12%' : '4%';
  const barSeries: BarSeriesOption[] = bars.map((s) => ({ type: 'bar', name: s.name, color: s.color, data: [...s.values], barGap: '4%', barCategoryGap: gap }));
  const hasMarkers = (spec.markers ?? []).length > 0;
  return {
    ...baseOption(spec.width, spec.series.map((s) => ({ name: s.name, swatch: 'box' }))),
    title: noDataTitle(bounds.length === 0),
    xAxis: [categoryAxis(labels, spec.x.label, spec.width), { type: 'value', min: 0, max: Math.max(1, bounds.length), show: false }],
    // Headroom above the tallest bar for the marker labels.
    yAxis: valueAxis(spec.y, largestValue(bars), hasMarkers ? '12%' : undefined),
    series: [...barSeries, ...(hasMarkers ? [markerSeries(spec, bounds)] : [])],
  };
}
