import { describe, expect, it } from 'vitest';
import { FlagError, type FlagSpec, parseDuration, parseFlags } from './flags.js';

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

describe('parseFlags', () => {
  it('tells which flags were given, on the command line or by their variable, from those left to their default', () => {
    const specs: FlagSpec[] = [
      { name: 'nodes', env: 'NODES', type: 'number', default: 4, help: '' },
      { name: 'max-pods', type: 'number', default: 110, help: '' },
      { name: 'pools', type: 'string', help: '' },
    ];
    const { values, given } = parseFlags(['--pools', 'p.yaml'], specs, { NODES: '3' });
    expect(values).toEqual({ nodes: 3, 'max-pods': 110, pools: 'p.yaml' });
    expect([...given].sort()).toEqual(['nodes', 'pools']);
  });
});
