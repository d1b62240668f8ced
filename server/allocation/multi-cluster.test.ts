import { afterEach, describe, expect, it } from 'vitest';
import { SeededRandom, VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GameServerController } from '../controllers/gameserver-controller.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { GAMESERVERALLOCATIONPOLICY_DEFINITION } from '../kinds/gameserverallocationpolicy/definition.js';
import { ResourceService } from '../resources/service.js';
import { NAMESPACE_DEFINITION } from '../kinds/namespace/definition.js';
import { type Cluster, createCluster } from '../cluster.js';
import { ensureNodes } from '../sim/nodes.js';
import { AllocationService } from './allocation-service.js';
import { readyGameServers, settler } from '../../test/helpers/cluster.js';
import type { AllocationResult } from './allocator.js';
import type { GameServerAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';
import {
  type AllocationPolicy,
  ConnectionInfoIterator,
  MultiClusterAllocator,
  type MultiClusterOptions,
  NO_POLICY_MESSAGE,
  type RemoteClusterAllocator,
} from './multi-cluster.js';
import { type ClusterConnectionInfo, RemoteAllocationError } from './remote-allocator.js';

function policy(name: string, priority: number, weight: number, clusterName: string, endpoints?: string[]): AllocationPolicy {
  return {
    name,
    priority,
    weight,
    connectionInfo: { clusterName, namespace: 'default', ...(endpoints && { allocationEndpoints: endpoints }) },
  };
}

/** A random source that answers from a script and records the bounds it was asked for. */
function scripted(values: number[]) {
  const bounds: number[] = [];
  return {
    bounds,
    int(bound: number): number {
      bounds.push(bound);
      return values.shift() ?? 0;
    },
  };
}

function order(iterator: ConnectionInfoIterator): string[] {
  const names: string[] = [];
  for (let c = iterator.next(); c; c = iterator.next()) names.push(c.clusterName);
  return names;
}

describe('ConnectionInfoIterator', () => {
  // Reference §15 W8.
  const W8 = [policy('p1', 0, 100, 'A', ['a']), policy('p2', 0, 300, 'B', ['b']), policy('p3', 1, 1, 'local')];

  it('tries priority 0 by weighted random (A with 1/4, B with 3/4), the other, then priority 1', () => {
    const low = scripted([99, 0, 0]);
    expect(order(new ConnectionInfoIterator(W8, low))).toEqual(['A', 'B', 'local']);
    expect(low.bounds).toEqual([400, 300, 1]);
    const high = scripted([100, 0, 0]);
    expect(order(new ConnectionInfoIterator(W8, high))).toEqual(['B', 'A', 'local']);
    expect(high.bounds).toEqual([400, 100, 1]);
  });

  it('with a seeded random picks A first about a quarter of the time, the same way every run', () => {
    const firsts = (seed: number) => {
      const random = new SeededRandom(seed);
      let a = 0;
      for (let i = 0; i < 4000; i++) if (new ConnectionInfoIterator(W8, random).next()!.clusterName === 'A') a++;
      return a;
    };
    const a = firsts(7);
    expect(a / 4000).toBeGreaterThan(0.22);
    expect(a / 4000).toBeLessThan(0.28);
    expect(firsts(7)).toBe(a);
  });

  it('weighs a cluster by the integer average of its policies and connects through its first policy', () => {
    const random = scripted([0]);
    const it = new ConnectionInfoIterator(
      [policy('c-2', 0, 21, 'C', ['c2']), policy('c-1', 0, 10, 'C', ['c1']), policy('d', 0, 4, 'D', ['d'])],
      random,
    );
    const first = it.next()!;
    // C = floor((10 + 21) / 2) = 15, D = 4.
    expect(random.bounds).toEqual([19]);
    expect(first.clusterName).toBe('C');
    expect(first.policy.name).toBe('c-1');
    expect(it.next()!.clusterName).toBe('D');
    expect(it.next()).toBeUndefined();
  });

  it('tries a cluster once whatever its priority, and never a cluster of weight 0', () => {
    const it = new ConnectionInfoIterator(
      [policy('x0', 0, 1, 'X', ['x']), policy('zero', 0, 0, 'Z', ['z']), policy('x1', 1, 5, 'X'), policy('y1', 2, 5, 'Y')],
      scripted([]),
    );
    expect(order(it)).toEqual(['X', 'Y']);
  });
});

// -------------------------------------------------------------------------------------------------

const clusters: Cluster[] = [];
afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

/** A cluster with `count` Ready GameServers of fleet `f` in `default`, and the policies given. */
async function setup(policies: Array<{ name: string; labels?: Record<string, string>; namespace?: string; spec: unknown }>, count = 2) {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
  clusters.push(cluster);
  await ensureNodes(cluster, 1);
  new GameServerController(cluster, { maxPodsPerNode: 10 }).start();
  const resources = new ResourceService(cluster);
  for (let i = 0; i < count; i++) {
    await resources.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name: `gs-${i}`, labels: { 'agones.dev/fleet': 'f' } },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
  }
  const settle = settler(clock);
  await readyGameServers(cluster, settle, count);
  for (const namespace of new Set(policies.map((p) => p.namespace ?? 'default'))) {
    if (!cluster.get('Namespace', '', namespace)) await resources.create(NAMESPACE_DEFINITION, '', { metadata: { name: namespace } });
  }
  for (const p of policies) {
    await resources.create(GAMESERVERALLOCATIONPOLICY_DEFINITION, p.namespace ?? 'default', {
      metadata: { name: p.name, labels: p.labels ?? {} },
      spec: p.spec,
    });
  }
  /** The allocation service with multi-cluster allocation as `options` make it. */
  const routed = (options: MultiClusterOptions) => new AllocationService(cluster, { multiCluster: new MultiClusterAllocator(cluster, options) });
  return { cluster, routed };
}

/** A remote that answers from a script, recording what it was asked. */
function fakeRemote(answers: Array<AllocationResult | Error>): RemoteClusterAllocator & { calls: Array<{ info: ClusterConnectionInfo; namespace: string; gsa: GameServerAllocation }> } {
  const calls: Array<{ info: ClusterConnectionInfo; namespace: string; gsa: GameServerAllocation }> = [];
  return {
    calls,
    allocate(gsa, info, namespace) {
      calls.push({ info, namespace, gsa });
      const answer = answers.shift() ?? new Error('no answer scripted');
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

const REMOTE_ALLOCATED: AllocationResult = {
  status: { state: 'Allocated', gameServerName: 'remote-gs', ports: [{ name: 'default', port: 7001 }], address: '10.1.0.1', nodeName: 'b-node', source: '10.1.0.1:443' },
};

function multiClusterRequest(matchLabels: Record<string, string> = {}) {
  return {
    spec: {
      multiClusterSetting: { enabled: true, policySelector: { matchLabels } },
      selectors: [{ matchLabels: { 'agones.dev/fleet': 'f' } }],
    },
  };
}

const REMOTE_B = { priority: 0, weight: 1, connectionInfo: { clusterName: 'b', allocationEndpoints: ['10.1.0.1'], namespace: 'b-ns', secretName: 's' } };
const REMOTE_C = { priority: 0, weight: 1, connectionInfo: { clusterName: 'c', allocationEndpoints: ['10.2.0.1'], namespace: 'default' } };
const LOCAL = { priority: 1, weight: 1, connectionInfo: { clusterName: 'local', namespace: 'default' } };

describe('MultiClusterAllocator', () => {
  it('refuses when no policy matches the selector', async () => {
    const { routed } = await setup([{ name: 'b', labels: { route: 'b' }, spec: REMOTE_B }]);
    const remote = fakeRemote([]);
    const service = routed({ remote, log: () => undefined });
    await expect(service.create('default', multiClusterRequest({ route: 'elsewhere' }))).rejects.toThrow(NO_POLICY_MESSAGE);
    expect(remote.calls).toHaveLength(0);
  });

  it('forwards to the selected remote policy: source is the remote endpoint, nothing allocated here', async () => {
    const { cluster, routed } = await setup([
      { name: 'b', labels: { route: 'b' }, spec: REMOTE_B },
      { name: 'local', labels: { route: 'local' }, spec: LOCAL },
      { name: 'b-elsewhere', namespace: 'other', labels: { route: 'b' }, spec: REMOTE_B },
    ]);
    const remote = fakeRemote([REMOTE_ALLOCATED]);
    const service = routed({ remote, log: () => undefined });
    const gsa = await service.create('default', multiClusterRequest({ route: 'b' }));
    expect(gsa.status).toMatchObject({ state: 'Allocated', gameServerName: 'remote-gs', source: '10.1.0.1:443' });
    expect(remote.calls).toHaveLength(1);
    expect(remote.calls[0]!.info).toMatchObject({ clusterName: 'b', namespace: 'b-ns', secretName: 's' });
    expect(remote.calls[0]!.namespace).toBe('default');
    expect(cluster.gameServers.get('default', 'gs-0')!.status.state).toBe('Ready');
    expect(cluster.gameServers.get('default', 'gs-1')!.status.state).toBe('Ready');
  });

  it('skips a remote that fails with a clear log line and allocates locally, once', async () => {
    const { cluster, routed } = await setup([
      { name: 'b', spec: REMOTE_B },
      { name: 'local', spec: LOCAL },
    ]);
    const log: string[] = [];
    const remote = fakeRemote([new RemoteAllocationError('remote allocation failed after 7 attempts: remote allocator 10.1.0.1:443: connection refused')]);
    const service = routed({ remote, log: (line) => log.push(line) });
    const gsa = await service.create('default', multiClusterRequest());
    expect(gsa.status).toMatchObject({ state: 'Allocated', source: 'local' });
    expect(remote.calls).toHaveLength(1);
    expect(log).toEqual([
      'fleetsim multi-cluster allocation: cluster "b" (policy b, priority 0, 10.1.0.1) failed: remote allocation failed after 7 attempts: ' +
        'remote allocator 10.1.0.1:443: connection refused; trying cluster "local" (policy local, priority 1, this cluster)',
    ]);
    const allocated = cluster.readModel.list('GameServer', 'default').filter((gs) => (gs.status as { state: string }).state === 'Allocated');
    expect(allocated).toHaveLength(1);
  });

  it('goes on after a remote UnAllocated, and answers the last outcome when no cluster allocates', async () => {
    const { routed } = await setup(
      [
        { name: 'b', spec: REMOTE_B },
        { name: 'c', spec: REMOTE_C },
        { name: 'local', spec: LOCAL },
      ],
      0,
    );
    const unallocated: AllocationResult = { status: { state: 'UnAllocated', gameServerName: '', source: '' } };
    const remote = fakeRemote([unallocated, new RemoteAllocationError('remote allocator 10.2.0.1:443: connection refused')]);
    const service = routed({ remote, log: () => undefined });
    // Local last, with nothing Ready: the answer is its UnAllocated.
    const gsa = await service.create('default', multiClusterRequest());
    expect(gsa.status?.state).toBe('UnAllocated');
    expect(remote.calls.map((c) => c.info.clusterName).sort()).toEqual(['b', 'c']);
  });

  it('throws the last remote error when the last cluster tried is a remote that failed', async () => {
    const { routed } = await setup([{ name: 'b', spec: REMOTE_B }], 0);
    const remote = fakeRemote([new RemoteAllocationError('remote allocation failed after 7 attempts: remote allocator 10.1.0.1:443: connection refused')]);
    const service = routed({ remote, log: () => undefined });
    await expect(service.create('default', multiClusterRequest())).rejects.toThrow(
      'remote allocation failed after 7 attempts: remote allocator 10.1.0.1:443: connection refused',
    );
  });

  it('allocates locally in the namespace of the policy', async () => {
    const { routed } = await setup([
      { name: 'local-elsewhere', spec: { priority: 0, weight: 1, connectionInfo: { clusterName: 'x', namespace: 'elsewhere' } } },
      { name: 'local', spec: { ...LOCAL, connectionInfo: { clusterName: 'y', namespace: 'default' } } },
    ]);
    const log: string[] = [];
    const service = routed({ remote: fakeRemote([]), log: (line) => log.push(line) });
    const gsa = await service.create('default', multiClusterRequest());
    expect(gsa.status).toMatchObject({ state: 'Allocated', source: 'local' });
    expect(log).toEqual([
      'fleetsim multi-cluster allocation: cluster "x" (policy local-elsewhere, priority 0, this cluster) answered UnAllocated; trying cluster "y" (policy local, priority 1, this cluster)',
    ]);
  });

  it('refuses a request whose policies all weigh 0', async () => {
    const { routed } = await setup([{ name: 'b', spec: { ...REMOTE_B, weight: 0 } }]);
    const service = routed({ remote: fakeRemote([]), log: () => undefined });
    await expect(service.create('default', multiClusterRequest())).rejects.toThrow(
      'no multi-cluster allocation policy could be tried: the weights of the 1 matching policies are all 0',
    );
  });
});
