import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseAgonesScenario, parseDuration, stageRate } from './durations.js';
import { SCENARIOS_DIR } from './paths.js';

describe('parseDuration', () => {
  it('reads k6 and Go durations', () => {
    expect(parseDuration('30s')).toBe(30);
    expect(parseDuration('10m')).toBe(600);
    expect(parseDuration('1h30m')).toBe(5400);
    expect(parseDuration('500ms')).toBe(0.5);
    expect(parseDuration('2.5')).toBe(2.5);
  });

  it('refuses what is not a duration', () => {
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
    expect(() => parseDuration('')).toThrow();
    expect(() => parseDuration('10x')).toThrow();
  });

  it('formats seconds for k6', () => {
    expect(formatDuration(3)).toBe('3s');
    expect(formatDuration(0.4286)).toBe('429ms');
  });
});

describe('Agones scenario files', () => {
  it('reads duration,clients,intervalMs lines, skipping blanks and comments', () => {
    const stages = parseAgonesScenario('# warm up\n10m,10,500\n\n 30s , 2 , 1000 \n');
    expect(stages).toEqual([
      { line: 2, seconds: 600, clients: 10, intervalMs: 500 },
      { line: 4, seconds: 30, clients: 2, intervalMs: 1000 },
    ]);
    expect(stageRate(stages[0]!)).toBe(20);
  });

  it('names the line at fault', () => {
    expect(() => parseAgonesScenario('10m,10,500\n10m,ten,500')).toThrow(/line 2: clients/);
    expect(() => parseAgonesScenario('10m,10')).toThrow(/line 1: expected duration,clients,intervalMs/);
    expect(() => parseAgonesScenario('# nothing\n')).toThrow(/no stages/);
  });

  it('reads the sample files shipped in scenarios/agones/', () => {
    const fixed = parseAgonesScenario(readFileSync(join(SCENARIOS_DIR, 'agones', 'fixed.txt'), 'utf8'));
    expect(fixed).toHaveLength(7);
    expect(fixed.every((s) => s.seconds === 600 && s.clients === 10 && s.intervalMs === 500)).toBe(true);
    const variable = parseAgonesScenario(readFileSync(join(SCENARIOS_DIR, 'agones', 'variable.txt'), 'utf8'));
    expect(new Set(variable.map(stageRate)).size).toBeGreaterThan(1);
  });
});
