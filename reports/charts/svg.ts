/**
 * Renders the chart options to inline `<svg>` with ECharts's server-side rendering: no DOM, no
 * script in the page, the same picture a browser would draw from the same option.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as ECharts from 'echarts';
import type { EChartsOption } from 'echarts';
import { escapeXml } from '../format.js';
import { type BarChartSpec, barChartOption } from './bar-chart.js';
import { ECHARTS_BROWSER_BUNDLE } from './browser-bundle.js';
import { type HistogramSpec, histogramOption } from './histogram.js';
import { type LineChartSpec, lineChartOption } from './line-chart.js';
import { type ScatterChartSpec, scatterChartOption } from './scatter-chart.js';

let loaded: typeof ECharts | undefined;

/**
 * ECharts, loaded on the first chart: the CLI imports the reports, and most of its commands draw
 * none. The one-file browser build loads in a fraction of the time its ES modules take.
 */
function echarts(): typeof ECharts {
  loaded ??= createRequire(import.meta.url)(ECHARTS_BROWSER_BUNDLE) as typeof ECharts;
  return loaded;
}

export interface ChartFrame {
  /** What the chart shows, for screen readers (the page prints the visible title). */
  label: string;
  width: number;
  height: number;
}

/** Ids and classes zrender gives a chart's clip paths, gradients and hover styles: "zr7-c0", "zr7-cls-31". */
const ZRENDER_NAME = /\bzr\d+-(cls-\d+|[a-z]+\d+)\b/g;

/** The chart's zrender names under `prefix`, its classes numbered from 0 in order of appearance. */
function renamed(svg: string, prefix: string): string {
  const classes = new Map<string, string>();
  return svg.replace(ZRENDER_NAME, (_, name: string) => {
    if (!name.startsWith('cls-')) return `${prefix}-${name}`;
    if (!classes.has(name)) classes.set(name, `cls-${classes.size}`);
    return `${prefix}-${classes.get(name)!}`;
  });
}

/**
 * zrender numbers a chart's names by how many charts (and hover classes) this process has drawn
 * before it. Named after the chart's content instead, the charts of a page keep distinct names and
 * a page renders to the same text every time.
 */
function stableNames(svg: string): string {
  const digest = createHash('sha1').update(renamed(svg, 'zr')).digest('hex').slice(0, 10);
  return renamed(svg, `chart-${digest}`);
}

/** The page's stylesheet sizes `svg.chart`; the title and label name the picture for screen readers. */
function labelled(svg: string, label: string): string {
  const text = escapeXml(label);
  return svg.replace(/^<svg /, `<svg class="chart" role="img" aria-label="${text}" `).replace(/>/, `>\n<title>${text}</title>`);
}

/** One chart as inline SVG. */
export function renderChartSvg(option: EChartsOption, frame: ChartFrame): string {
  const chart = echarts().init(null, null, { renderer: 'svg', ssr: true, width: frame.width, height: frame.height });
  try {
    chart.setOption(option);
    return labelled(stableNames(chart.renderToSVGString()), frame.label);
  } finally {
    chart.dispose();
  }
}

export function lineChartSvg(spec: LineChartSpec): string {
  return renderChartSvg(lineChartOption(spec), spec);
}

export function barChartSvg(spec: BarChartSpec): string {
  return renderChartSvg(barChartOption(spec), spec);
}

export function histogramSvg(spec: HistogramSpec): string {
  return renderChartSvg(histogramOption(spec), spec);
}

export function scatterChartSvg(spec: ScatterChartSpec): string {
  return renderChartSvg(scatterChartOption(spec), spec);
}
