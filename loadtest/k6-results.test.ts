import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type K6Summary, counterTotal, readSamples, seriesFigures, thresholdResults } from './k6-results.js';

const dir = mkdtempSync(join(tmpdir(), 'k6-results-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("k6's --summary-export", () => {
  const summary: K6Summary = {
    metrics: {
      http_req_duration: { avg: 3, 'p(99)': 70, thresholds: { 'p(99)<50': true } },
      alloc_allocated: { count: 12, rate: 4, thresholds: { 'count>0': false } },
      alloc_error: { count: 0, rate: 0 },
    },
  };

  it('reads each threshold as crossed (true) or not', () => {
    expect(thresholdResults(summary)).toEqual([
      { metric: 'alloc_allocated', expression: 'count>0', ok: true },
      { metric: 'http_req_duration', expression: 'p(99)<50', ok: false },
    ]);
  });

  it('reads counter totals, 0 for a metric that never got a sample', () => {
    expect(counterTotal(summary, 'alloc_allocated')).toBe(12);
    expect(counterTotal(summary, 'alloc_contention')).toBe(0);
  });
});

describe("k6's JSON output", () => {
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const point = (metric: string, ms: number, value: number, tags: Record<string, string> = {}) =>
    JSON.stringify({ metric, type: 'Point', data: { time: at(ms), value, tags } });

  it('keeps the selected samples, per second since the start', async () => {
    const path = join(dir, 'out.json');
    writeFileSync(
      path,
      [
        JSON.stringify({ type: 'Metric', data: { name: 'http_reqs', type: 'counter' }, metric: 'http_reqs' }),
        point('http_reqs', 100, 1, { endpoint: 'allocator' }),
        point('http_req_duration', 100, 2, { endpoint: 'allocator' }),
        point('http_reqs', 300, 1, { endpoint: 'resource-api' }),
        point('http_req_duration', 300, 4, { endpoint: 'resource-api' }),
        // setup()'s own request: no endpoint tag, not counted
        point('http_reqs', 400, 1),
        point('http_req_duration', 400, 1000),
        point('http_reqs', 2100, 1, { endpoint: 'allocator' }),
        point('http_req_duration', 2100, 6, { endpoint: 'allocator' }),
        point('http_req_waiting', 2100, 5, { endpoint: 'allocator' }),
        '{"metric":"http_reqs","type":"Point","data":{"ti', // cut short when k6 stopped
      ].join('\n'),
    );
    const selector = { metric: 'http_reqs', endpoints: ['allocator', 'resource-api'] };
    const samples = await readSamples(path, t0, selector, { metric: 'http_req_duration', endpoints: ['allocator', 'resource-api'] });
    expect(samples.requestCount).toBe(3);
    const figures = seriesFigures(samples);
    expect(figures.requestRateSeries).toEqual([
      [0, 2],
      [1, 0],
      [2, 1],
    ]);
    expect(figures.latency).toMatchObject({ count: 3, min: 2, max: 6, p50: 4 });
    expect(figures.latencyP50).toEqual([
      [0, 3],
      [2, 6],
    ]);
    expect(figures.latencyHistogram).toEqual([
      { le: 0.5, count: 0 },
      { le: 1, count: 0 },
      { le: 2, count: 1 },
      { le: 5, count: 1 },
      { le: 10, count: 1 },
    ]);
  });

  it('can take every sample of a metric (watch deliveries)', async () => {
    const path = join(dir, 'watch.json');
    writeFileSync(path, [point('watch_delivered', 10, 1), point('watch_delivery_ms', 10, 3), point('watch_delivered', 20, 1), point('watch_delivery_ms', 20, 9)].join('\n'));
    const samples = await readSamples(path, t0, { metric: 'watch_delivered' }, { metric: 'watch_delivery_ms' });
    expect(samples.requestCount).toBe(2);
    expect(seriesFigures(samples).latency.max).toBe(9);
  });
});
