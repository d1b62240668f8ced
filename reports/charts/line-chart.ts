import type { EChartsOption, LineSeriesOption, XAXisComponentOption } from 'echarts';
import { formatDuration } from '../format.js';
import { type Axis, DASH, baseOption, dataMax, dataMin, noDataTitle, timeTicks, valueAxis, xAxisStyle } from './chart-style.js';

/** A line chart as an ECharts option: values are plain numbers, the caller converts units. */

export interface LineSeries {
  name: string;
  color: string;
  dashed?: boolean;
  /** [x, y] pairs; a non-finite y breaks the line. */
  points: ReadonlyArray<readonly [number, number]>;
}

export interface LineChartSpec {
  /** What the chart shows, for screen readers and tooltips (the page prints the visible title). */
  label: string;
  width: number;
  height: number;
  /**
   * `time: true` puts ticks on whole seconds/minutes and labels them as durations; `end` runs the
   * axis at least that far (the run's duration, so a page's time charts share one axis).
   */
  x: Axis & { time?: boolean; end?: number };
  y: Axis;
  series: readonly LineSeries[];
}

/** Lines over a shared x axis (time, usually), one per series, with a legend above. */
export function lineChartOption(spec: LineChartSpec): EChartsOption {
  const series = spec.series.map((s) => ({ ...s, points: [...s.points].sort((p, q) => p[0] - q[0]) }));
  const allPoints = series.flatMap((s) => s.points);
  const xMin = Math.min(0, dataMin(allPoints.map((p) => p[0])));
  const xMax = Math.max(dataMax(allPoints.map((p) => p[0])), spec.x.end ?? 0, xMin + 1);
  const format = spec.x.format ?? (spec.x.time ? formatDuration : undefined);
  // Clock steps (30 s, 1 min, 5 min …) rather than ECharts's decimal ones, which a duration reads badly.
  const clock = spec.x.time && xMin === 0 ? timeTicks(xMax) : undefined;
  const style = xAxisStyle(spec.x.label);
  const xAxis: XAXisComponentOption = {
    ...style,
    type: 'value',
    min: xMin,
    max: xMax,
    splitNumber: 8,
    axisTick: { ...style.axisTick, customValues: clock },
    axisLabel: { ...style.axisLabel, formatter: format, customValues: clock, hideOverlap: true },
  };
  const lines: LineSeriesOption[] = series.map((s) => ({
    type: 'line',
    name: s.name,
    color: s.color,
    data: s.points.map(([x, y]) => [x, Number.isFinite(y) ? y : null]),
    lineStyle: { width: 2, type: s.dashed ? DASH : 'solid', cap: 'round', join: 'round' },
    // A lone point draws no line: show it as a dot.
    symbol: s.points.length === 1 ? 'circle' : 'none',
    symbolSize: 6,
    connectNulls: false,
  }));
  return {
    ...baseOption(spec.width, series.map((s) => ({ name: s.name, swatch: 'line' }))),
    title: noDataTitle(allPoints.length === 0),
    xAxis,
    yAxis: valueAxis(spec.y, Math.max(...allPoints.map((p) => Math.abs(p[1])).filter(Number.isFinite), 0)),
    series: lines,
  };
}
