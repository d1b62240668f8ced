import { escapeXml, formatCompact, formatSignificant } from '../format.js';
import {
  type Axis,
  type Box,
  DEFAULT_HEIGHT,
  DEFAULT_WIDTH,
  type LegendItem,
  type LegendRows,
  type Scale,
  TEXT_COLOR,
  categoryAxisSvg,
  categoryLabelDepth,
  dataMax,
  dataMin,
  legendSvg,
  linear,
  niceTicks,
  noData,
  num,
  plotArea,
  svgDocument,
  text,
  textWidth,
  tickFormat,
  valueAxisSvg,
} from './drawing.js';

/** A grouped bar chart drawn as one inline `<svg>`, and the category frame the histogram shares. */

export interface BarSeries {
  name: string;
  color: string;
  /** One value per category, in the chart's category order. */
  values: readonly number[];
}

export interface BarChartSpec {
  label: string;
  width?: number;
  height?: number;
  categories: readonly string[];
  /** Names the categories. */
  x: { label: string };
  y: Axis;
  series: readonly BarSeries[];
}

export interface BarLayout {
  /** Width of one category's band. */
  band: number;
  /** Share of the band left empty between neighbouring categories. */
  padding: number;
}

/** The bars of every series, side by side within each category's band. */
export function barsSvg(box: Box, series: readonly BarSeries[], y: Scale, layout: BarLayout, valueLabels: Axis['format']): string[] {
  const parts: string[] = [];
  const inner = layout.band * (1 - layout.padding);
  const barWidth = inner / Math.max(1, series.length);
  const zero = y(0);
  series.forEach((s, si) => {
    s.values.forEach((value, ci) => {
      if (!Number.isFinite(value)) return;
      const x = box.left + layout.band * ci + (layout.band - inner) / 2 + barWidth * si;
      const top = Math.min(y(value), zero);
      const h = Math.abs(zero - y(value));
      const tip = `${s.name}: ${formatSignificant(value)}`;
      parts.push(
        `<rect class="bar" data-series="${escapeXml(s.name)}" x="${num(x)}" y="${num(top)}" width="${num(Math.max(1, barWidth - 1))}"` +
          ` height="${num(h)}" fill="${escapeXml(s.color)}"><title>${escapeXml(tip)}</title></rect>`,
      );
      if (valueLabels && value !== 0) {
        const label = valueLabels(value);
        if (textWidth(label, 11) <= barWidth + 6) {
          parts.push(text(x + barWidth / 2, top - 5, label, `text-anchor="middle" font-size="11" fill="${TEXT_COLOR}"`));
        }
      }
    });
  });
  return parts;
}

export interface CategoryFrame {
  box: Box;
  band: number;
  rotated: boolean;
  legend: LegendRows;
  yTicks: number[];
  yFormat: (value: number) => string;
  y: Scale;
}

/** Lays out a chart whose x axis is categories: legend, y scale, band width, label rotation. */
export function categoryFrame(
  width: number,
  height: number,
  labels: readonly string[],
  series: readonly BarSeries[],
  yFormat: Axis['format'],
  headroom: number,
): CategoryFrame {
  const values = series.flatMap((s) => s.values);
  const yTicks = niceTicks(dataMin(values), dataMax(values) * headroom);
  const format = yFormat ?? tickFormat(yTicks);
  const items: LegendItem[] = series.map((s) => ({ name: s.name, color: s.color, shape: 'box' }));
  const { box, legend } = plotArea(width, height, items, yTicks.map(format), 48);
  const band = box.width / Math.max(1, labels.length);
  const widest = Math.max(0, ...labels.map((l) => textWidth(l)));
  const rotated = widest > band - 6;
  if (rotated) box.height = Math.max(40, height - box.top - categoryLabelDepth(labels, true) - 29);
  const y = linear([yTicks[0]!, yTicks[yTicks.length - 1]!], [box.top + box.height, box.top]);
  return { box, band, rotated, legend, yTicks, y, yFormat: format };
}

/** Bars per category, one per series side by side, each labelled with its value. */
export function barChart(spec: BarChartSpec): string {
  const width = spec.width ?? DEFAULT_WIDTH;
  const height = spec.height ?? DEFAULT_HEIGHT;
  const frame = categoryFrame(width, height, spec.categories, spec.series, spec.y.format, 1.08);
  const body = [
    ...legendSvg(frame.legend, 8),
    ...valueAxisSvg(frame.box, frame.yTicks, frame.y, { ...spec.y, format: frame.yFormat }),
    ...categoryAxisSvg(frame.box, spec.categories, frame.band, frame.rotated, spec.x.label),
    ...barsSvg(frame.box, spec.series, frame.y, { band: frame.band, padding: 0.3 }, (value) => formatCompact(value)),
  ];
  if (spec.categories.length === 0 || spec.series.length === 0) body.push(noData(frame.box));
  return svgDocument(width, height, spec.label, body);
}
