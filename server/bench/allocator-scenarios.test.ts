import { describe, expect, it } from 'vitest';
import { READY_BURST, ROOMS_BURST, runBurst, runBursts } from './allocator-scenarios.js';

/**
 * The shapes `npm run bench:allocator-model` prints, held qualitatively (no times): under
 * agones-batch, contention rises with replicas (#1856) and requests are refused while servers
 * have room (#4142); under exact, neither.
 */

const SEEDS = [1, 2, 3, 4];
const batch = (replicas: number) => ({ model: 'agones-batch' as const, replicas });

describe('allocation bursts', () => {
  it('exact: no conflicts, nothing refused while a server has room', async () => {
    for (const scenario of [READY_BURST, ROOMS_BURST]) {
      const figures = await runBurst(scenario, { model: 'exact' }, 1);
      expect(figures, scenario.name).toMatchObject({ requests: scenario.requests, allocated: scenario.requests, conflicts: 0, retries: 0, failedWithRoom: 0 });
    }
  });

  it('#1856: agones-batch has more contention with 4 replicas than with 1, and refuses requests while Ready servers exist', async () => {
    const one = await runBursts(READY_BURST, batch(1), SEEDS);
    const four = await runBursts(READY_BURST, batch(4), SEEDS);
    expect(four.conflicts / four.requests).toBeGreaterThan(one.conflicts / one.requests);
    expect(four.retries).toBeGreaterThan(0);
    expect(four.failedWithRoom).toBeGreaterThan(0);
  });

  it('#4142: agones-batch answers UnAllocated under a burst while servers have room, with 1 replica as with 4', async () => {
    for (const replicas of [1, 4]) {
      const figures = await runBurst(ROOMS_BURST, batch(replicas), 1);
      expect(figures.unallocated, `${replicas} replicas`).toBeGreaterThan(0);
      expect(figures.failedWithRoom, `${replicas} replicas`).toBeGreaterThan(0);
    }
  });

  it('is deterministic on the virtual clock: the same seed gives the same figures', async () => {
    const first = await runBurst(READY_BURST, batch(4), 3);
    expect(await runBurst(READY_BURST, batch(4), 3)).toEqual(first);
    expect(first.conflicts).toBeGreaterThan(0);
  });
});
