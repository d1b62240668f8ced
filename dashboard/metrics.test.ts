import { describe, expect, it } from 'vitest';
import { allocationRate, parseAllocations } from './metrics.js';

/** Prometheus text as /metrics writes the allocation histogram (two fleets, two outcomes), with another family around it. */
function scrape(allocated: [number, number, number], unallocated: number, sum: number): string {
  const [fast, slow, slower] = allocated;
  const h = 'agones_gameserver_allocations_duration_seconds';
  const labels = (fleet: string, status: string) => `fleet_name="${fleet}",cluster_name="",is_multicluster="false",status="${status}",scheduling_strategy="Packed"`;
  return [
    '# HELP agones_gameservers_count The number of gameservers',
    'agones_gameservers_count{type="Ready",fleet_name="a",namespace="default"} 7',
    `# TYPE ${h} histogram`,
    `${h}_bucket{le="0.01",${labels('a', 'Allocated')}} ${fast}`,
    `${h}_bucket{le="0.1",${labels('a', 'Allocated')}} ${fast + slow}`,
    `${h}_bucket{le="+Inf",${labels('a', 'Allocated')}} ${fast + slow + slower}`,
    `${h}_sum{${labels('a', 'Allocated')}} ${sum}`,
    `${h}_count{${labels('a', 'Allocated')}} ${fast + slow + slower}`,
    `${h}_bucket{le="0.01",${labels('', 'UnAllocated')}} ${unallocated}`,
    `${h}_bucket{le="0.1",${labels('', 'UnAllocated')}} ${unallocated}`,
    `${h}_bucket{le="+Inf",${labels('', 'UnAllocated')}} ${unallocated}`,
    `${h}_sum{${labels('', 'UnAllocated')}} 0`,
    `${h}_count{${labels('', 'UnAllocated')}} ${unallocated}`,
  ].join('\n');
}

describe('allocation figures from /metrics', () => {
  it('sums the histogram over fleets and outcomes, bucket by bucket', () => {
    const s = parseAllocations(scrape([4, 2, 0], 3, 0.5), 1000);
    expect(s).toEqual({ at: 1000, count: 9, sum: 0.5, buckets: [[0.01, 7], [0.1, 9], [Infinity, 9]], byStatus: { Allocated: 6, UnAllocated: 3 } });
  });

  it('gives the rate, the mean and the quantiles of what happened between two scrapes', () => {
    const before = parseAllocations(scrape([4, 2, 0], 3, 0.5), 10_000);
    const after = parseAllocations(scrape([14, 12, 0], 13, 1.5), 12_000);
    const rate = allocationRate(before, after);
    expect(rate.perSecond).toBe(15); // 30 allocations in 2 s
    expect(rate.unallocatedPerSecond).toBe(5);
    expect(rate.meanMs).toBeCloseTo((1000 * 1) / 30);
    // 20 of the 30 at or under 10 ms: the median is inside the first bucket, the 99th in the second.
    expect(rate.p50Ms).toBeCloseTo(7.5);
    expect(rate.p99Ms! > 10 && rate.p99Ms! <= 100).toBe(true);
  });

  it('has no latency when nothing was allocated', () => {
    const same = parseAllocations(scrape([1, 0, 0], 0, 0.001), 0);
    const rate = allocationRate(same, { ...same, at: 3000 });
    expect(rate.perSecond).toBe(0);
    expect(rate.meanMs).toBeUndefined();
    expect(rate.p50Ms).toBeUndefined();
  });
});
