import { describe, expect, it } from 'vitest';
import { FlagError } from '../flags.js';
import type { Cause } from '../log/cause.js';
import { MAX_LISTED, formatSummary, parseTail, parseTimeBound, resolveBound, summarize } from './explain-window.js';

describe("explain's window", () => {
  it('takes a time as RFC 3339, or as a duration before the log ends', () => {
    expect(parseTimeBound('2026-03-02T18:00:00Z', '--since')).toEqual({ at: Date.UTC(2026, 2, 2, 18) });
    expect(parseTimeBound('2026-03-02T20:00:00+02:00', '--since')).toEqual({ at: Date.UTC(2026, 2, 2, 18) });
    expect(resolveBound(parseTimeBound('1h30m', '--until'), Date.UTC(2026, 2, 2, 18))).toBe(Date.UTC(2026, 2, 2, 16, 30));
    for (const bad of ['yesterday', '2026-03-02', '2026-02-30T00:00:00Z', '-1h', '']) {
      expect(() => parseTimeBound(bad, '--since'), bad).toThrow(FlagError);
      expect(() => parseTimeBound(bad, '--since'), bad).toThrow(`--since: "${bad}" is neither a time`);
    }
    expect(parseTail('20', '--tail')).toBe(20);
    for (const bad of ['0', '-3', '2.5', 'ten', '']) expect(() => parseTail(bad, '--tail'), bad).toThrow(`--tail: "${bad}" is not a whole number from 1`);
  });

  it('summarizes changes by kind and by cause, most first, on a screen', () => {
    const autoscaler: Cause = {
      type: 'autoscaler',
      autoscaler: { kind: 'FleetAutoscaler', namespace: 'default', name: 'buffer' },
      fleet: 'game',
      policy: 'Buffer',
      current: 1,
      desired: 2,
      inputs: {},
      trigger: { type: 'timer', timer: 'autoscaler.sync' },
    };
    const changes: Array<{ seq: number; time: string; summary: string; cause: Cause }> = [
      { seq: 1, time: '2026-03-02T00:00:00.000Z', summary: 'created with replicas 5', cause: { type: 'startup', detail: 'applied' } },
      ...Array.from({ length: 30 }, (_, i) => ({
        seq: 10 + i,
        time: `2026-03-02T01:${String(i).padStart(2, '0')}:00.000Z`,
        summary: i % 3 === 0 ? `replicas ${40 - i} → ${30 - i}` : `replicas ${i} → ${i + 5}`,
        cause: autoscaler,
      })),
    ];
    const summary = summarize(changes);
    expect(summary).toMatchObject({ changes: 31, first: { seq: 1, summary: 'created with replicas 5' }, last: { seq: 39 } });
    expect(summary.byChange).toEqual([
      { what: 'replicas up', count: 20 },
      { what: 'replicas down', count: 10 },
      { what: 'created with replicas N', count: 1 },
    ]);
    expect(summary.byCause).toEqual([
      { what: 'FleetAutoscaler default/buffer (Buffer)', count: 30 },
      { what: 'start-up', count: 1 },
    ]);
    // A recorded object's status moves: counted by the fields that moved, whatever their values.
    const status = (seq: number, summary: string) => ({ seq, time: '2026-03-02T02:00:00.000Z', summary, cause: undefined });
    expect(
      summarize([
        status(1, 'status: currentReplicas 23 → 24'),
        status(2, 'status: currentReplicas 24 → 22, lastScaleTime "2026-03-02T01:00:00Z" → "2026-03-02T02:00:00Z"'),
        status(3, 'status: currentReplicas 22 → 25, lastScaleTime null → "2026-03-02T02:10:00Z"'),
        status(4, 'status: currentReplicas null → 3, desiredReplicas null → 3, lastScaleTime null → "2026-03-02T02:10:00Z", ableToScale null → true and 2 more'),
      ]).byChange,
    ).toEqual([
      { what: 'status: currentReplicas, lastScaleTime', count: 2 },
      { what: 'status: currentReplicas', count: 1 },
      { what: 'status: currentReplicas, desiredReplicas, lastScaleTime, ableToScale and more', count: 1 },
    ]);
    const text = formatSummary('Fleet default/game', summary);
    expect(text.split('\n')[0]).toBe('Fleet default/game: 31 changes from 2026-03-02T00:00:00.000Z to 2026-03-02T01:29:00.000Z');
    expect(text).toContain(`More than ${MAX_LISTED} changes: --tail N`);
    expect(text.split('\n').length).toBeLessThanOrEqual(MAX_LISTED);
  });
});
