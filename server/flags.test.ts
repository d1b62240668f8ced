import { describe, expect, it } from 'vitest';
import { FlagError, parseDuration } from './flags.js';

describe('parseDuration (Go durations, as Kubernetes flags take them)', () => {
  it('reads hours, minutes, seconds, milliseconds and their sums', () => {
    expect(parseDuration('1h', '--x')).toBe(3_600_000);
    expect(parseDuration('1h30m', '--x')).toBe(5_400_000);
    expect(parseDuration('90s', '--x')).toBe(90_000);
    expect(parseDuration('1.5m', '--x')).toBe(90_000);
    expect(parseDuration('250ms', '--x')).toBe(250);
    expect(parseDuration('0s', '--x')).toBe(0);
  });

  it('refuses anything else, naming the flag', () => {
    for (const text of ['', '1', 'h', '1d', '1h ', 'an hour', '-1h']) {
      expect(() => parseDuration(text, '--event-ttl'), text).toThrow(FlagError);
      expect(() => parseDuration(text, '--event-ttl'), text).toThrow(`--event-ttl: "${text}" is not a duration`);
    }
  });
});
