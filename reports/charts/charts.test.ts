import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  escapeXml,
  formatBytes,
  formatCompact,
  formatCount,
  formatDuration,
  formatMs,
  formatPercent,
  formatRate,
  formatSignificant,
  markdownCode,
  markdownText,
} from '../format.js';
import { barsOf, linesOf, plottedStrokes, textsOf } from '../../test/helpers/chart-svg.js';
import { echartsBrowserBundlePath } from './browser-bundle.js';
import { timeTicks } from './chart-style.js';
import { bucketPosition } from './histogram.js';
import { type LineChartSpec, lineChartOption } from './line-chart.js';
import { barChartSvg, histogramSvg, lineChartSvg } from './svg.js';

describe('ticks', () => {
  it('steps time on what a clock reads well', () => {
    expect(timeTicks(180)).toEqual([0, 30, 60, 90, 120, 150, 180]);
    expect(timeTicks(45)).toEqual([0, 10, 20, 30, 40]);
    expect(timeTicks(3600)).toEqual([0, 600, 1200, 1800, 2400, 3000, 3600]);
  });
});

const rateSpec: LineChartSpec = {
  label: 'Rate <per> second',
  width: 800,
  height: 300,
  x: { label: 'time since start', time: true, end: 180 },
  y: { label: 'requests / s' },
  series: [
    { name: 'a & b', color: '#123456', points: [[0, 1], [1, 2], [2, Number.NaN], [3, 4], [4, 5]] },
    { name: 'c', color: '#654321', dashed: true, points: [[0, 3]] },
  ],
};

describe('lineChartSvg', () => {
  it('draws a line per series, broken at gaps, dashed where asked, with a legend entry each', () => {
    const svg = lineChartSvg(rateSpec);
    expect(svg.startsWith('<svg class="chart" role="img" aria-label="Rate &lt;per&gt; second"')).toBe(true);
    expect(svg).toContain('<title>Rate &lt;per&gt; second</title>');
    expect(linesOf(svg)).toEqual([
      { color: '#123456', width: 2, dash: '', pieces: 2 },
      { color: '#654321', width: 2, dash: '7,4', pieces: 1 },
    ]);
    expect(svg).toMatch(/<path [^>]*fill="#654321"[^>]*ecmeta_ssr_type="chart"/); // a lone point still shows, as a dot
    const texts = textsOf(svg);
    expect(texts).toEqual(expect.arrayContaining(['a & b', 'c', 'requests / s', 'time since start']));
    // Time ticks on clock steps, written as durations, up to the run's end.
    expect(texts).toEqual(expect.arrayContaining(['0s', '30s', '1m', '1m 30s', '3m']));
  });

  it('says so when there is nothing to draw', () => {
    expect(textsOf(lineChartSvg({ ...rateSpec, series: [] }))).toContain('no data');
    expect(textsOf(lineChartSvg(rateSpec))).not.toContain('no data');
  });

  it('labels large y values with a unit suffix on every tick', () => {
    const texts = textsOf(lineChartSvg({ ...rateSpec, series: [{ name: 's', color: '#000', points: [[0, 0], [10, 24_000]] }] }));
    expect(texts).toEqual(expect.arrayContaining(['5k', '10k', '25k']));
  });

  it('renders the same chart to the same text, and different charts under different ids', () => {
    const svg = lineChartSvg(rateSpec);
    expect(lineChartSvg(rateSpec)).toBe(svg);
    expect(svg).not.toMatch(/zr\d+-/);
    const ids = (chart: string) => [...chart.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]);
    const other = lineChartSvg({ ...rateSpec, label: 'other', series: rateSpec.series.slice(0, 1) });
    expect(ids(svg).length).toBeGreaterThan(0);
    expect(ids(svg).filter((id) => ids(other).includes(id))).toEqual([]);
  });
});

describe('lineChartOption', () => {
  it('is plain data a browser page can hand to ECharts: series, gaps as null, the time axis', () => {
    const option = lineChartOption(rateSpec);
    expect(option.series).toMatchObject([
      { type: 'line', name: 'a & b', color: '#123456', data: [[0, 1], [1, 2], [2, null], [3, 4], [4, 5]], lineStyle: { type: 'solid' } },
      { type: 'line', name: 'c', color: '#654321', data: [[0, 3]], lineStyle: { type: [7, 4] }, symbol: 'circle' },
    ]);
    expect(option.xAxis).toMatchObject({ type: 'value', min: 0, max: 180, name: 'time since start', axisLabel: { customValues: [0, 30, 60, 90, 120, 150, 180] } });
    expect(JSON.parse(JSON.stringify(option.legend))).toMatchObject({ data: [{ name: 'a & b' }, { name: 'c' }] });
  });
});

describe('barChartSvg', () => {
  it('draws a bar per series and category, with value labels', () => {
    const svg = barChartSvg({
      label: 'Outcomes',
      width: 540,
      height: 300,
      categories: ['Allocated', 'error'],
      x: { label: 'outcome' },
      y: { label: 'allocations' },
      series: [
        { name: 'one', color: '#111111', values: [120_000, 3] },
        { name: 'two', color: '#222222', values: [90_000, 0] },
      ],
    });
    expect(barsOf(svg)).toEqual([
      { series: 0, color: '#111111' },
      { series: 0, color: '#111111' },
      { series: 1, color: '#222222' },
      { series: 1, color: '#222222' },
    ]);
    expect(textsOf(svg)).toEqual(expect.arrayContaining(['one', 'two', 'Allocated', 'error', 'outcome', 'allocations', '120k', '90k', '3']));
  });
});

describe('histogramSvg', () => {
  it('draws buckets in order, the overflow bucket last, with markers inside their bucket', () => {
    const svg = histogramSvg({
      label: 'Latency',
      width: 540,
      height: 300,
      x: { label: 'ms', format: (v) => formatSignificant(v) },
      y: { label: 'count' },
      series: [{ name: 'h', color: '#333333', buckets: [{ le: null, count: 1 }, { le: 1, count: 5 }, { le: 5, count: 9 }] }],
      markers: [{ label: 'p50', value: 3, color: '#ff0000' }],
      markerFormat: formatMs,
    });
    expect(textsOf(svg).filter((t) => /^[≤>]/.test(t))).toEqual(['≤1', '≤5', '>5']);
    expect(barsOf(svg)).toHaveLength(3);
    expect(plottedStrokes(svg)).toContainEqual({ color: '#ff0000', width: 1.5, dash: '4,3', pieces: 1 });
    expect(textsOf(svg)).toContain('p50 3 ms');
  });

  it('places a marker between its bucket\'s bounds', () => {
    const bounds = [1, 5, Infinity];
    expect(bucketPosition(0.5, bounds)).toBe(0.5);
    expect(bucketPosition(3, bounds)).toBe(1.5);
    expect(bucketPosition(50, bounds)).toBe(2.5); // in the overflow bucket: its middle
  });
});

describe('echartsBrowserBundlePath', () => {
  it("is ECharts's one-file browser build, for a server to serve", () => {
    const path = echartsBrowserBundlePath();
    expect(path).toMatch(/echarts[\\/]dist[\\/]echarts\.min\.js$/);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path, 'utf8').slice(0, 2000)).toMatch(/echarts/i);
  });
});

describe('formatting', () => {
  it('writes numbers for people', () => {
    expect(formatCount(12_345)).toBe('12,345');
    expect(formatCount(1_612_345)).toBe('1.61M');
    expect(formatCompact(950)).toBe('950');
    expect(formatCompact(186_420)).toBe('186k');
    expect(formatRate(1074.3)).toBe('1,074/s');
    expect(formatMs(0.4234)).toBe('0.423 ms');
    expect(formatMs(33.33)).toBe('33.3 ms');
    expect(formatMs(1520)).toBe('1.52 s');
    expect(formatBytes(315 * 2 ** 20)).toBe('315 MiB');
    expect(formatBytes(1.5 * 2 ** 30)).toBe('1.5 GiB');
    expect(formatDuration(45)).toBe('45s');
    expect(formatDuration(90)).toBe('1m 30s');
    expect(formatDuration(180)).toBe('3m');
    expect(formatDuration(3900)).toBe('1h 5m');
    expect(formatPercent(0.9921)).toBe('99.2%');
    expect(formatSignificant(Number.NaN)).toBe('—');
  });

  it('escapes text for HTML and Markdown', () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(markdownText('a|b <i>*c*</i>')).toBe('a\\|b \\<i\\>\\*c\\*\\</i\\>');
    expect(markdownCode('x`y')).toBe('``x`y``');
    expect(markdownCode('a|b', true)).toBe('`a\\|b`');
  });
});
