import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError } from './fields.js';
import { simulate } from './runner.js';
import { loadScenario } from './scenario.js';

/**
 * A scenario's `spec.allocator`: the players meet `exact` by default, or Agones's allocator
 * (agones-batch) with its replicas, batch wait and watch lag. On the virtual clock a run with the
 * model is as reproducible as one without: the same scenario gives the same log, byte for byte.
 */

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-scenario-allocator-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function scenarioFile(name: string, allocator: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `apiVersion: fleetsim.dev/v1alpha1
kind: Scenario
metadata: { name: ${name} }
spec:
  duration: 20m
  seed: 3
  nodes: 4
  resources:
    - apiVersion: agones.dev/v1
      kind: Fleet
      metadata: { name: game }
      spec:
        replicas: 10
        template:
          spec:
            health: { disabled: true }
            ports: [{ name: default, containerPort: 7654 }]
            template: { spec: { containers: [{ name: game, image: game:1 }] } }
    - apiVersion: autoscaling.agones.dev/v1
      kind: FleetAutoscaler
      metadata: { name: game }
      spec:
        fleetName: game
        policy: { type: Buffer, buffer: { bufferSize: 20, maxReplicas: 200 } }
  demand:
    arrivals: { type: constant, rate: 0.5 }
    allocation:
      spec:
        selectors: [{ matchLabels: { agones.dev/fleet: game } }]
    retry: { interval: 1s, timeout: 1m }
  sessions:
    length: { distribution: fixed, value: 2m }${allocator}
`,
  );
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

describe('a scenario\'s allocator', () => {
  it('is exact by default; agones-batch takes its replicas, batch wait and watch lag', () => {
    expect(loadScenario(scenarioFile('plain', '')).allocator).toEqual({ model: 'exact' });
    const batch = loadScenario(scenarioFile('batch', '\n  allocator: { model: agones-batch, replicas: 2, batchWait: 250ms, informerLag: 50ms }'));
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
      const file = scenarioFile('bad', `\n  allocator: ${allocator}`);
      expect(errorOf(() => loadScenario(file))).toContain(`${file}:33: ${message}`);
    }
  });

  it('runs the players against agones-batch: they wait for the batches, and the same scenario gives the same log', async () => {
    const exact = await simulate(loadScenario(scenarioFile('exact', '')), { db: join(dir, 'exact.db') });
    const file = scenarioFile('modelled', '\n  allocator: { model: agones-batch, replicas: 3 }');
    const first = await simulate(loadScenario(file), { db: join(dir, 'first.db') });
    const second = await simulate(loadScenario(file), { db: join(dir, 'second.db') });
    expect(readFileSync(join(dir, 'second.db')).equals(readFileSync(join(dir, 'first.db')))).toBe(true);
    expect(second.summary).toEqual(first.summary);
    expect(first.summary.allocations.allocated).toBeGreaterThan(500);
    // exact answers at once; a batch answers when its replica wakes.
    expect(exact.summary.waitSeconds!.p50).toBe(0);
    expect(first.summary.waitSeconds!.p50).toBeGreaterThan(0);
  }, 60_000);
});
