import { escapeXml } from '../format.js';
import { type BarSeries, barsSvg, categoryFrame } from './bar-chart.js';
import {
  type Axis,
  type Box,
  DEFAULT_HEIGHT,
  DEFAULT_WIDTH,
  categoryAxisSvg,
  legendSvg,
  noData,
  num,
  svgDocument,
  text,
  textWidth,
  valueAxisSvg,
} from './drawing.js';

/** A histogram drawn as one inline `<svg>`: counts per bucket as adjoining bars, with markers. */

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
