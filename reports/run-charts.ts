/**
 * The charts of a run, built from `RunData` pieces. Each takes "sides": the things to overlay on
 * the same axes (fleetsim and baseline on a run's page; run A and run B on a comparison), each
 * with its name, colour and line style.
 */
import { byteUnit, formatMs, formatSignificant } from './format.js';
import type { FleetSample, LatencySummary, Series, TargetResult } from './run-data.js';
import type { Bucket, Marker } from './charts/histogram.js';
import type { LineChartSpec, LineSeries } from './charts/line-chart.js';
import { barChartSvg, histogramSvg, lineChartSvg } from './charts/svg.js';
import { outcomeNames } from './summary.js';

export interface Side<T> {
  name: string;
  color: string;
  dashed: boolean;
  data: T;
}

const PERCENTILES = [
  { name: 'p50', key: 'latencyP50', color: '#0891b2' },
  { name: 'p95', key: 'latencyP95', color: '#d97706' },
  { name: 'p99', key: 'latencyP99', color: '#dc2626' },
] as const;

const FLEET_LINES = [
  { field: 'replicas', color: '#64748b' },
  { field: 'ready', color: '#16a34a' },
  { field: 'allocated', color: '#7c3aed' },
] as const;

/** The time axis, run to `until` seconds (the run's duration) so a page's time charts line up. */
function timeAxis(until: number | undefined): LineChartSpec['x'] {
  return { label: 'time since start', time: true, end: until };
}

/** Requests completed per second. */
export function requestRateChart(sides: ReadonlyArray<Side<TargetResult>>, width: number, until?: number): string {
  return lineChartSvg({
    label: 'Request rate over time',
    width,
    height: 300,
    x: timeAxis(until),
    y: { label: 'requests / s' },
    series: sides.map((s) => ({ name: s.name, color: s.color, dashed: s.dashed, points: s.data.series.requestRate })),
  });
}

/** p50, p95 and p99 request latency: colour tells the percentile, line style the side. */
export function latencyChart(sides: ReadonlyArray<Side<TargetResult>>, width: number, until?: number): string {
  return lineChartSvg({
    label: 'Request latency percentiles over time',
    width,
    height: 320,
    x: timeAxis(until),
    y: { label: 'latency (ms)', format: (v) => formatSignificant(v) },
    series: sides.flatMap((s) =>
      PERCENTILES.map((p) => ({ name: `${s.name} ${p.name}`, color: p.color, dashed: s.dashed, points: s.data.series[p.key] })),
    ),
  });
}

/** Allocation outcomes by status, one bar per side. */
export function outcomesChart(sides: ReadonlyArray<Side<Record<string, number>>>, width: number): string {
  const categories = outcomeNames(...sides.map((s) => s.data));
  return barChartSvg({
    label: 'Outcomes',
    width,
    height: 300,
    categories,
    x: { label: 'outcome' },
    y: { label: 'allocations' },
    series: sides.map((s) => ({ name: s.name, color: s.color, values: categories.map((c) => s.data[c] ?? 0) })),
  });
}

/** Fleet replicas, Ready and Allocated game servers over time. */
export function fleetChart(sides: ReadonlyArray<Side<readonly FleetSample[]>>, width: number, until?: number): string {
  const series: LineSeries[] = sides.flatMap((s) =>
    FLEET_LINES.map((line) => ({
      name: sides.length > 1 ? `${s.name} ${line.field}` : line.field,
      color: line.color,
      dashed: s.dashed,
      points: s.data.map((sample) => [sample.t, sample[line.field]] as const),
    })),
  );
  return lineChartSvg({ label: 'Fleet size over time', width, height: 300, x: timeAxis(until), y: { label: 'game servers' }, series });
}

/** Resident memory of the server, in the binary unit that suits its peak. */
export function memoryChart(sides: ReadonlyArray<Side<Series>>, width: number, until?: number): string {
  const peak = Math.max(0, ...sides.flatMap((s) => s.data.map(([, bytes]) => bytes)).filter(Number.isFinite));
  const { unit, scale } = byteUnit(peak);
  return lineChartSvg({
    label: 'Server memory over time',
    width,
    height: 300,
    x: timeAxis(until),
    y: { label: `resident memory (${unit})` },
    series: sides.map((s) => ({ name: s.name, color: s.color, dashed: s.dashed, points: s.data.map(([t, bytes]) => [t, bytes / scale] as const) })),
  });
}

export interface LatencyDistribution {
  buckets: readonly Bucket[];
  /** Percentiles to mark on the buckets (drawn only when one side is shown). */
  summary?: LatencySummary;
}

/** A latency histogram (watch delivery, allocation inside the server), in milliseconds. */
export function latencyHistogramChart(
  label: string,
  countLabel: string,
  sides: ReadonlyArray<Side<LatencyDistribution>>,
  width: number,
): string {
  const summary = sides.length === 1 ? sides[0]!.data.summary : undefined;
  const markers: Marker[] = summary ? PERCENTILES.map((p) => ({ label: p.name, value: summary[p.name], color: p.color })) : [];
  return histogramSvg({
    label,
    width,
    height: 300,
    x: { label: 'latency (ms), by bucket upper bound', format: (v) => formatSignificant(v) },
    y: { label: countLabel },
    markerFormat: formatMs,
    series: sides.map((s) => ({ name: s.name, color: s.color, buckets: s.data.buckets })),
    markers,
  });
}
