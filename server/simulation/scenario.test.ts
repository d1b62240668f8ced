import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../clock.js';
import { parseDemand } from './demand.js';
import { parseDistribution } from './distributions.js';
import { ScenarioError } from './fields.js';
import { loadScenario, parseScenario, readScenario } from './scenario.js';
import { applyVariation, parseVary } from './vary.js';
import { checkScenario, simulate } from './runner.js';
import { tempDir } from '../../test/helpers/temp-dir.js';

const dir = tempDir('fleetsim-scenario-');

const FLEET = `apiVersion: agones.dev/v1
kind: Fleet
metadata: { name: game }
spec:
  replicas: 2
  template:
    spec:
      ports: [{ name: default, containerPort: 7654 }]
      template: { spec: { containers: [{ name: game, image: game:1 }] } }
---
apiVersion: autoscaling.agones.dev/v1
kind: FleetAutoscaler
metadata: { name: game-buffer }
spec:
  fleetName: game
  policy: { type: Buffer, buffer: { bufferSize: 5, maxReplicas: 100 } }
`;
writeFileSync(join(dir, 'fleet.yaml'), FLEET);

function scenarioText(overrides: { arrivals?: string; extra?: string; sessions?: string } = {}): string {
  return `apiVersion: fleetsim.dev/v1alpha1
kind: Scenario
metadata: { name: test }
spec:
  duration: 2h
  seed: 5
  resources: [fleet.yaml]${overrides.extra ?? ''}
  demand:
    arrivals: ${overrides.arrivals ?? '{ type: constant, rate: 1 }'}
    allocation:
      spec:
        selectors: [{ matchLabels: { agones.dev/fleet: game } }]
  sessions:
    length: ${overrides.sessions ?? '{ distribution: fixed, value: 10m }'}
`;
}

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    return (error as Error).message;
  }
  throw new Error('expected an error');
}

describe('scenario files', () => {
  it('reads a scenario with its resource file (two documents) and the defaults', () => {
    const scenario = loadScenario(write('ok.yaml', scenarioText()));
    expect(scenario.durationMs).toBe(7_200_000);
    expect(scenario.seed).toBe(5);
    expect(scenario.startMs).toBe(Date.UTC(2026, 0, 1));
    expect(scenario.resources.map((r) => (r.object as { kind: string }).kind)).toEqual(['Fleet', 'FleetAutoscaler']);
    expect(scenario.resources[1]!.source).toMatch(/fleet\.yaml document 2$/);
    expect(scenario.demand.retryIntervalMs).toBe(1000);
    expect(scenario.sessions.end).toEqual({ type: 'shutdown' });
  });

  it('names the file, the line and the field of a mistake', () => {
    const file = write('typo.yaml', scenarioText({ arrivals: '{ type: constant, rat: 1 }' }));
    expect(errorOf(() => loadScenario(file))).toBe(`${file}:9: spec.demand.arrivals.rat: unknown field (known: type, rate)`);
    const unknownTop = write('unknown.yaml', scenarioText({ extra: '\n  nodez: 3' }));
    expect(errorOf(() => loadScenario(unknownTop))).toMatch(new RegExp(`^${unknownTop}:8: spec.nodez: unknown field`));
    const badDuration = write('duration.yaml', scenarioText({ sessions: '{ distribution: exponential, mean: soon }' }));
    expect(errorOf(() => loadScenario(badDuration))).toBe(`${badDuration}:14: spec.sessions.length.mean: "soon" is not a duration (use 500ms, 2s, 20m, 24h or a number of seconds)`);
  });

  it('refuses impossible curves', () => {
    const cases: Array<[string, string]> = [
      ['{ type: diurnal, min: 5, peak: 2 }', 'spec.demand.arrivals.peak: must not be below min (5)'],
      ['{ type: constant, rate: -1 }', 'spec.demand.arrivals.rate: must be at least 0, not -1'],
      ['{ type: steps, steps: [{ at: 1h, rate: 2 }, { at: 30m, rate: 1 }] }', 'spec.demand.arrivals.steps[1].at: steps must be in increasing order of time'],
      ['{ type: steps, steps: [{ at: 3h, rate: 2 }] }', 'spec.demand.arrivals.steps[0].at: is at or after the end of the run'],
      ['{ type: spikes, base: 1, spikes: [] }', 'spec.demand.arrivals.spikes: needs at least one spike'],
      ['{ type: sine }', 'spec.demand.arrivals.type: "sine" is not one of constant, steps, diurnal, spikes, csv, recording'],
    ];
    for (const [arrivals, message] of cases) {
      const file = write('curve.yaml', scenarioText({ arrivals }));
      expect(errorOf(() => loadScenario(file))).toBe(`${file}:9: ${message}`);
    }
  });

  it('reads a CSV of timestamps and names a bad row by its line', () => {
    write('arrivals.csv', 'timestamp,user\n2026-01-01T00:00:01Z,a\n2026-01-01T00:10:00Z,b\n30,c\n2026-01-02T00:00:00Z,d\n');
    const scenario = loadScenario(write('csv.yaml', scenarioText({ arrivals: '{ type: csv, file: arrivals.csv, column: timestamp }' })));
    expect([...{ [Symbol.iterator]: () => scenario.demand.arrivals.arrivals(new SeededRandom(1), scenario.durationMs) }]).toEqual([1000, 30_000, 600_000]);
    expect(scenario.demand.arrivals.text).toContain('1 rows outside the run left out');
    write('bad.csv', 'timestamp\n2026-01-01T00:00:01Z\nyesterday\n');
    const file = write('badcsv.yaml', scenarioText({ arrivals: '{ type: csv, file: bad.csv }' }));
    expect(errorOf(() => loadScenario(file))).toBe(`${join(dir, 'bad.csv')}:3: "yesterday" is not a timestamp (RFC 3339, or seconds since the start)`);
    const missing = write('missing.yaml', scenarioText({ arrivals: '{ type: csv, file: nowhere.csv }' }));
    expect(errorOf(() => loadScenario(missing))).toMatch(/missing\.yaml:9: spec\.demand\.arrivals\.file: cannot read .*nowhere\.csv: ENOENT/);
  });

  it('a counter session end needs an allocation that increments the counter', () => {
    const file = write('rooms.yaml', scenarioText({ sessions: '{ distribution: fixed, value: 10m }\n    end: { counter: rooms }' }));
    expect(errorOf(() => loadScenario(file))).toMatch(/rooms\.yaml:1[12]: spec\.demand\.allocation\.spec\.counters\.rooms: sessions\.end counts rooms on counter "rooms": the allocation must increment it/);
  });

  it('--vary sets a field of the autoscaler, of the fleet, or of the scenario', () => {
    const file = write('vary.yaml', scenarioText());
    const source = readScenario(file);
    applyVariation(source, parseVary('autoscaler.buffer.bufferSize=5,10%'), '10%');
    applyVariation(source, parseVary('fleet.replicas=7'), 7);
    applyVariation(source, parseVary('demand.arrivals.rate=3'), 3);
    const scenario = parseScenario(source);
    const [fleet, autoscaler] = scenario.resources.map((r) => r.object as { spec: Record<string, unknown> });
    expect((autoscaler!.spec.policy as { buffer: { bufferSize: unknown } }).buffer.bufferSize).toBe('10%');
    expect(fleet!.spec.replicas).toBe(7);
    expect(parseVary('autoscaler.buffer.bufferSize=5,10,20,50%').values).toEqual([5, 10, 20, '50%']);
    // A value the scenario refuses names the --vary that set it.
    const bad = readScenario(file);
    applyVariation(bad, parseVary('demand.arrivals.rate=-2'), -2);
    expect(errorOf(() => parseScenario(bad))).toBe(`${file} (set by --vary demand.arrivals.rate=-2): spec.demand.arrivals.rate: must be at least 0, not -2`);
    expect(errorOf(() => applyVariation(readScenario(file), parseVary('fleet/other.replicas=1'), 1))).toBe('--vary fleet/other.replicas: the scenario has no Fleet named other');
    expect(errorOf(() => parseVary('bufferSize'))).toMatch(/is not PATH=VALUE/);
  });
});

describe('demand and sessions', () => {
  const context = { startMs: 0, durationMs: 24 * 3_600_000, resolve: (p: string) => p };
  const count = (spec: unknown, from = 0, to = context.durationMs) => {
    let n = 0;
    const arrivals = parseDemand(spec, ['arrivals'], context).arrivals(new SeededRandom(9), context.durationMs);
    for (let next = arrivals.next(); !next.done; next = arrivals.next()) if (next.value >= from && next.value < to) n++;
    return n;
  };

  it('draws as many arrivals as the curve says, where it says', () => {
    expect(count({ type: 'constant', rate: 2 }) / 86_400).toBeCloseTo(2, 1);
    // The diurnal curve's mean is halfway between min and peak; the peak hour is busier than the trough's.
    expect(count({ type: 'diurnal', min: 1, peak: 3, peakAt: '20h' }) / 86_400).toBeCloseTo(2, 1);
    const peakHour = count({ type: 'diurnal', min: 1, peak: 3, peakAt: '20h' }, 19.5 * 3_600_000, 20.5 * 3_600_000);
    const troughHour = count({ type: 'diurnal', min: 1, peak: 3, peakAt: '20h' }, 7.5 * 3_600_000, 8.5 * 3_600_000);
    expect(peakHour / 3600).toBeCloseTo(3, 0);
    expect(troughHour / 3600).toBeCloseTo(1, 0);
    expect(count({ type: 'steps', steps: [{ at: 0, rate: 0 }, { at: '12h', rate: 1 }] }, 0, 12 * 3_600_000)).toBe(0);
    const spike = { type: 'spikes', base: 0, spikes: [{ at: '1h', rate: 10, hold: '10m' }] };
    expect(count(spike) / 600).toBeCloseTo(10, 0);
  });

  it('the same seed gives the same arrivals', () => {
    const draw = () => [...{ [Symbol.iterator]: () => parseDemand({ type: 'constant', rate: 1 }, [], context).arrivals(new SeededRandom(4), 60_000) }];
    expect(draw()).toEqual(draw());
  });

  it('session lengths follow their distribution', () => {
    const rng = new SeededRandom(2);
    const mean = (spec: unknown) => {
      const d = parseDistribution(spec, ['length']);
      let sum = 0;
      for (let i = 0; i < 20_000; i++) sum += d.draw(rng);
      return { drawn: sum / 20_000 / 60_000, expected: d.meanMs / 60_000 };
    };
    for (const spec of [
      { distribution: 'exponential', mean: '20m' },
      { distribution: 'uniform', min: '10m', max: '30m' },
      { distribution: 'lognormal', median: '17m', p95: '45m' },
      { values: ['10m', '30m'] },
    ]) {
      const { drawn, expected } = mean(spec);
      expect(Math.abs(drawn - expected) / expected, JSON.stringify(spec)).toBeLessThan(0.03);
    }
    expect(() => parseDistribution({ distribution: 'lognormal', median: '20m', p95: '10m' }, ['length'])).toThrow('length.p95: must be longer than the median');
  });
});

describe("a scenario's allocator", () => {
  const withAllocator = (name: string, allocator: string) =>
    write(name, scenarioText({ arrivals: '{ type: constant, rate: 0.1 }', extra: allocator && `\n  allocator: ${allocator}` }));

  it('is exact by default; agones-batch takes its replicas, batch wait and watch lag', () => {
    expect(loadScenario(withAllocator('plain.yaml', '')).allocator).toEqual({ model: 'exact' });
    const batch = loadScenario(withAllocator('batch.yaml', '{ model: agones-batch, replicas: 2, batchWait: 250ms, informerLag: 50ms }'));
    expect(batch.allocator).toEqual({ model: 'agones-batch', replicas: 2, batchWaitMs: 250, informerLagMs: 50 });
  });

  it('refuses a bad model or setting, naming the file, line and field', () => {
    const cases: Array<[string, string]> = [
      ['{ model: fast }', 'spec.allocator.model: must be exact or agones-batch, not "fast"'],
      ['{ replicas: 2 }', 'spec.allocator.replicas: goes with model: agones-batch'],
      ['{ model: agones-batch, replicas: 0 }', 'spec.allocator.replicas: must be at least 1, not 0'],
      ['{ model: agones-batch, replicas: 65 }', 'spec.allocator.replicas: must be at most 64, not 65'],
      ['{ model: agones-batch, batchWait: 0s }', 'spec.allocator.batchWait: must be longer than 0'],
      ['{ model: agones-batch, lag: 1s }', 'spec.allocator.lag: unknown field'],
    ];
    for (const [allocator, message] of cases) {
      const file = withAllocator('bad-allocator.yaml', allocator);
      expect(errorOf(() => loadScenario(file))).toContain(`${file}:8: ${message}`);
    }
  });

  it('runs the players against agones-batch: they wait for its batches, and the same scenario gives the same log', async () => {
    const exact = await simulate(loadScenario(withAllocator('exact.yaml', '')), { db: join(dir, 'exact.db') });
    const file = withAllocator('modelled.yaml', '{ model: agones-batch, replicas: 3 }');
    const first = await simulate(loadScenario(file), { db: join(dir, 'first.db') });
    const second = await simulate(loadScenario(file), { db: join(dir, 'second.db') });
    expect(readFileSync(join(dir, 'second.db')).equals(readFileSync(join(dir, 'first.db')))).toBe(true);
    expect(second.summary).toEqual(first.summary);
    expect(first.summary.allocations.allocated).toBeGreaterThan(500);
    // exact answers at once; a batch answers when its replica wakes.
    expect(exact.summary.waitSeconds!.p50).toBe(0);
    expect(first.summary.waitSeconds!.p50).toBeGreaterThan(0);
  });
});

describe('the example scenarios', () => {
  const examples = fileURLToPath(new URL('../../examples/simulate/', import.meta.url));
  const files = readdirSync(examples).filter((f) => f.endsWith('.yaml') && readFileSync(join(examples, f), 'utf8').includes('kind: Scenario'));

  it('are all here', () => {
    expect(files.sort()).toEqual(['bench-day-rooms.yaml', 'bench-day.yaml', 'diurnal.yaml', 'evening-peak.yaml', 'launch-spike.yaml', 'rooms.yaml']);
  });

  it.each(files)('%s reads and sets up (its resources and allocation accepted)', async (file) => {
    await checkScenario(loadScenario(join(examples, file)));
  });
});
