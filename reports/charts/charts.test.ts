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
import { barChart } from './bar-chart.js';
import { niceTicks, timeTicks } from './drawing.js';
import { histogram } from './histogram.js';
import { lineChart } from './line-chart.js';

describe('ticks', () => {
  it('picks round steps that cover the data', () => {
    expect(niceTicks(0, 87)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 1.3)).toEqual([0, 0.5, 1, 1.5]);
    expect(niceTicks(0, 0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-12, 30)).toEqual([-20, -10, 0, 10, 20, 30]);
    expect(niceTicks(0, 0.3)).toEqual([0, 0.1, 0.2, 0.3]);
  });

  it('steps time on what a clock reads well', () => {
    expect(timeTicks(180)).toEqual([0, 30, 60, 90, 120, 150, 180]);
    expect(timeTicks(45)).toEqual([0, 10, 20, 30, 40]);
    expect(timeTicks(3600)).toEqual([0, 600, 1200, 1800, 2400, 3000, 3600]);
  });
});

describe('lineChart', () => {
  it('draws a path per series, broken at gaps, with a legend entry each', () => {
    const svg = lineChart({
      label: 'Rate <per> second',
      x: { label: 'time', time: true },
      y: { label: 'requests / s' },
      series: [
        { name: 'a & b', color: '#123456', points: [[0, 1], [1, 2], [2, Number.NaN], [3, 4], [4, 5]] },
        { name: 'c', color: '#654321', dashed: true, points: [[0, 3]] },
      ],
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('aria-label="Rate &lt;per&gt; second"');
    const path = svg.match(/data-series="a &amp; b" d="([^"]*)"/)![1]!;
    expect(path.match(/M/g)).toHaveLength(2);
    expect(path.match(/L/g)).toHaveLength(2);
    expect(svg).toContain('>a &amp; b</text>');
    expect(svg).toContain('data-series="c"');
    expect(svg).toContain('<circle'); // a single point still shows
    expect(svg).toContain('stroke-dasharray="7 4"');
    expect(svg).toContain('>requests / s</text>');
  });

  it('says so when there is nothing to draw', () => {
    expect(lineChart({ label: 'empty', x: { label: 't' }, y: { label: 'v' }, series: [] })).toContain('>no data</text>');
  });

  it('labels large y values with a unit suffix on every tick', () => {
    const svg = lineChart({ label: 'big', x: { label: 't' }, y: { label: 'v' }, series: [{ name: 's', color: '#000', points: [[0, 0], [10, 24_000]] }] });
    expect(svg).toContain('>5k</text>');
    expect(svg).toContain('>25k</text>');
  });
});

describe('barChart', () => {
  it('draws a bar per series and category, with value labels', () => {
    const svg = barChart({
      label: 'Outcomes',
      categories: ['Allocated', 'error'],
      x: { label: 'outcome' },
      y: { label: 'allocations' },
      series: [
        { name: 'one', color: '#111', values: [120_000, 3] },
        { name: 'two', color: '#222', values: [90_000, 0] },
      ],
    });
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(4);
    expect(svg).toContain('>120k</text>');
    expect(svg).toContain('>Allocated</text>');
    expect(svg).toContain('<title>one: 120,000</title>');
  });
});

describe('histogram', () => {
  it('draws buckets in order, the overflow bucket last, with markers inside their bucket', () => {
    const svg = histogram({
      label: 'Latency',
      x: { label: 'ms', format: (v) => formatSignificant(v) },
      y: { label: 'count' },
      series: [{ name: 'h', color: '#333', buckets: [{ le: null, count: 1 }, { le: 1, count: 5 }, { le: 5, count: 9 }] }],
      markers: [{ label: 'p50', value: 3, color: '#f00' }],
      markerFormat: formatMs,
    });
    const labels = [...svg.matchAll(/>(≤[^<]*|&gt;[^<]*)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['≤1', '≤5', '&gt;5']);
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(3);
    expect(svg).toContain('>p50 3 ms</text>');
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
