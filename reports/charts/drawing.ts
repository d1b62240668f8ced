/**
 * The drawing kit the charts share, as inline SVG text: sizes and colours, scales, ticks, legends,
 * axes and the plot area. All text that goes into an `<svg>` is escaped here or by the charts.
 */
import { escapeXml, formatCompact } from '../format.js';

export interface Axis {
  label: string;
  /** Formats tick labels; by default numbers, all with a unit suffix (5k, 10k) if the largest needs one. */
  format?: (value: number) => string;
}

export const DEFAULT_WIDTH = 1120;
export const DEFAULT_HEIGHT = 340;
const FONT_SIZE = 12;
/** Average advance of a character at FONT_SIZE in a sans-serif face, for laying text out. */
const CHAR_WIDTH = 6.8;
export const TEXT_COLOR = '#1f2937';
const MUTED_COLOR = '#6b7280';
const GRID_COLOR = '#e5e7eb';
const AXIS_COLOR = '#9ca3af';
export const DASH = '7 4';

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export type Scale = (value: number) => number;

export function textWidth(text: string, fontSize = FONT_SIZE): number {
  return text.length * CHAR_WIDTH * (fontSize / FONT_SIZE);
}

export function num(value: number): string {
  return String(Math.round(value * 10) / 10);
}

export function linear(domain: readonly [number, number], range: readonly [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

export function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${num(x)}" y="${num(y)}"${attributes ? ` ${attributes}` : ''}>${escapeXml(content)}</text>`;
}

export function svgDocument(width: number, height: number, label: string, body: string[]): string {
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
export function tickFormat(ticks: readonly number[]): (value: number) => string {
  const largest = Math.max(0, ...ticks.map(Math.abs));
  return largest >= 10_000 ? (value) => formatCompact(value, 1000) : (value) => formatCompact(value);
}

// ---- layout pieces --------------------------------------------------------------------------

export interface LegendItem {
  name: string;
  color: string;
  shape: 'line' | 'dashed' | 'box';
}

const LEGEND_ROW = 20;
const LEGEND_SWATCH = 22;

export type LegendRows = Array<Array<{ item: LegendItem; x: number }>>;

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

export function legendSvg(rows: LegendRows, top: number): string[] {
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
export function valueAxisSvg(box: Box, ticks: readonly number[], y: Scale, axis: Axis): string[] {
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
export function numericXAxisSvg(box: Box, ticks: readonly number[], x: Scale, axis: Axis): string[] {
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
export function categoryLabelDepth(labels: readonly string[], rotated: boolean): number {
  return rotated ? Math.max(0, ...labels.map((l) => textWidth(l))) * Math.sin((LABEL_ANGLE * Math.PI) / 180) + 14 : 19;
}

/** Category labels under their bands (rotated when they do not fit) and the axis title. */
export function categoryAxisSvg(box: Box, labels: readonly string[], band: number, rotated: boolean, title: string): string[] {
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
export function plotArea(
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

export function noData(box: Box): string {
  return text(box.left + box.width / 2, box.top + box.height / 2, 'no data', `text-anchor="middle" fill="${MUTED_COLOR}" font-size="14"`);
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
