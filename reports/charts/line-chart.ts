import { escapeXml, formatDuration } from '../format.js';
import {
  type Axis,
  DASH,
  DEFAULT_HEIGHT,
  DEFAULT_WIDTH,
  type LegendItem,
  type Scale,
  dataMax,
  dataMin,
  legendSvg,
  linear,
  niceTicks,
  noData,
  num,
  numericXAxisSvg,
  plotArea,
  svgDocument,
  tickFormat,
  timeTicks,
  valueAxisSvg,
} from './drawing.js';

/** A line chart drawn as one inline `<svg>`: values are plain numbers, the caller converts units. */

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
