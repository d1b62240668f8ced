import type { EChartsOption, ScatterSeriesOption } from 'echarts';
import { type Axis, baseOption, dataMax, noDataTitle, valueAxis, xAxisStyle } from './chart-style.js';

/** Labelled points on two value axes: one point per run, to show a trade-off (cost against failures). */

export interface ScatterPoint {
  label: string;
  color: string;
  x: number;
  y: number;
}

export interface ScatterChartSpec {
  label: string;
  width: number;
  height: number;
  x: Axis;
  y: Axis;
  points: readonly ScatterPoint[];
}

export function scatterChartOption(spec: ScatterChartSpec): EChartsOption {
  const style = xAxisStyle(spec.x.label);
  const xMax = dataMax(spec.points.map((p) => p.x));
  // Labels of neighbouring points (by cost) alternate above and to the right, so two variants of
  // about the same cost stay readable (ECharts's overlap layout does not run when drawn on the server).
  const order = [...spec.points].sort((a, b) => a.x - b.x);
  const series: ScatterSeriesOption = {
    type: 'scatter',
    symbolSize: 12,
    data: spec.points.map((p) => ({
      name: p.label,
      value: [p.x, p.y],
      itemStyle: { color: p.color },
      label: { position: order.indexOf(p) % 2 === 0 ? 'top' : 'right', color: p.color },
    })),
    label: { show: true, formatter: '{b}', fontWeight: 600 },
  };
  return {
    ...baseOption(spec.width, []),
    title: noDataTitle(spec.points.length === 0),
    xAxis: {
      ...style,
      type: 'value',
      // Room on the right for the last point's label.
      boundaryGap: ['8%', '25%'],
      scale: true,
      axisLabel: { ...style.axisLabel, formatter: spec.x.format, hideOverlap: true },
      splitLine: { show: true, lineStyle: { color: '#f0f1f3' } },
      max: xMax > 0 ? undefined : 1,
    },
    yAxis: valueAxis(spec.y, dataMax(spec.points.map((p) => p.y)), '15%'),
    series: [series],
  };
}
