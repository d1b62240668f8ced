import { describe, expect, it } from 'vitest';
import { durationMs } from './profiles.js';

describe('durationMs (profiles, node pools and scenarios)', () => {
  it('reads Go durations as flags do, and numbers of seconds', () => {
    expect(durationMs('1h30m', 'f')).toBe(5_400_000);
    expect(durationMs('2.5s', 'f')).toBe(2500);
    expect(durationMs('500ms', 'f')).toBe(500);
    expect(durationMs('20m', 'f')).toBe(1_200_000);
    expect(durationMs('3', 'f')).toBe(3000);
    expect(durationMs(1.5, 'f')).toBe(1500);
    expect(durationMs('0', 'f')).toBe(0);
  });

  it('refuses what is not a duration, or a negative one, naming the field', () => {
    for (const bad of ['soon', '', '-1s', '1x', 'h', -2, true, null]) {
      expect(() => durationMs(bad, 'spec.delay'), String(bad)).toThrow(/^spec\.delay: ".*" is not a duration/);
    }
  });
});
