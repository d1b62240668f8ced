import type { LatencySummary, Series } from '../reports/run-data.js';

/**
 * Percentile of sorted values with linear interpolation between the two nearest ranks (k6's
 * own method), so figures computed here agree with k6's end-of-test summary.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  if (sorted.length === 1) return sorted[0]!;
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.min(sorted.length - 1, lower + 1);
  const weight = rank - lower;
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * weight;
}

export function sortNumbers(values: Iterable<number>): Float64Array {
  const sorted = Float64Array.from(values);
  sorted.sort();
  return sorted;
}

export function latencySummary(values: Iterable<number>): LatencySummary {
  const sorted = sortNumbers(values);
  if (sorted.length === 0) return { count: 0, min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, max: 0 };
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    min: sorted[0]!,
    mean: sum / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
  };
}

/** Upper bounds (ms) of the latency histograms in run.json; the last bucket ends at the maximum seen. */
export const HISTOGRAM_BOUNDS_MS = [0.5, 1, 2, 5, 10, 20, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/**
 * A latency histogram: each entry counts the values in (previous bound, le]; one more entry,
 * with le = the largest value, holds whatever lies above the last fixed bound. Empty buckets at
 * the top are left out.
 */
export function histogram(values: Iterable<number>, bounds: readonly number[] = HISTOGRAM_BOUNDS_MS): Array<{ le: number; count: number }> {
  const counts = new Array<number>(bounds.length + 1).fill(0);
  let max = 0;
  let any = false;
  for (const value of values) {
    any = true;
    if (value > max) max = value;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    counts[i]!++;
  }
  if (!any) return [];
  const buckets = bounds.map((le, i) => ({ le, count: counts[i]! }));
  if (counts[bounds.length]! > 0) buckets.push({ le: max, count: counts[bounds.length]! });
  while (buckets.length > 0 && buckets[buckets.length - 1]!.count === 0) buckets.pop();
  return buckets;
}

/**
 * Samples grouped into whole seconds since `t0Ms`: every second from 0 to the last one seen is
 * present, so a chart shows a gap as a zero rather than skipping it.
 */
export class PerSecond {
  private readonly buckets = new Map<number, number[]>();
  private last = -1;
  private readonly sorted = new Set<number>();

  constructor(private readonly t0Ms: number) {}

  add(timeMs: number, value: number): void {
    const second = Math.max(0, Math.floor((timeMs - this.t0Ms) / 1000));
    let bucket = this.buckets.get(second);
    if (!bucket) {
      bucket = [];
      this.buckets.set(second, bucket);
    }
    bucket.push(value);
    this.sorted.delete(second);
    if (second > this.last) this.last = second;
  }

  /** Number of samples in each second. */
  counts(): Series {
    const series: Series = [];
    for (let s = 0; s <= this.last; s++) series.push([s, this.buckets.get(s)?.length ?? 0]);
    return series;
  }

  /** Sum of the sample values in each second. */
  sums(): Series {
    const series: Series = [];
    for (let s = 0; s <= this.last; s++) series.push([s, (this.buckets.get(s) ?? []).reduce((a, b) => a + b, 0)]);
    return series;
  }

  /** A percentile of the values in each second that has any. */
  percentiles(p: number): Series {
    const series: Series = [];
    for (let s = 0; s <= this.last; s++) {
      const bucket = this.buckets.get(s);
      if (!bucket || bucket.length === 0) continue;
      // Sorting in place is harmless (order within a second means nothing) and done once.
      if (!this.sorted.has(s)) {
        bucket.sort((a, b) => a - b);
        this.sorted.add(s);
      }
      series.push([s, percentile(bucket, p)]);
    }
    return series;
  }

  /** Every value, in no particular order. */
  *values(): Generator<number> {
    for (const bucket of this.buckets.values()) yield* bucket;
  }
}
