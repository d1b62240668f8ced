import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SimulationSummary } from '../../reports/simulation-data.js';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { WrittenRecording } from '../../test/helpers/written-recording.js';
import type { RecordingHistory } from '../history/recording.js';
import { ScenarioError } from './fields.js';
import { recordingScenario, reproductionChecks } from './from-recording.js';
import { parseScenario } from './scenario.js';
import { applyVariation, parseVary } from './vary.js';

/** A recording made a scenario, and the check of a run as recorded against it. */

const T0 = Date.UTC(2026, 0, 1);
const dir = tempDir('fleetsim-from-recording-');

const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { allocatable: { pods: '8' } } });
const fleet = {
  apiVersion: 'agones.dev/v1',
  kind: 'Fleet',
  metadata: { name: 'game', namespace: 'default', uid: 'u1', resourceVersion: '4' },
  spec: {
    replicas: 2,
    template: {
      metadata: { annotations: { 'fleetsim.dev/process-profile': 'slow-start', team: 'blue' } },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    },
  },
  status: { replicas: 2, readyReplicas: 2, allocatedReplicas: 0 },
};
const autoscaler = (bufferSize: number) => ({
  apiVersion: 'autoscaling.agones.dev/v1',
  kind: 'FleetAutoscaler',
  metadata: { name: 'buffer', namespace: 'default' },
  spec: { fleetName: 'game', policy: { type: 'Buffer', buffer: { bufferSize, maxReplicas: 20 } } },
});
const gs = (name: string, state: string) => ({
  apiVersion: 'agones.dev/v1',
  kind: 'GameServer',
  metadata: { name, namespace: 'default', labels: { 'agones.dev/fleet': 'game' } },
  spec: { ports: [] },
  status: { state },
});

/** A recording of two nodes, the fleet (from the start, `later` after it began, or never), an allocation, an autoscaler, a node lost. */
function recording(name: string, withFleet: 'start' | 'later' | 'never' = 'start'): string {
  const path = join(dir, name);
  const r = new WrittenRecording(path, T0);
  r.see(0, 'Node', 'n10', node('n10'));
  r.see(0, 'Node', 'n2', node('n2'));
  if (withFleet === 'start') r.see(0, 'Fleet', 'game', fleet);
  if (withFleet === 'later') r.see(0.5, 'Fleet', 'game', fleet);
  r.see(1, 'GameServer', 'g1', gs('g1', 'Scheduled'));
  r.see(1.5, 'GameServer', 'g1', gs('g1', 'Ready'));
  r.see(2, 'GameServer', 'g1', gs('g1', 'Allocated'));
  r.see(3, 'FleetAutoscaler', 'buffer', autoscaler(2));
  r.see(5, 'Node', 'n2', undefined);
  r.see(6, 'FleetAutoscaler', 'buffer', autoscaler(5));
  r.close(9.5);
  return path;
}

describe('recordingScenario', () => {
  const db = recording('recording.db');
  const made = recordingScenario(db, { nodeHourPrice: 0.5 });

  it('makes a scenario of the recording: its span, nodes, fleet, demand, startup and changes', () => {
    const spec = made.read().raw.spec as Record<string, unknown>;
    expect(spec).toMatchObject({
      duration: 571, // 9.5 min, and a second past its last instant
      start: '2026-01-01T00:00:00.000Z',
      nodes: 2,
      podsPerNode: 8,
      demand: { arrivals: { type: 'recording', file: db } },
      prices: { nodeHour: 0.5 },
    });
    // The fleet as a client would apply it: no uid or status; a stand-in's own annotations out, the measured startup in.
    const resources = spec.resources as Array<Record<string, unknown>>;
    expect(resources).toHaveLength(1);
    expect(resources[0]!.metadata).toEqual({ name: 'game', namespace: 'default', labels: {}, annotations: {} });
    expect(resources[0]).not.toHaveProperty('status');
    expect((resources[0]!.spec as { template: { metadata: unknown } }).template.metadata).toEqual({ annotations: { team: 'blue', 'fleetsim.dev/process-profile': 'recorded-startup' } });
    expect(spec.processes).toMatchObject([{ kind: 'ProcessProfile', metadata: { name: 'recorded-startup' }, spec: { stages: [{ when: 'Scheduled', delay: { min: 30, max: 30 } }] } }]);
    // n2 sorts before n10: it is node-1, and its loss the loss of node-1.
    expect(spec.changes).toMatchObject([
      { at: 180, apply: { kind: 'FleetAutoscaler', spec: { policy: { buffer: { bufferSize: 2 } } } } },
      { at: 300, delete: { kind: 'Node', name: 'node-1' } },
      { at: 360, apply: { kind: 'FleetAutoscaler', spec: { policy: { buffer: { bufferSize: 5 } } } } },
    ]);
  });

  it('reads as a scenario; --vary sets the buffer in every recorded version of the autoscaler', () => {
    const scenario = parseScenario(made.read());
    expect(scenario.demand.arrivals.trace).toEqual({ fleets: ['default/game'], holdMs: [undefined], ends: ['shutdown'] });
    expect(scenario.demand.allocation).toBeUndefined();
    expect(scenario.sessions.length.text).toBe('as recorded: 0 sessions ended, median 0 s, 1 still held at its end');
    const varied = made.read();
    applyVariation(varied, parseVary('autoscaler.buffer.bufferSize=9'), 9);
    const sizes = parseScenario(varied).changes.flatMap((c) => (c.type === 'apply' ? [(c.object.spec as { policy: { buffer: { bufferSize: number } } }).policy.buffer.bufferSize] : []));
    expect(sizes).toEqual([9, 9]);
  });

  it('takes a fleet created after the recording began as a change, at its time', () => {
    const later = parseScenario(recordingScenario(recording('later.db', 'later'), { nodeHourPrice: 0 }).read());
    expect(later.resources).toEqual([]);
    expect(later.changes[0]).toMatchObject({ atMs: 30_000, type: 'apply', object: { kind: 'Fleet', metadata: { name: 'game' } } });
  });

  it('refuses a recording without a fleet, and a file that is no recording', () => {
    expect(() => recordingScenario(recording('no-fleet.db', 'never'), { nodeHourPrice: 0 })).toThrow(new ScenarioError(`--from-recording ${join(dir, 'no-fleet.db')}: the recording holds no Fleet to allocate from`));
    expect(() => recordingScenario(join(dir, 'none.db'), { nodeHourPrice: 0 })).toThrow(/--from-recording .*none\.db: no event log at/);
  });
});

describe('reproductionChecks', () => {
  const history = { figures: { allocations: 98, initialAllocations: 2, peakReplicas: 40 } } as RecordingHistory;
  const run = (allocated: number, peak: number) => ({ allocations: { allocated }, gameServers: { peak } }) as SimulationSummary;

  it('passes within the tolerance (2 % or 1 of allocations, 10 % or 2 of peak replicas), and fails beyond it', () => {
    expect(reproductionChecks(history, run(98, 44))).toEqual([
      { figure: 'allocations served', recorded: 100, simulated: 98, tolerance: 2, pass: true },
      { figure: 'peak replicas', recorded: 40, simulated: 44, tolerance: 4, pass: true },
    ]);
    expect(reproductionChecks(history, run(97, 35)).map((c) => c.pass)).toEqual([false, false]);
    const small = { figures: { allocations: 3, initialAllocations: 0, peakReplicas: 5 } } as RecordingHistory;
    expect(reproductionChecks(small, run(2, 7)).map((c) => [c.tolerance, c.pass])).toEqual([
      [1, true],
      [2, true],
    ]);
  });
});
