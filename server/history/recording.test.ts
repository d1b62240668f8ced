import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { WrittenRecording } from '../../test/helpers/written-recording.js';
import { readRecording } from './recording.js';

/**
 * A recording written as `fleetsim record` writes one (the same observation events, the same
 * markers), read back for a what-if run: the cluster as it began, the changes people made, the
 * demand it served, and its own figures.
 */

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);

const meta = (name: string, labels: Record<string, string> = {}) => ({ name, namespace: 'default', labels, annotations: {} });
const fleet = (replicas: number, status: { replicas: number; readyReplicas: number; allocatedReplicas: number }, image = 'game:1') => ({
  apiVersion: 'agones.dev/v1',
  kind: 'Fleet',
  metadata: meta('game'),
  spec: { replicas, template: { spec: { ports: [], template: { spec: { containers: [{ name: 'game', image }] } } } } },
  status,
});
const gs = (name: string, state: string, extra: Record<string, string> = {}) => ({
  apiVersion: 'agones.dev/v1',
  kind: 'GameServer',
  metadata: meta(name, { 'agones.dev/fleet': 'game', ...extra }),
  spec: { ports: [] },
  status: { state, nodeName: 'n1' },
});
const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { allocatable: { pods: '8' } } });
const fas = (bufferSize: number) => ({
  apiVersion: 'autoscaling.agones.dev/v1',
  kind: 'FleetAutoscaler',
  metadata: meta('buffer'),
  spec: { fleetName: 'game', policy: { type: 'Buffer', buffer: { bufferSize } } },
});

describe('readRecording', () => {
  const dir = tempDir('fleetsim-recording-');
  const path = join(dir, 'recording.db');
  const r = new WrittenRecording(path, T0);
  // The first list: two nodes, the fleet, one GameServer Allocated already and one Ready.
  r.see(0, 'Node', 'n10', node('n10'));
  r.see(0, 'Node', 'n2', node('n2'));
  r.see(0, 'Fleet', 'game', fleet(2, { replicas: 2, readyReplicas: 1, allocatedReplicas: 1 }));
  r.see(0, 'GameServer', 'a', gs('a', 'Allocated'));
  r.see(0, 'GameServer', 'b', gs('b', 'Ready'));
  // Minute 1: b allocated; minute 2: the fleet scaled by hand to 4; minute 3: an autoscaler; minute 4: it scales the fleet to 6.
  r.see(1, 'GameServer', 'b', gs('b', 'Allocated', { mode: 'ctf' }));
  r.see(1, 'Fleet', 'game', fleet(2, { replicas: 2, readyReplicas: 0, allocatedReplicas: 2 }));
  r.see(2, 'Fleet', 'game', fleet(4, { replicas: 4, readyReplicas: 2, allocatedReplicas: 2 }));
  r.see(3, 'FleetAutoscaler', 'buffer', fas(2));
  r.see(4, 'Fleet', 'game', fleet(6, { replicas: 6, readyReplicas: 4, allocatedReplicas: 2 }));
  // Minute 5: a's session ends (Shutdown, then deleted); b goes back to Ready; the autoscaler is edited; n2 is lost.
  r.see(5, 'GameServer', 'a', gs('a', 'Shutdown'));
  r.see(5, 'GameServer', 'a', undefined);
  r.see(5, 'GameServer', 'b', gs('b', 'Ready'));
  r.see(5, 'FleetAutoscaler', 'buffer', fas(4));
  r.see(5, 'Node', 'n2', undefined);
  // Minute 6: c allocated and still so at the end; its template changed by hand under the autoscaler.
  r.see(6, 'GameServer', 'c', gs('c', 'Allocated'));
  r.see(6, 'Fleet', 'game', fleet(7, { replicas: 6, readyReplicas: 3, allocatedReplicas: 3 }, 'game:2'));
  r.close(10);
  const history = readRecording(path);

  it('spans the recording from the first lists to its end', () => {
    expect(history.info.cluster).toBe('prod');
    expect(history.startMs).toBe(T0);
    expect(history.endMs).toBe(T0 + 10 * MIN);
  });

  it('holds the cluster as it began: the fleet and the nodes', () => {
    expect(history.initial.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Fleet/game']);
    expect(history.initialNodes).toEqual([
      { name: 'n10', pods: 8 },
      { name: 'n2', pods: 8 },
    ]);
  });

  it('keeps what people changed, and leaves an autoscaler the fleet replicas it decides', () => {
    const changes = history.changes.map((c) => {
      if ('apply' in c) return `${c.atMs / MIN} apply ${c.apply.kind} replicas=${String((c.apply.spec as { replicas?: number }).replicas)}`;
      if ('delete' in c) return `${c.atMs / MIN} delete ${c.delete.kind}/${c.delete.name}`;
      if ('deleteNode' in c) return `${c.atMs / MIN} lose ${c.deleteNode}`;
      return `${c.atMs / MIN} add ${c.addNode.name}`;
    });
    expect(changes).toEqual([
      '2 apply Fleet replicas=4', // by hand: no autoscaler yet
      '3 apply FleetAutoscaler replicas=undefined',
      '5 apply FleetAutoscaler replicas=undefined',
      '5 lose n2',
      '6 apply Fleet replicas=undefined', // the template, without the autoscaler's replicas
    ]);
  });

  it('reads the demand: each allocation, its fleet, how long it held and what it did then', () => {
    expect(history.allocations).toEqual([
      { fleet: 'default/game', atMs: 0, holdMs: 5 * MIN, end: 'shutdown', initial: true },
      { fleet: 'default/game', atMs: 1 * MIN, holdMs: 4 * MIN, end: 'ready', initial: false },
      { fleet: 'default/game', atMs: 6 * MIN, holdMs: undefined, end: 'shutdown', initial: false },
    ]);
  });

  it('measures its own figures from the fleets\' status and the nodes', () => {
    const f = history.figures;
    expect(f).toMatchObject({ allocations: 2, initialAllocations: 1, peakReplicas: 6, peakNodes: 2 });
    // Replicas: 2 for 2 min, 4 for 2, 6 for 6 → 2·2 + 4·2 + 6·6 = 48 GameServer-minutes.
    expect(f.gameServerHours).toBeCloseTo(48 / 60, 6);
    // Nodes: 2 for 5 min, 1 for 5.
    expect(f.nodeHours).toBeCloseTo(15 / 60, 6);
  });
});
