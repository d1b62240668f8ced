import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { EventLog } from '../log/event-log.js';
import { ScenarioError } from './fields.js';
import { simulate } from './runner.js';
import { loadScenario, parseScenario, readScenario } from './scenario.js';
import { applyVariation, parseVary } from './vary.js';

/**
 * A scenario's `changes` (what people do to the cluster during the run, at their times) and
 * `podsPerNode`: read with errors that name the field, varied with the objects they apply, and
 * made at their instants in a run.
 */

const dir = tempDir('fleetsim-changes-');

const FLEET = `{ apiVersion: agones.dev/v1, kind: Fleet, metadata: { name: game }, spec: { replicas: 2, template: { spec: { ports: [{ name: default, containerPort: 7654 }], template: { spec: { containers: [{ name: game, image: game:1 }] } } } } } }`;
const BUFFER = (size: number) =>
  `{ apiVersion: autoscaling.agones.dev/v1, kind: FleetAutoscaler, metadata: { name: buffer }, spec: { fleetName: game, policy: { type: Buffer, buffer: { bufferSize: ${size}, maxReplicas: 50 } }, sync: { type: FixedInterval, fixedInterval: { seconds: 5 } } } }`;

function scenario(changes: string, extra = ''): string {
  const file = join(dir, 'scenario.yaml');
  writeFileSync(
    file,
    `apiVersion: fleetsim.dev/v1alpha1
kind: Scenario
metadata: { name: changes }
spec:
  duration: 10m
  nodes: 3
  podsPerNode: 4${extra}
  resources: [${FLEET}]
  demand:
    arrivals: { type: constant, rate: 0 }
    allocation: { spec: { selectors: [{ matchLabels: { agones.dev/fleet: game } }] } }
  sessions: { length: { distribution: fixed, value: 1m } }
  changes:
${changes}
`,
  );
  return file;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof ScenarioError) return error.message;
    throw error;
  }
  throw new Error('no error');
}

describe('scenario changes', () => {
  it('reads them in the order of their times', () => {
    const s = loadScenario(scenario(`    - { at: 5m, delete: { kind: Node, name: node-1 } }\n    - { at: 2m, apply: ${BUFFER(2)} }\n    - { at: 6m, addNodes: 2 }`));
    expect(s.podsPerNode).toBe(4);
    expect(s.changes.map((c) => `${c.atMs / 60_000} ${c.type}`)).toEqual(['2 apply', '5 delete', '6 addNodes']);
    expect(s.changes[1]).toMatchObject({ kind: 'Node', namespace: '', name: 'node-1' });
  });

  it('names the change at fault', () => {
    const at = (changes: string) => errorOf(() => loadScenario(scenario(changes)));
    expect(at('    - { at: 12m, addNodes: 1 }')).toMatch(/scenario\.yaml:\d+: spec\.changes\[0\]\.at: is at or after the end of the run$/);
    expect(at('    - { at: 1m }')).toMatch(/spec\.changes\[0\]: needs one of apply, delete, addNodes$/);
    expect(at('    - { at: 1m, addNodes: 1, delete: { kind: Node, name: x } }')).toMatch(/spec\.changes\[0\]: needs one of apply, delete, addNodes$/);
    expect(at('    - { at: 1m, delete: { kind: Event, name: x } }')).toMatch(/spec\.changes\[0\]\.delete\.kind: Event is not a kind that can be deleted$/);
    expect(at('    - { at: 1m, apply: { kind: Gizmo } }')).toMatch(/spec\.changes\[0\]\.apply\.kind: must be a kind the cluster serves$/);
  });

  it('--vary sets the field in the object a change applies too', () => {
    const source = readScenario(scenario(`    - { at: 2m, apply: ${BUFFER(2)} }`));
    applyVariation(source, parseVary('autoscaler.buffer.bufferSize=9'), 9);
    expect(parseScenario(source).changes[0]).toMatchObject({ object: { spec: { policy: { buffer: { bufferSize: 9 } } } } });
    const none = readScenario(scenario('    - { at: 2m, addNodes: 1 }'));
    expect(() => applyVariation(none, parseVary('autoscaler.buffer.bufferSize=9'), 9)).toThrow('--vary autoscaler.buffer.bufferSize: the scenario has no FleetAutoscaler');
  });

  it('makes each change at its instant, as a client of the API would', async () => {
    const s = loadScenario(scenario(`    - { at: 2m, apply: ${BUFFER(3)} }\n    - { at: 5m, delete: { kind: Node, name: node-1 } }\n    - { at: 6m, addNodes: 1 }`));
    const db = join(dir, 'run.db');
    const result = await simulate(s, { db });
    const log = new EventLog(db, { readonly: true });
    try {
      const byScenario = [...log.read()].filter((e) => e.cause?.type === 'request' && e.cause.client === 'the scenario');
      const at = (type: string, kind: string) => byScenario.find((e) => e.type === type && e.kind === kind);
      expect((at('ResourceCreated', 'FleetAutoscaler')!.time - s.startMs) / 60_000).toBe(2);
      expect(at('ResourceDeleted', 'Node')).toMatchObject({ name: 'node-1', time: s.startMs + 5 * 60_000 });
      expect(at('ResourceCreated', 'Node')).toMatchObject({ name: 'node-4', time: s.startMs + 6 * 60_000 });
      // The buffer of 3 from minute 2: the fleet grows from its 2 replicas to 3.
      expect(result.summary.autoscaler.decisions[0]).toMatchObject({ fleet: 'game', from: 2, to: 3 });
      expect(result.summary.nodes).toMatchObject({ peak: 3, min: 2 });
    } finally {
      log.close();
    }
  });
});
