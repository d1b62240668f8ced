import { describe, expect, it } from 'vitest';
import { fleetSamples } from './remote-fleet.js';

describe('fleetSamples', () => {
  it('starts from the last status before the load and keeps those during it, in seconds since its start', () => {
    const at = (atMs: number, ready: number) => ({ atMs, replicas: 10, ready, allocated: 10 - ready });
    const statuses = [at(500, 4), at(900, 10), at(1500, 9), at(2250, 8), at(4000, 7)];
    expect(fleetSamples(statuses, 1000, 3000)).toEqual([
      { t: 0, replicas: 10, ready: 10, allocated: 0 },
      { t: 0.5, replicas: 10, ready: 9, allocated: 1 },
      { t: 1.25, replicas: 10, ready: 8, allocated: 2 },
    ]);
    expect(fleetSamples([], 1000, 3000)).toEqual([]);
  });
});
