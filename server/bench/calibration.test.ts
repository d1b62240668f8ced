import { describe, expect, it } from 'vitest';
import { type Calibration, type Target, durationTarget, judge, meanCalibration, rateTarget } from './calibration.js';

/** The ratio logic of targets stated against the run's calibration; nothing here is timed. */

const machine = (insertsPerSecond: number): Calibration => ({ insertsPerSecond, cpuLoopsPerSecond: 1e9 });

describe('targets relative to the calibration', () => {
  const rate: Target = { bound: 'min', value: 0.34, relativeTo: { calibration: 'inserts', figure: 'rate' } };
  const duration: Target = { bound: 'max', value: 26_400_000, relativeTo: { calibration: 'inserts', figure: 'duration' } };

  it('holds a rate to its ratio, so the same code passes on a slower machine and fails on a faster one', () => {
    expect(judge(160_000, rate, machine(440_000))).toEqual({ compared: 160_000 / 440_000, bound: 0.34 * 440_000, pass: true });
    // Issue 40's quiet week: 45,676/s while raw inserts ran ~160,000 rows/s.
    expect(judge(45_676, rate, machine(160_000))).toMatchObject({ bound: 0.34 * 160_000, pass: false });
    expect(judge(60_000, rate, machine(160_000))).toMatchObject({ compared: 0.375, pass: true });
    expect(judge(160_000, rate, machine(500_000)).pass).toBe(false);
  });

  it('holds a duration to its time multiplied by the calibration: a slower machine may take longer', () => {
    expect(judge(57, duration, machine(440_000))).toEqual({ compared: 57 * 440_000, bound: 60, pass: true });
    expect(judge(120, duration, machine(220_000))).toMatchObject({ bound: 120, pass: true });
    expect(judge(121, duration, machine(220_000)).pass).toBe(false);
  });

  it('leaves absolute targets alone, whatever the machine', () => {
    expect(judge(1979, { bound: 'max', value: 2048 }, machine(1))).toEqual({ compared: 1979, bound: 2048, pass: true });
    expect(judge(0.89, { bound: 'min', value: 0.9 }, machine(1)).pass).toBe(false);
    expect(judge(0, { bound: 'above', value: 0 }, machine(1)).pass).toBe(false);
    expect(judge(1, { bound: 'above', value: 0 }, machine(1)).pass).toBe(true);
  });

  it('refuses a calibration that measured nothing', () => {
    expect(() => judge(1, rate, machine(0))).toThrow(/inserts is 0/);
  });
});

describe('deriving a ratio from an absolute target and the reference machine', () => {
  it('divides a rate by the reference inserts, three significant digits, never stricter', () => {
    expect(rateTarget(150_000, 440_000, 'issue 17')).toEqual({
      bound: 'min',
      value: 0.34,
      relativeTo: { calibration: 'inserts', figure: 'rate' },
      basis: 'issue 17',
    });
    // 0.022727…: rounded down, so the ratio asks no more than the absolute target did.
    expect(rateTarget(10_000, 440_000, '').value).toBe(0.0227);
  });

  it('multiplies a duration by them, rounded up', () => {
    expect(durationTarget(60, 440_000, '')).toMatchObject({ bound: 'max', value: 26_400_000, relativeTo: { calibration: 'inserts', figure: 'duration' } });
    expect(durationTarget(40, 444_444, '').value).toBe(17_800_000);
  });
});

describe('meanCalibration', () => {
  it('averages the start and end of a run', () => {
    expect(meanCalibration([machine(400_000), machine(200_000)])).toEqual({ insertsPerSecond: 300_000, cpuLoopsPerSecond: 1e9 });
    expect(() => meanCalibration([])).toThrow(/no calibration/);
  });
});
