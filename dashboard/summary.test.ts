import { describe, expect, it } from 'vitest';
import { type GameServerInput, summarize } from './summary.js';

const gs = (name: string, state: string, node: string, set?: string, fleet?: string): GameServerInput => ({
  metadata: { name, namespace: 'default', labels: { ...(set && { 'agones.dev/gameserverset': set }), ...(fleet && { 'agones.dev/fleet': fleet }) } },
  status: { state, nodeName: node },
});

describe('summarize: GameServers counted by fleet, set, node and state', () => {
  it('counts each GameServer once per view, with the objects own figures beside', () => {
    const summary = summarize({
      gameServers: [
        gs('f-1-a', 'Ready', 'node-1', 'f-1', 'f'),
        gs('f-1-b', 'Allocated', 'node-2', 'f-1', 'f'),
        gs('f-1-c', 'Scheduled', '', 'f-1', 'f'),
        gs('lonely', 'Ready', 'node-1'),
      ],
      fleets: [{ metadata: { name: 'f', namespace: 'default' }, spec: { replicas: 3 }, status: { replicas: 3, readyReplicas: 1, allocatedReplicas: 1, reservedReplicas: 0 } }],
      gameServerSets: [{ metadata: { name: 'f-1', namespace: 'default', labels: { 'agones.dev/fleet': 'f' } }, spec: { replicas: 3 } }],
      nodes: [2, 1].map((n) => ({ metadata: { name: `node-${n}` }, status: { allocatable: { pods: '110' } } })),
      autoscalers: [{ metadata: { name: 'buffer', namespace: 'default' }, spec: { fleetName: 'f', policy: { type: 'Buffer' } }, status: { currentReplicas: 3, desiredReplicas: 4, ableToScale: true } }],
    });
    expect(summary.gameServers).toEqual({ total: 4, states: { Ready: 2, Allocated: 1, Scheduled: 1 } });
    expect(summary.fleets).toEqual([
      { namespace: 'default', name: 'f', desired: 3, replicas: 3, ready: 1, allocated: 1, reserved: 0, total: 3, states: { Ready: 1, Allocated: 1, Scheduled: 1 } },
    ]);
    expect(summary.sets.map((s) => [s.name, s.fleet, s.total])).toEqual([['f-1', 'f', 3]]);
    expect(summary.standalone).toEqual({ total: 1, states: { Ready: 1 } });
    expect(summary.nodes).toEqual([
      { name: 'node-1', capacity: 110, total: 2, states: { Ready: 2 } },
      { name: 'node-2', capacity: 110, total: 1, states: { Allocated: 1 } },
    ]);
    expect(summary.unscheduled).toEqual({ total: 1, states: { Scheduled: 1 } });
    expect(summary.autoscalers).toEqual([
      { namespace: 'default', name: 'buffer', fleet: 'f', policy: 'Buffer', current: 3, desired: 4, lastScaleTime: undefined, ableToScale: true, scalingLimited: false },
    ]);
  });
});
