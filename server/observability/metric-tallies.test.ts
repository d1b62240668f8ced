import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter, TalliedGauge, TalliedHistogram } from './metric-tallies.js';

/** The exposition of one registry, its metric renamed, to compare with prom-client's own. */
async function exposition(registry: client.Registry, name: string): Promise<string> {
  return (await registry.metrics()).replaceAll(name, 'm');
}

describe('tallied metrics', () => {
  it("expose a histogram exactly as prom-client's own does for the same observations", async () => {
    const ours = new client.Registry();
    const theirs = new client.Registry();
    const buckets = [0.01, 0.1, 1, 3];
    const labelNames = ['fleet_name', 'status'];
    const tallied = new TalliedHistogram({ name: 'ours', help: 'h', labelNames, buckets, registers: [ours] });
    const plain = new client.Histogram({ name: 'theirs', help: 'h', labelNames, buckets, registers: [theirs] });
    for (const [fleet, status, value] of [
      ['a', 'Allocated', 0.005],
      ['a', 'Allocated', 0.1],
      ['a', 'UnAllocated', 2],
      ['b', 'Allocated', 7],
      ['a', 'Allocated', 0.01],
    ] as const) {
      tallied.series(fleet, status).observe(value);
      plain.observe({ fleet_name: fleet, status }, value);
    }
    expect(await exposition(ours, 'ours')).toBe(await exposition(theirs, 'theirs'));
  });

  it('expose counters and gauges as prom-client does, one series per set of label values', async () => {
    const ours = new client.Registry();
    const theirs = new client.Registry();
    const counter = new TalliedCounter({ name: 'ours_total', help: 'h', labelNames: ['type', 'namespace'], registers: [ours] });
    const plain = new client.Counter({ name: 'theirs_total', help: 'h', labelNames: ['type', 'namespace'], registers: [theirs] });
    counter.series('Ready', 'default').value += 2;
    counter.series('Allocated', 'default').value++;
    counter.series('Ready', 'default').value++;
    plain.inc({ type: 'Ready', namespace: 'default' }, 3);
    plain.inc({ type: 'Allocated', namespace: 'default' });
    expect(await exposition(ours, 'ours_total')).toBe(await exposition(theirs, 'theirs_total'));

    const gauges = new client.Registry();
    const gauge = new TalliedGauge({ name: 'depth', help: 'h', labelNames: ['queue_name'], registers: [gauges] });
    gauge.series('q').value = 4;
    gauge.series('q').value--;
    expect(await gauges.metrics()).toBe('# HELP depth h\n# TYPE depth gauge\ndepth{queue_name="q"} 3\n');
  });
});
