import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FlagError } from '../server/flags.js';
import { benchSettings } from './bench-command.js';
import { REPORTS_OUT, SCENARIOS_DIR } from './paths.js';

function settingsOf(...argv: string[]) {
  const parsed = benchSettings(argv);
  if (parsed === 'help') throw new Error('help');
  return parsed;
}

describe('fleetsim bench flags', () => {
  it("fills in the scenario's defaults and a timestamped run folder under reports/out", () => {
    const { settings, out } = settingsOf('allocation-throughput');
    expect(settings).toMatchObject({ scenario: 'allocation-throughput', duration: '30s', durationSeconds: 30, rate: 200, vus: 100, fleetSize: 1000, session: 10, p99Ms: 50, baseline: false, scrapeSeconds: 5 });
    expect(out.startsWith(REPORTS_OUT)).toBe(true);
    expect(out).toMatch(/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-allocation-throughput$/);
  });

  it('takes the flags given', () => {
    const { settings, out } = settingsOf('watch-fanout', '--duration', '3s', '--rate', '5', '--vus', '40', '--fleet-size', '10', '--baseline', '--out', '/tmp/x');
    expect(settings).toMatchObject({ duration: '3s', durationSeconds: 3, rate: 5, vus: 40, fleetSize: 10, baseline: true });
    expect(out).toBe('/tmp/x');
    expect(settingsOf('allocation-throughput').settings.allocatorModel).toBe('exact');
    expect(settingsOf('allocation-throughput', '--scrape-metrics', '0').settings.scrapeSeconds).toBe(0);
    expect(settingsOf('agones-scenario', '--allocator-model', 'agones-batch').settings.allocatorModel).toBe('agones-batch');
  });

  it('scales an Agones scenario file to --duration', () => {
    const { settings } = settingsOf('agones-scenario', '--duration', '7s');
    expect(settings.scenarioFile).toBe(join(SCENARIOS_DIR, 'agones', 'fixed.txt'));
    expect(settings.durationSeconds).toBeCloseTo(7);
    expect(settings.timeScale).toBeCloseTo(7 / 4200);
    expect(settings.rate).toBe(20);
    const scaled = settingsOf('agones-scenario', '--time-scale', '0.01', '--scenario-file', join(SCENARIOS_DIR, 'agones', 'variable.txt'));
    expect(scaled.settings.durationSeconds).toBeCloseTo(21);
  });

  it('refuses what makes no sense, saying why', () => {
    expect(() => benchSettings([])).toThrow(FlagError);
    expect(() => benchSettings(['no-such'])).toThrow(/no scenario "no-such"/);
    expect(() => benchSettings(['allocation-throughput', '--rate', '-1'])).toThrow(/--rate must be a number > 0/);
    expect(() => benchSettings(['allocation-throughput', '--vus', '2.5'])).toThrow(/--vus must be a whole number/);
    expect(() => benchSettings(['allocation-throughput', '--duration', 'soon'])).toThrow(/--duration/);
    expect(() => benchSettings(['allocation-throughput', '--time-scale', '2'])).toThrow(/agones-scenario/);
    expect(() => benchSettings(['agones-scenario', '--duration', '3s', '--time-scale', '2'])).toThrow(/not both/);
    expect(() => benchSettings(['agones-scenario', '--scenario-file', '/nonexistent'])).toThrow(/--scenario-file/);
    expect(() => benchSettings(['allocation-throughput', '--allocator-model', 'fast'])).toThrow('--allocator-model must be exact or agones-batch, not "fast"');
    expect(benchSettings(['--help'])).toBe('help');
  });
});
