/**
 * Allocation rate and latency from Agones's allocation histogram at /metrics
 * (`agones_gameserver_allocations_duration_seconds`, labelled by fleet and status), read every few
 * seconds: the rate and the quantiles come from the difference between two scrapes.
 */

export const ALLOCATION_HISTOGRAM = 'agones_gameserver_allocations_duration_seconds';

/** One scrape of the histogram, summed over fleets; `byStatus` counts allocations by outcome. */
export interface AllocationScrape {
  /** When it was read (ms, the page's clock). */
  at: number;
  count: number;
  sum: number;
  /** Cumulative count at or below each bucket's upper bound (seconds), in bound order. */
  buckets: Array<[number, number]>;
  byStatus: Record<string, number>;
}

const SAMPLE = /^(\w+)(?:\{([^}]*)\})?\s+(\S+)/;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of (text ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
  return labels;
}

/** Reads the histogram's samples out of Prometheus text; other families are skipped. */
export function parseAllocations(text: string, at: number): AllocationScrape {
  const scrape: AllocationScrape = { at, count: 0, sum: 0, buckets: [], byStatus: {} };
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(ALLOCATION_HISTOGRAM)) continue;
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const [, name, labelText, valueText] = m;
    const value = Number(valueText);
    const labels = labelsOf(labelText);
    if (name === `${ALLOCATION_HISTOGRAM}_count`) {
      scrape.count += value;
      const status = labels.status ?? '';
      scrape.byStatus[status] = (scrape.byStatus[status] ?? 0) + value;
    } else if (name === `${ALLOCATION_HISTOGRAM}_sum`) scrape.sum += value;
    else if (name === `${ALLOCATION_HISTOGRAM}_bucket`) {
      const bound = labels.le === '+Inf' ? Infinity : Number(labels.le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    }
  }
  scrape.buckets = [...buckets].sort((a, b) => a[0] - b[0]);
  return scrape;
}

/** What happened between two scrapes. */
export interface AllocationRate {
  at: number;
  /** Allocations per second, of any outcome. */
  perSecond: number;
  /** Per second that found no GameServer (status UnAllocated). */
  unallocatedPerSecond: number;
  /** Mean and estimated quantiles of the latency, in milliseconds; undefined with no allocation. */
  meanMs: number | undefined;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
}

/** The quantile `q` of the allocations between two scrapes, interpolated within its bucket as Prometheus's histogram_quantile does. */
function quantile(previous: AllocationScrape, current: AllocationScrape, q: number): number | undefined {
  const before = new Map(previous.buckets);
  const deltas = current.buckets.map(([bound, n]) => [bound, n - (before.get(bound) ?? 0)] as [number, number]);
  const total = deltas.at(-1)?.[1] ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, count] of deltas) {
    if (count >= rank) {
      if (bound === Infinity) return lowerBound;
      return lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / Math.max(count - lowerCount, 1e-9);
    }
    lowerBound = bound;
    lowerCount = count;
  }
  return lowerBound;
}

export function allocationRate(previous: AllocationScrape, current: AllocationScrape): AllocationRate {
  const seconds = Math.max((current.at - previous.at) / 1000, 1e-3);
  const count = current.count - previous.count;
  const unallocated = (current.byStatus.UnAllocated ?? 0) - (previous.byStatus.UnAllocated ?? 0);
  const ms = (s: number | undefined) => (s === undefined ? undefined : s * 1000);
  return {
    at: current.at,
    perSecond: Math.max(count, 0) / seconds,
    unallocatedPerSecond: Math.max(unallocated, 0) / seconds,
    meanMs: count > 0 ? ms((current.sum - previous.sum) / count) : undefined,
    p50Ms: ms(quantile(previous, current, 0.5)),
    p99Ms: ms(quantile(previous, current, 0.99)),
  };
}
