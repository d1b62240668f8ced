import type { BarSeriesOption, EChartsOption, XAXisComponentOption } from 'echarts';
import { formatCompact } from '../format.js';
import { type Axis, baseOption, dataMax, noDataTitle, textWidth, valueAxis, xAxisStyle } from './chart-style.js';

/** A grouped bar chart as an ECharts option, and the category axis the histogram shares. */

export interface BarSeries {
  name: string;
  color: string;
  /** One value per category, in the chart's category order. */
  values: readonly number[];
}

export interface BarChartSpec {
  label: string;
  width: number;
  height: number;
  categories: readonly string[];
  /** Names the categories. */
  x: { label: string };
  y: Axis;
  series: readonly BarSeries[];
}

const LABEL_ANGLE = 40;

/** Category labels under their bands, slanted when the widest would not fit its band; the title below. */
export function categoryAxis(labels: readonly string[], title: string, width: number): XAXisComponentOption {
  const band = (width - 100) / Math.max(1, labels.length);
  const rotated = Math.max(0, ...labels.map((l) => textWidth(l))) > band - 6;
  const style = xAxisStyle(title);
  return {
    ...style,
    type: 'category',
    data: [...labels],
    axisTick: { ...style.axisTick, alignWithLabel: true },
    axisLabel: { ...style.axisLabel, interval: 0, rotate: rotated ? LABEL_ANGLE : 0 },
  };
}

/** The largest value of the bars, for the value axis's tick labels. */
export function largestValue(series: readonly BarSeries[]): number {
  return dataMax(series.flatMap((s) => s.values.map(Math.abs)));
}

/** A bar's value as its label, or nothing where the label would be wider than (a guess at) the bar. */
function valueLabel(spec: BarChartSpec): (value: unknown) => string {
  const barWidth = (((spec.width - 100) / Math.max(1, spec.categories.length)) * 0.7) / Math.max(1, spec.series.length);
  return (value) => {
    if (typeof value !== 'number' || value === 0) return '';
    const label = formatCompact(value);
    return textWidth(label, 11) <= barWidth + 6 ? label : '';
  };
}

/** Bars per category, one per series side by side, each labelled with its value where it fits. */
export function barChartOption(spec: BarChartSpec): EChartsOption {
  const label = valueLabel(spec);
  const bars: BarSeriesOption[] = spec.series.map((s) => ({
    type: 'bar',
    name: s.name,
    color: s.color,
    data: s.values.map((v) => (Number.isFinite(v) ? v : null)),
    barGap: '4%',
    barCategoryGap: '30%',
    label: {
      show: true,
      position: 'top',
      fontSize: 11,
      formatter: ({ value }) => label(value),
    },
  }));
  return {
    ...baseOption(spec.width, spec.series.map((s) => ({ name: s.name, swatch: 'box' }))),
    title: noDataTitle(spec.categories.length === 0 || spec.series.length === 0),
    xAxis: categoryAxis(spec.categories, spec.x.label, spec.width),
    yAxis: valueAxis(spec.y, largestValue(spec.series)),
    series: bars,
  };
}
