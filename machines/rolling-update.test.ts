import { describe, expect, it } from 'vitest';
import {
  type FleetView,
  type SetView,
  applyDeploymentStrategy,
  resolveIntOrPercent,
  rollingUpdateActive,
  rollingUpdateRest,
} from './rolling-update.js';

function set(name: string, replicas: number, status: Partial<SetView['status']> = {}): SetView {
  return {
    name,
    replicas,
    status: { replicas: 0, readyReplicas: 0, reservedReplicas: 0, allocatedReplicas: 0, shutdownReplicas: 0, ...status },
  };
}

/** A set whose every server is Ready. */
function settled(name: string, replicas: number): SetView {
  return set(name, replicas, { replicas, readyReplicas: replicas });
}

const STRATEGY = { type: 'RollingUpdate' as const, rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };

function fleet(replicas: number, readyReplicas: number): FleetView {
  return { replicas, readyReplicas, strategy: STRATEGY };
}

describe('resolveIntOrPercent (Kubernetes rounding)', () => {
  it('rounds percentages up or down and passes integers through', () => {
    expect(resolveIntOrPercent('25%', 10, true)).toBe(3);
    expect(resolveIntOrPercent('25%', 10, false)).toBe(2);
    expect(resolveIntOrPercent('25%', 11, false)).toBe(2);
    expect(resolveIntOrPercent('50%', 10, true)).toBe(5);
    expect(resolveIntOrPercent(4, 10, true)).toBe(4);
    expect(resolveIntOrPercent('4', 10, true)).toBe(4);
    expect(() => resolveIntOrPercent('lots', 10, true)).toThrow();
  });
});

describe('rolling update, W5 (10 replicas, 25%/25%, no allocations)', () => {
  it('sync 1: new set B gets 3 (surge), A goes 10 → 8', () => {
    const result = applyDeploymentStrategy(fleet(10, 10), set('B', 0), [settled('A', 10)]);
    expect(result).toEqual({ activeReplicas: 3, restScales: [{ name: 'A', from: 10, to: 8 }] });
  });

  it('sync 2: B not Ready yet → B keeps 3, A is left alone', () => {
    const result = applyDeploymentStrategy(fleet(10, 10), set('B', 3), [set('A', 8, { replicas: 10, readyReplicas: 10 })]);
    expect(result).toEqual({ activeReplicas: 3, restScales: [] });
  });

  it('syncs 3–6: B 5, 7, 9, 10 while A goes 6, 4, 2, 0', () => {
    const steps: Array<[number, number, number, number]> = [
      // [A before, B before, B after, A after]
      [8, 3, 5, 6],
      [6, 5, 7, 4],
      [4, 7, 9, 2],
      [2, 9, 10, 0],
    ];
    for (const [a, b, bAfter, aAfter] of steps) {
      const result = applyDeploymentStrategy(fleet(10, a + b), settled('B', b), [settled('A', a)]);
      expect(result).toEqual({ activeReplicas: bAfter, restScales: [{ name: 'A', from: a, to: aAfter }] });
    }
  });

  it('sync 7: A at 0 → B stays at 10 (and the controller deletes A)', () => {
    const result = applyDeploymentStrategy(fleet(10, 10), settled('B', 10), [settled('A', 0)]);
    expect(result).toEqual({ activeReplicas: 10, restScales: [] });
  });

  it('runs the whole table as a loop and converges', () => {
    let a = settled('A', 10);
    let b = set('B', 0);
    const trace: string[] = [];
    for (let sync = 0; sync < 10; sync++) {
      const result = applyDeploymentStrategy(fleet(10, a.status.readyReplicas + b.status.readyReplicas), b, [a]);
      const aNext = result.restScales.find((s) => s.name === 'A')?.to ?? a.replicas;
      trace.push(`B=${result.activeReplicas} A=${aNext}`);
      // Both sets settle before the next sync.
      a = settled('A', aNext);
      b = settled('B', result.activeReplicas);
    }
    expect(trace.slice(0, 6)).toEqual(['B=3 A=8', 'B=5 A=6', 'B=7 A=4', 'B=9 A=2', 'B=10 A=0', 'B=10 A=0']);
  });
});

describe('rolling update details', () => {
  it('subtracts Allocated on old sets from the active target and lets go of a set holding only Allocated', () => {
    const a = set('A', 3, { replicas: 3, allocatedReplicas: 3 });
    expect(rollingUpdateActive(fleet(10, 7), settled('B', 7), [a])).toBe(7);
    expect(rollingUpdateRest(fleet(10, 7), settled('B', 7), [a])).toEqual([{ name: 'A', from: 3, to: 0 }]);
    // Legacy (RollingUpdateFix off) has no such rule; its cleanup counts only Ready as healthy,
    // so it trims the set by maxScaledDown = (3 + 7) - 8 - 0 = 2.
    expect(rollingUpdateRest(fleet(10, 7), settled('B', 7), [a], { rollingUpdateFix: false })).toEqual([{ name: 'A', from: 3, to: 1 }]);
  });

  it('first shrinks old sets by their servers that are not serving', () => {
    const a = set('A', 10, { replicas: 10, readyReplicas: 6 });
    // ready 6 → u = floor(1.5) = 1, minAvailable 5, newUnavailable 0, maxScaledDown 1.
    expect(rollingUpdateRest(fleet(10, 6), set('B', 0), [a])).toEqual([{ name: 'A', from: 10, to: 9 }]);
  });

  it('legacy measures maxUnavailable against spec.replicas', () => {
    // fix off: u = floor(2.5) = 2 → minAvailable 8; maxScaledDown = (10+0) - 8 - 0 = 2.
    expect(rollingUpdateRest(fleet(10, 10), set('B', 0), [settled('A', 10)], { rollingUpdateFix: false })).toEqual([
      { name: 'A', from: 10, to: 8 },
    ]);
    // With only 4 Ready (fix off): the cleanup trims 2 of the 6 not serving, then readyAll 4 <= 8 stops.
    const a = set('A', 10, { replicas: 10, readyReplicas: 4 });
    expect(rollingUpdateRest(fleet(10, 4), set('B', 0), [a], { rollingUpdateFix: false })).toEqual([{ name: 'A', from: 10, to: 8 }]);
    // With RollingUpdateFix: u = max(1, floor(4 · 25%)) = 1, minAvailable 3, maxScaledDown 1 → cleanup of 1, then
    // A (9 ≠ status 10) is still shrinking.
    expect(rollingUpdateRest(fleet(10, 4), set('B', 0), [a])).toEqual([{ name: 'A', from: 10, to: 9 }]);
  });

  it('skips old sets still shutting servers down', () => {
    const a = set('A', 8, { replicas: 8, readyReplicas: 8, shutdownReplicas: 2 });
    expect(rollingUpdateRest(fleet(10, 11), settled('B', 3), [a])).toEqual([]);
  });

  it('keeps the total under replicas + surge', () => {
    // surge 3, maxTotal 13; rest still holds 12 → the active set may only reach 1.
    expect(rollingUpdateActive(fleet(10, 12), settled('B', 0), [set('A', 10, { replicas: 12, readyReplicas: 12 })])).toBe(1);
  });
});

describe('Recreate and the other branches of applyDeploymentStrategy', () => {
  const recreate = (replicas: number): FleetView => ({ replicas, readyReplicas: 0, strategy: { type: 'Recreate' } });

  it('uses the fleet size when there are no old sets', () => {
    expect(applyDeploymentStrategy(fleet(7, 0), settled('B', 3), [])).toEqual({ activeReplicas: 7, restScales: [] });
  });

  it('Recreate scales every old set to 0 and subtracts only their Allocated', () => {
    const a = set('A', 5, { replicas: 5, readyReplicas: 2, allocatedReplicas: 2, reservedReplicas: 1 });
    const c = set('C', 0);
    expect(applyDeploymentStrategy(recreate(10), set('B', 0), [a, c])).toEqual({
      activeReplicas: 8,
      restScales: [{ name: 'A', from: 5, to: 0 }],
    });
  });

  it('with every old set at 0, subtracts their Allocated and Reserved', () => {
    const a = set('A', 0, { replicas: 3, allocatedReplicas: 2, reservedReplicas: 1 });
    expect(applyDeploymentStrategy(recreate(10), set('B', 4), [a])).toEqual({ activeReplicas: 7, restScales: [] });
    expect(applyDeploymentStrategy(fleet(10, 0), set('B', 4), [a])).toEqual({ activeReplicas: 7, restScales: [] });
  });
});
