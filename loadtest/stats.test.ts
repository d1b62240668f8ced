import { describe, expect, it } from 'vitest';
import { PerSecond, histogram, latencySummary, percentile } from './stats.js';

describe('percentile', () => {
  it('interpolates between the nearest ranks, as k6 does', () => {
    const sorted = [1, 2, 3, 4];
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 50)).toBe(2.5);
    expect(percentile(sorted, 100)).toBe(4);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBe(0);
  });
});

describe('latencySummary', () => {
  it('summarises unsorted values', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const s = latencySummary(values);
    expect(s).toMatchObject({ count: 100, min: 1, max: 100, mean: 50.5 });
    expect(s.p50).toBeCloseTo(50.5);
    expect(s.p99).toBeCloseTo(99.01);
  });

  it('is all zeros for no values', () => {
    expect(latencySummary([])).toEqual({ count: 0, min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, max: 0 });
  });
});

describe('histogram', () => {
  it('counts values per bucket (previous bound, le] and ends the overflow bucket at the maximum', () => {
    expect(histogram([0.2, 1, 1.5, 3, 40], [1, 2, 10])).toEqual([
      { le: 1, count: 2 },
      { le: 2, count: 1 },
      { le: 10, count: 1 },
      { le: 40, count: 1 },
    ]);
  });

  it('drops empty buckets at the top', () => {
    expect(histogram([0.1], [1, 2, 10])).toEqual([{ le: 1, count: 1 }]);
    expect(histogram([], [1])).toEqual([]);
  });
});

describe('PerSecond', () => {
  it('groups samples into whole seconds since t0 and fills empty seconds with zero counts', () => {
    const t0 = 1_000_000;
    const series = new PerSecond(t0);
    series.add(t0 + 100, 5);
    series.add(t0 + 900, 1);
    series.add(t0 + 2500, 3);
    expect(series.counts()).toEqual([
      [0, 2],
      [1, 0],
      [2, 1],
    ]);
    expect(series.sums()).toEqual([
      [0, 6],
      [1, 0],
      [2, 3],
    ]);
    // Percentiles only for seconds that have samples.
    expect(series.percentiles(50)).toEqual([
      [0, 3],
      [2, 3],
    ]);
    expect([...series.values()].sort()).toEqual([1, 3, 5]);
  });
});
