import { describe, expect, it } from 'vitest';
import { fleetSamples } from './remote-fleet.js';

describe('fleetSamples', () => {
  it('takes the last status by each whole second of the load, as a local run samples its event log', () => {
    const at = (atMs: number, ready: number) => ({ atMs, replicas: 10, ready, allocated: 10 - ready });
    const statuses = [at(500, 4), at(900, 10), at(1500, 9), at(2250, 8), at(2400, 6), at(3500, 7)];
    expect(fleetSamples(statuses, 1000, 3400)).toEqual([
      { t: 0, replicas: 10, ready: 10, allocated: 0 },
      { t: 1, replicas: 10, ready: 9, allocated: 1 },
      { t: 2, replicas: 10, ready: 6, allocated: 4 },
    ]);
    // Nothing seen yet: no sample rather than a made-up one.
    expect(fleetSamples([at(1600, 3)], 1000, 3000)).toEqual([
      { t: 1, replicas: 10, ready: 3, allocated: 7 },
      { t: 2, replicas: 10, ready: 3, allocated: 7 },
    ]);
    expect(fleetSamples([], 1000, 3000)).toEqual([]);
  });
});
