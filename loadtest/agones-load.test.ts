import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agonesLoadSettings } from './agones-load.js';

// An Agones tree as far as the command looks: the tools' folders.
const src = mkdtempSync(join(tmpdir(), 'fleetsim-agones-src-'));
for (const tool of ['runscenario', 'allocationload']) mkdirSync(join(src, 'test', 'load', 'allocation', tool), { recursive: true });
afterAll(() => rmSync(src, { recursive: true, force: true }));

describe('fleetsim bench agones-load settings', () => {
  it("gives runscenario fleetsim's copy of the fixed scenario, scaled to --duration, without comments", () => {
    const settings = agonesLoadSettings(['--agones-src', src, '--duration', '35s']);
    if (settings === 'help') throw new Error('help');
    expect(settings.tool).toBe('runscenario');
    expect(settings.scenarioFile).toMatch(/scenarios\/agones\/fixed\.txt$/);
    expect(settings.scaledScenario).toBe(Array(7).fill('5s,10,500').join('\n'));
  });

  it('refuses what does not fit, naming the flag', () => {
    expect(() => agonesLoadSettings(['--agones-src', src, '--tool', 'k6'])).toThrow(/--tool must be runscenario or allocationload/);
    expect(() => agonesLoadSettings(['--agones-src', join(src, 'nope')])).toThrow(/--agones-src/);
    expect(() => agonesLoadSettings(['--agones-src', src, '--tool', 'allocationload', '--duration', '10s'])).toThrow(/--duration is for --tool runscenario/);
    expect(() => agonesLoadSettings(['--agones-src', src, '--clients', '0'])).toThrow(/--clients must be a whole number > 0/);
    expect(() => agonesLoadSettings(['--agones-src', src, '--duration', '10s', '--time-scale', '2'])).toThrow(/not both/);
  });
});
