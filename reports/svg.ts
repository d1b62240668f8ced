/**
 * Chart primitives drawn as inline SVG: a line chart, a grouped bar chart and a histogram, with
 * their axes, ticks, gridlines and legends. Each function returns one `<svg>` element as text; all
 * text that goes into it is escaped here. Values are plain numbers: the caller converts units and
 * passes formatters for the tick labels.
 */
import { escapeXml, formatCompact, formatDuration, formatSignificant } from './format.js';

export interface Axis {
  label: string;
  /** Formats tick labels; by default numbers, all with a unit suffix (5k, 10k) if the largest needs one. */
  format?: (value: number) => string;
}

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
  width?: number;
  height?: number;
  /**
   * `time: true` puts ticks on whole seconds/minutes and labels them as durations; `end` runs the
   * axis at least that far (the run's duration, so a page's time charts share one axis).
   */
  x: Axis & { time?: boolean; end?: number };
  y: Axis;
  series: readonly LineSeries[];
}

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
  width?: number;
  height?: number;
  /** Formats the bucket bounds. */
  x: Required<Axis>;
  y: Axis;
  series: readonly HistogramSeries[];
  /** Vertical lines at values on the x scale (percentiles, say), placed within their bucket. */
  markers?: readonly Marker[];
  /** Formats marker values (with their unit, say); defaults to `x.format`. */
  markerFormat?: (value: number) => string;
}

const DEFAULT_WIDTH = 1120;
const DEFAULT_HEIGHT = 340;
const FONT_SIZE = 12;
/** Average advance of a character at FONT_SIZE in a sans-serif face, for laying text out. */
const CHAR_WIDTH = 6.8;
const TEXT_COLOR = '#1f2937';
const MUTED_COLOR = '#6b7280';
const GRID_COLOR = '#e5e7eb';
const AXIS_COLOR = '#9ca3af';
const DASH = '7 4';

interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

type Scale = (value: number) => number;

function textWidth(text: string, fontSize = FONT_SIZE): number {
  return text.length * CHAR_WIDTH * (fontSize / FONT_SIZE);
}

function num(value: number): string {
  return String(Math.round(value * 10) / 10);
}

function linear(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${num(x)}" y="${num(y)}"${attributes ? ` ${attributes}` : ''}>${escapeXml(content)}</text>`;
}

function svgDocument(width: number, height: number, label: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"` +
      ` role="img" aria-label="${escapeXml(label)}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"` +
      ` font-size="${FONT_SIZE}" fill="${TEXT_COLOR}">`,
    `<title>${escapeXml(label)}</title>`,
    ...body,
    '</svg>',
  ].join('\n');
}

// ---- ticks ----------------------------------------------------------------------------------

/** Round numbers spanning [min, max], about `target` of them: 0, 20, 40 … or 0, 0.5, 1 …. */
export function niceTicks(min: number, max: number, target = 5): number[] {
  let low = Number.isFinite(min) ? min : 0;
  let high = Number.isFinite(max) ? max : 1;
  if (high < low) [low, high] = [high, low];
  if (high === low) {
    if (high === 0) high = 1;
    else if (high > 0) low = 0;
    else high = 0;
  }
  const rough = (high - low) / target;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const normalized = rough / magnitude;
  const step = (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 2.5 ? 2.5 : normalized <= 5 ? 5 : 10) * magnitude;
  const first = Math.floor(low / step + 1e-9);
  const last = Math.ceil(high / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
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

/** Default tick labels: plain numbers, or all with a unit suffix (5k, 10k) when the largest needs one. */
function tickFormat(ticks: readonly number[]): (value: number) => string {
  const largest = Math.max(0, ...ticks.map(Math.abs));
  return largest >= 10_000 ? (value) => formatCompact(value, 1000) : (value) => formatCompact(value);
}

// ---- layout pieces --------------------------------------------------------------------------

interface LegendItem {
  name: string;
  color: string;
  shape: 'line' | 'dashed' | 'box';
}

const LEGEND_ROW = 20;
const LEGEND_SWATCH = 22;

type LegendRows = Array<Array<{ item: LegendItem; x: number }>>;

/** Places legend items left to right, wrapping at `width`; returns each item's row and x. */
function legendLayout(items: readonly LegendItem[], left: number, width: number): LegendRows {
  const rows: LegendRows = [];
  let row: LegendRows[number] = [];
  let x = left;
  for (const item of items) {
    const itemWidth = LEGEND_SWATCH + 6 + textWidth(item.name) + 18;
    if (row.length > 0 && x + itemWidth > left + width) {
      rows.push(row);
      row = [];
      x = left;
    }
    row.push({ item, x });
    x += itemWidth;
  }
  if (row.length > 0) rows.push(row);
  return rows;
}

function legendSvg(rows: LegendRows, top: number): string[] {
  const parts: string[] = [];
  rows.forEach((row, r) => {
    const y = top + r * LEGEND_ROW + LEGEND_ROW / 2;
    for (const { item, x } of row) {
      const swatch =
        item.shape === 'box'
          ? `<rect x="${num(x + 5)}" y="${num(y - 6)}" width="12" height="12" rx="2" fill="${escapeXml(item.color)}"/>`
          : `<line x1="${num(x)}" y1="${num(y)}" x2="${num(x + LEGEND_SWATCH)}" y2="${num(y)}" stroke="${escapeXml(item.color)}"` +
            ` stroke-width="2.5"${item.shape === 'dashed' ? ` stroke-dasharray="${DASH}"` : ''}/>`;
      parts.push(`<g class="legend-item">${swatch}${text(x + LEGEND_SWATCH + 6, y + 4, item.name)}</g>`);
    }
  });
  return parts;
}

/** Horizontal gridlines, tick labels and the rotated axis title of a value (y) axis. */
function valueAxisSvg(box: Box, ticks: readonly number[], y: Scale, axis: Axis): string[] {
  const format = axis.format ?? tickFormat(ticks);
  const parts = ticks.map((tick) => {
    const at = num(y(tick));
    return (
      `<line x1="${num(box.left)}" x2="${num(box.left + box.width)}" y1="${at}" y2="${at}" stroke="${GRID_COLOR}"/>` +
      text(box.left - 8, y(tick) + 4, format(tick), `text-anchor="end" fill="${MUTED_COLOR}"`)
    );
  });
  const middle = box.top + box.height / 2;
  parts.push(text(16, middle, axis.label, `text-anchor="middle" transform="rotate(-90 16 ${num(middle)})"`));
  return parts;
}

/** The baseline, tick marks, tick labels and title of a numeric x axis. */
function numericXAxisSvg(box: Box, ticks: readonly number[], x: Scale, axis: Axis): string[] {
  const format = axis.format ?? tickFormat(ticks);
  const bottom = box.top + box.height;
  const parts = [axisLine(box)];
  for (const tick of ticks) {
    const at = x(tick);
    parts.push(
      `<line x1="${num(at)}" x2="${num(at)}" y1="${num(bottom)}" y2="${num(bottom + 5)}" stroke="${AXIS_COLOR}"/>` +
        text(at, bottom + 19, format(tick), `text-anchor="middle" fill="${MUTED_COLOR}"`),
    );
  }
  parts.push(text(box.left + box.width / 2, bottom + 38, axis.label, 'text-anchor="middle"'));
  return parts;
}

function axisLine(box: Box): string {
  const bottom = num(box.top + box.height);
  return `<line x1="${num(box.left)}" x2="${num(box.left + box.width)}" y1="${bottom}" y2="${bottom}" stroke="${AXIS_COLOR}"/>`;
}

const LABEL_ANGLE = 40;

/** How far category labels reach below the axis: one line, or their length slanted at LABEL_ANGLE. */
function categoryLabelDepth(labels: readonly string[], rotated: boolean): number {
  return rotated ? Math.max(0, ...labels.map((l) => textWidth(l))) * Math.sin((LABEL_ANGLE * Math.PI) / 180) + 14 : 19;
}

/** Category labels under their bands (rotated when they do not fit) and the axis title. */
function categoryAxisSvg(box: Box, labels: readonly string[], band: number, rotated: boolean, title: string): string[] {
  const bottom = box.top + box.height;
  const parts = [axisLine(box)];
  labels.forEach((label, i) => {
    const center = box.left + band * (i + 0.5);
    parts.push(
      rotated
        ? text(center, bottom + 14, label, `text-anchor="end" transform="rotate(-${LABEL_ANGLE} ${num(center)} ${num(bottom + 14)})" fill="${MUTED_COLOR}"`)
        : text(center, bottom + 19, label, `text-anchor="middle" fill="${MUTED_COLOR}"`),
    );
  });
  parts.push(text(box.left + box.width / 2, bottom + categoryLabelDepth(labels, rotated) + 19, title, 'text-anchor="middle"'));
  return parts;
}

/** Where the plot goes once the y tick labels, the legend above and the x labels below have room. */
function plotArea(
  width: number,
  height: number,
  legendItems: readonly LegendItem[],
  yLabels: readonly string[],
  bottom: number,
): { box: Box; legend: LegendRows } {
  // At least room for "1,250", so that most charts on a page line their plots up.
  const left = 34 + Math.max(textWidth('1,250'), ...yLabels.map((l) => textWidth(l)));
  const plotWidth = Math.max(40, width - left - 24);
  const legend = legendLayout(legendItems, left, plotWidth);
  const top = 8 + legend.length * LEGEND_ROW + 14;
  return { box: { left, top, width: plotWidth, height: Math.max(40, height - top - bottom) }, legend };
}

function noData(box: Box): string {
  return text(box.left + box.width / 2, box.top + box.height / 2, 'no data', `text-anchor="middle" fill="${MUTED_COLOR}" font-size="14"`);
}

function dataMax(values: Iterable<number>): number {
  let max = 0;
  for (const v of values) if (Number.isFinite(v) && v > max) max = v;
  return max;
}

function dataMin(values: Iterable<number>): number {
  let min = 0;
  for (const v of values) if (Number.isFinite(v) && v < min) min = v;
  return min;
}

// ---- line chart -----------------------------------------------------------------------------

/** An SVG path through the points, broken wherever a value is not finite. */
function linePath(points: ReadonlyArray<readonly [number, number]>, x: Scale, y: Scale): string {
  let d = '';
  let pen: 'M' | 'L' = 'M';
  for (const [px, py] of points) {
    if (!Number.isFinite(px) || !Number.isFinite(py)) {
      pen = 'M';
      continue;
    }
    d += `${pen}${num(x(px))},${num(y(py))}`;
    pen = 'L';
  }
  return d;
}

/** Lines over a shared x axis (time, usually), one per series, with a legend above. */
export function lineChart(spec: LineChartSpec): string {
  const width = spec.width ?? DEFAULT_WIDTH;
  const height = spec.height ?? DEFAULT_HEIGHT;
  const series = spec.series.map((s) => ({ ...s, points: [...s.points].sort((p, q) => p[0] - q[0]) }));
  const allPoints = series.flatMap((s) => s.points);
  const xs = allPoints.map((p) => p[0]);
  const ys = allPoints.map((p) => p[1]);

  const yTicks = niceTicks(dataMin(ys), dataMax(ys));
  const yFormat = spec.y.format ?? tickFormat(yTicks);
  const xFormat = spec.x.format ?? (spec.x.time ? formatDuration : undefined);
  const items: LegendItem[] = series.map((s) => ({ name: s.name, color: s.color, shape: s.dashed ? 'dashed' : 'line' }));
  const { box, legend } = plotArea(width, height, items, yTicks.map(yFormat), 48);

  const xMin = Math.min(0, dataMin(xs));
  const xMax = Math.max(dataMax(xs), spec.x.end ?? 0, xMin + 1);
  const xTicks = spec.x.time && xMin === 0 ? timeTicks(xMax) : niceTicks(xMin, xMax, 8).filter((t) => t >= xMin && t <= xMax);
  const x = linear([xMin, xMax], [box.left, box.left + box.width]);
  const y = linear([yTicks[0]!, yTicks[yTicks.length - 1]!], [box.top + box.height, box.top]);

  const body = [
    ...legendSvg(legend, 8),
    ...valueAxisSvg(box, yTicks, y, { ...spec.y, format: yFormat }),
    ...numericXAxisSvg(box, xTicks, x, { label: spec.x.label, format: xFormat }),
  ];
  if (allPoints.length === 0) body.push(noData(box));
  for (const s of series) {
    const dash = s.dashed ? ` stroke-dasharray="${DASH}"` : '';
    const color = escapeXml(s.color);
    body.push(
      `<path class="series" data-series="${escapeXml(s.name)}" d="${linePath(s.points, x, y)}" fill="none" stroke="${color}"` +
        ` stroke-width="2" stroke-linejoin="round" stroke-linecap="round"${dash}><title>${escapeXml(s.name)}</title></path>`,
    );
    if (s.points.length === 1) {
      const [px, py] = s.points[0]!;
      body.push(`<circle cx="${num(x(px))}" cy="${num(y(py))}" r="3" fill="${color}"/>`);
    }
  }
  return svgDocument(width, height, spec.label, body);
}

// ---- bars -----------------------------------------------------------------------------------

interface BarLayout {
  /** Width of one category's band. */
  band: number;
  /** Share of the band left empty between neighbouring categories. */
  padding: number;
}

/** The bars of every series, side by side within each category's band. */
function barsSvg(box: Box, series: readonly BarSeries[], y: Scale, layout: BarLayout, valueLabels: Axis['format']): string[] {
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

interface CategoryFrame {
  box: Box;
  band: number;
  rotated: boolean;
  legend: LegendRows;
  yTicks: number[];
  yFormat: (value: number) => string;
  y: Scale;
}

/** Lays out a chart whose x axis is categories: legend, y scale, band width, label rotation. */
function categoryFrame(
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

// ---- histogram ------------------------------------------------------------------------------

function isOverflow(le: number | null): boolean {
  return le === null || !Number.isFinite(le);
}

/** Bucket bounds of all series, ascending, the overflow bucket (if any) last. */
function bucketBounds(series: readonly HistogramSeries[]): number[] {
  const bounds = new Set<number>();
  for (const s of series) for (const b of s.buckets) bounds.add(isOverflow(b.le) ? Infinity : b.le!);
  return [...bounds].sort((a, b) => a - b);
}

/** Where `value` falls on the bucket axis: its bucket's band, in proportion between the bounds. */
function bucketPosition(value: number, bounds: readonly number[], box: Box, band: number): number {
  const index = bounds.findIndex((le) => value <= le);
  if (index < 0) return box.left + box.width;
  const upper = bounds[index]!;
  const lower = index === 0 ? Math.min(0, upper) : bounds[index - 1]!;
  const fraction = Number.isFinite(upper) && upper > lower ? (value - lower) / (upper - lower) : 0.5;
  return box.left + band * (index + Math.min(1, Math.max(0, fraction)));
}

/** Counts per bucket as adjoining bars (series side by side), with optional value markers. */
export function histogram(spec: HistogramSpec): string {
  const width = spec.width ?? DEFAULT_WIDTH;
  const height = spec.height ?? DEFAULT_HEIGHT;
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
  const markers = spec.markers ?? [];
  const frame = categoryFrame(width, height, labels, bars, spec.y.format, markers.length > 0 ? 1.12 : 1.08);
  const { box, band } = frame;
  const body = [
    ...legendSvg(frame.legend, 8),
    ...valueAxisSvg(box, frame.yTicks, frame.y, { ...spec.y, format: frame.yFormat }),
    ...categoryAxisSvg(box, labels, band, frame.rotated, spec.x.label),
    ...barsSvg(box, bars, frame.y, { band, padding: spec.series.length > 1 ? 0.12 : 0.04 }, undefined),
  ];
  // Lines first, then labels, so that no marker's line crosses another's label.
  const placed = markers
    .filter((marker) => Number.isFinite(marker.value) && bounds.length > 0)
    .map((marker) => ({ marker, at: bucketPosition(marker.value, bounds, box, band), color: escapeXml(marker.color) }));
  for (const { at, color } of placed) {
    body.push(
      `<line class="marker" x1="${num(at)}" x2="${num(at)}" y1="${num(box.top)}" y2="${num(box.top + box.height)}" stroke="${color}"` +
        ' stroke-width="1.5" stroke-dasharray="4 3"/>',
    );
  }
  placed.forEach(({ marker, at, color }, i) => {
    const label = `${marker.label} ${(spec.markerFormat ?? spec.x.format)(marker.value)}`;
    const flip = at + 4 + textWidth(label, 11) > box.left + box.width;
    const anchor = flip ? ' text-anchor="end"' : '';
    const halo = 'stroke="#fff" stroke-width="3" paint-order="stroke"';
    body.push(text(flip ? at - 4 : at + 4, box.top + 11 + i * 14, label, `font-size="11" fill="${color}" ${halo}${anchor}`));
  });
  if (bounds.length === 0) body.push(noData(box));
  return svgDocument(width, height, spec.label, body);
}
