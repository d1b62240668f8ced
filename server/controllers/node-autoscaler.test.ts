import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_DEFINITION } from '../kinds/fleet/definition.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import type { KubernetesEvent } from '../kinds/event/event.js';
import { LogExplainer } from '../history/explain.js';
import { type NodePool, nodeCountChanges, nodeSecondsByPool, parseNodePool } from '../sim/node-pools.js';
import { allocatablePods } from '../sim/nodes.js';
import { type TestCluster, testCluster } from '../../test/helpers/cluster.js';

const clusters: TestCluster[] = [];
afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

const pool = (name: string, spec: Record<string, unknown>): NodePool =>
  parseNodePool({ kind: 'NodePool', metadata: { name }, spec: { scaleUpDelay: '60s', scanInterval: '10s', ...spec } });

/** A cluster with its pools' initial nodes, the controllers that take a fleet to Ready, and the node autoscaler. */
async function setup(pools: NodePool[], seed = 1) {
  const plane = await testCluster({ seed, nodePools: pools });
  clusters.push(plane);
  const { clock, cluster, service, gameServers: scheduler } = plane;
  const autoscaler = plane.nodeAutoscaler!;
  const start = clock.now();
  /** Runs the cluster until `seconds` after the start, a second at a time. */
  const runUntil = async (seconds: number) => {
    while (clock.now() < start + seconds * 1000) {
      clock.advance(1000);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    }
  };
  const fleet = async (replicas: number) => {
    await service.create(FLEET_DEFINITION, 'default', {
      metadata: { name: 'f' },
      spec: {
        replicas,
        scheduling: 'Packed',
        template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } } },
      },
    });
  };
  const scale = (replicas: number) => service.patch(FLEET_DEFINITION, 'default', 'f', { spec: { replicas } }, 'application/merge-patch+json');
  const ready = () => (cluster.get(FLEET_KIND, 'default', 'f')?.status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
  const nodes = () => cluster.readModel.list('Node').map((n) => n.metadata.name);
  const podsPerNode = () => new Map(nodes().map((n) => [n, scheduler.podsOn(n)]));
  const events = (reason: string) => cluster.readModel.list('Event').filter((e) => (e as KubernetesEvent).reason === reason) as KubernetesEvent[];
  return { cluster, clock, start, runUntil, fleet, scale, ready, nodes, podsPerNode, events, scheduler, autoscaler };
}

describe('NodeAutoscaler', () => {
  it('scales a pool up for unschedulable pods: the new nodes are Ready after scaleUpDelay and take them all', async () => {
    const h = await setup([pool('default', { podsPerNode: 4, minNodes: 1, maxNodes: 5 })]);
    await h.fleet(14);
    await h.runUntil(5);
    expect(h.nodes()).toEqual(['default-1']);
    expect(h.scheduler.unschedulableCount).toBe(10);
    // The scan at 10 s decides 1 -> 4 (10 pods, 4 a node); the nodes come 60 s later.
    await h.runUntil(11);
    expect(h.autoscaler.status()).toEqual([{ pool: 'default', nodes: 1, provisioning: 3, minNodes: 1, maxNodes: 5 }]);
    const triggered = h.events('TriggeredScaleUp');
    expect(triggered.length).toBe(10);
    expect(triggered[0]!.message).toBe('pod triggered scale-up: [{default 1->4 (max: 5)}]');
    expect(triggered[0]!.involvedObject.kind).toBe('Pod');
    expect(triggered[0]!.source.component).toBe('cluster-autoscaler');
    await h.runUntil(69);
    expect(h.nodes()).toEqual(['default-1']);
    // No second decision while the first one's nodes are provisioning.
    expect(h.events('TriggeredScaleUp').length).toBe(10);
    await h.runUntil(75);
    expect(h.nodes()).toEqual(['default-1', 'default-2', 'default-3', 'default-4']);
    expect(h.ready()).toBe(14);
    expect(h.scheduler.unschedulableCount).toBe(0);
    expect([...h.podsPerNode().values()].sort()).toEqual([2, 4, 4, 4]);

    // Why default-2 exists, from the log alone.
    await h.cluster.settled();
    const history = await new LogExplainer(h.cluster.log).explainObject('Node', '', 'default-2');
    expect(history.changes.map((c) => c.summary)).toEqual(['created']);
    const because = history.changes[0]!.because.map((b) => b.text);
    expect(because[0]).toBe('timer cluster-autoscaler.provision (pool default, node default-2, scaleUpDelaySeconds 60)');
    expect(because[1]).toMatch(/^Event default\/f-\S+: recorded Normal TriggeredScaleUp: pod triggered scale-up: \[\{default 1->4 \(max: 5\)\}\]$/);
    expect(because[2]).toBe('timer cluster-autoscaler.scan (unschedulablePods 10, podsOnProvisioningNodes 0, pool default, podsPerNode 4, from 1, to 4, maxNodes 5)');
  });

  it('grows no pool past maxNodes: the pods left over stay pending, told why once', async () => {
    const h = await setup([pool('default', { podsPerNode: 4, minNodes: 1, maxNodes: 3 })]);
    await h.fleet(14);
    await h.runUntil(200);
    expect(h.nodes()).toEqual(['default-1', 'default-2', 'default-3']);
    expect(h.ready()).toBe(12);
    expect(h.scheduler.unschedulableCount).toBe(2);
    expect(h.events('TriggeredScaleUp')[0]!.message).toBe('pod triggered scale-up: [{default 1->3 (max: 3)}]');
    const notTriggered = h.events('NotTriggerScaleUp');
    expect(notTriggered.map((e) => e.message)).toEqual(["pod didn't trigger scale-up: 1 max node group size reached", "pod didn't trigger scale-up: 1 max node group size reached"]);
  });

  it('places pods by each pool capacity and grows the first pool that can grow, in declared order', async () => {
    const h = await setup([pool('small', { podsPerNode: 2, minNodes: 1, maxNodes: 1 }), pool('big', { podsPerNode: 5, minNodes: 0, maxNodes: 3 })]);
    expect(h.nodes()).toEqual(['small-1']);
    await h.fleet(9);
    await h.runUntil(100);
    expect(h.nodes()).toEqual(['small-1', 'big-1', 'big-2']);
    expect(h.ready()).toBe(9);
    for (const node of h.cluster.readModel.list('Node')) expect(h.scheduler.podsOn(node.metadata.name)).toBeLessThanOrEqual(allocatablePods(node));
    expect(h.podsPerNode()).toEqual(new Map([['small-1', 2], ['big-1', 5], ['big-2', 2]]));
    expect(h.events('TriggeredScaleUp')[0]!.message).toBe('pod triggered scale-up: [{big 0->2 (max: 3)}]');
  });

  it('removes nodes a Packed fleet emptied after scaleDownUnneededTime, not during scaleDownDelayAfterAdd, never below minNodes', async () => {
    const h = await setup([pool('default', { podsPerNode: 4, minNodes: 1, maxNodes: 5, scaleDownUnneededTime: '5m', scaleDownDelayAfterAdd: '10m' })]);
    await h.fleet(14);
    await h.runUntil(80);
    expect(h.nodes()).toHaveLength(4);
    // Packed scale-down takes GameServers off the least-populated nodes first: three nodes empty out.
    await h.scale(3);
    await h.runUntil(100);
    expect([...h.podsPerNode().values()].filter((pods) => pods === 0)).toHaveLength(3);
    // Empty for 5 minutes by 400 s, but the pool grew at 10 s: nothing goes before 610 s.
    await h.runUntil(600);
    expect(h.nodes()).toHaveLength(4);
    // After the cooldown the nodes must be seen empty for 5 minutes again (from the scan at 610 s).
    await h.runUntil(905);
    expect(h.nodes()).toHaveLength(4);
    await h.runUntil(915);
    const left = h.nodes();
    expect(left).toHaveLength(1);
    expect(h.podsPerNode()).toEqual(new Map([[left[0]!, 3]]));
    expect(h.events('ScaleDown').map((e) => [e.involvedObject.kind, e.message])).toEqual(
      Array(3).fill(['Node', 'marked the node as toBeDeleted/unschedulable']),
    );
    // Empty, the last node stays: minNodes is 1.
    await h.scale(0);
    await h.runUntil(2000);
    expect(h.nodes()).toEqual(left);
    expect(h.podsPerNode()).toEqual(new Map([[left[0]!, 0]]));

    await h.cluster.settled();
    const deletion = [...h.cluster.log.read({ kind: 'Node' })].find((e) => e.type === 'ResourceDeleted')!;
    expect(deletion.cause).toMatchObject({ type: 'timer', timer: 'cluster-autoscaler.scan', inputs: { pool: 'default', emptySeconds: 300, nodes: 4, minNodes: 1 } });
    // Node-seconds from the log: 1 node from 0 to 70 s, 4 nodes from 70 s to 910 s, then 1.
    const seconds = nodeSecondsByPool(nodeCountChanges(h.cluster.log.read({ kind: 'Node' })), h.start, h.start + 2000_000);
    expect(seconds).toEqual(new Map([['default', 70 + 4 * 840 + 1090]]));
  });

  it('writes the same log for the same seed', async () => {
    const run = async () => {
      const h = await setup([pool('default', { podsPerNode: 4, minNodes: 1, maxNodes: 5, scaleDownUnneededTime: '1m', scaleDownDelayAfterAdd: '2m' })], 42);
      await h.fleet(14);
      await h.runUntil(80);
      await h.scale(2);
      await h.runUntil(400);
      await h.cluster.settled();
      return [...h.cluster.log.read()].map(({ seq, time, type, kind, namespace, name, payload, cause }) => JSON.stringify({ seq, time, type, kind, namespace, name, payload, cause }));
    };
    const first = await run();
    const second = await run();
    expect(first.some((row) => row.includes('"type":"ResourceDeleted","kind":"Node"'))).toBe(true);
    expect(second).toEqual(first);
  });
});
