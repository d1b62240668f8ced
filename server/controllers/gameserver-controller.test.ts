import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { ResourceService } from '../resources/service.js';
import { type Cluster, createCluster } from '../cluster.js';
import { ensureNodes, nodeCreation } from '../sim/nodes.js';
import { GameServerController } from './gameserver-controller.js';

const clusters: Cluster[] = [];
afterEach(() => {
  while (clusters.length) clusters.pop()!.close();
});

async function setup(nodes = 2, maxPodsPerNode = 110, gates = '') {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(gates) });
  clusters.push(cluster);
  await ensureNodes(cluster, nodes);
  const controller = new GameServerController(cluster, { portRange: { min: 7000, max: 7009 }, maxPodsPerNode });
  controller.start();
  const service = new ResourceService(cluster);
  const settle = async () => {
    for (let i = 0; i < 10; i++) {
      clock.advance(0);
      await new Promise((r) => setImmediate(r));
    }
  };
  const create = (name: string, spec: Record<string, unknown> = {}) =>
    service.create(GAMESERVER_DEFINITION, 'default', {
      metadata: { name },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } }, ...spec },
    });
  const gs = (name: string) => cluster.gameServers.get('default', name) as GameServer;
  return { cluster, clock, service, settle, create, gs, controller };
}

describe('GameServerController', () => {
  it('takes a dynamic-port GameServer through PortAllocation, Creating and Starting to Scheduled', async () => {
    const { settle, create, gs, cluster } = await setup();
    await create('gs-1');
    expect(gs('gs-1').status.state).toBe('PortAllocation');
    await settle();
    const server = gs('gs-1');
    expect(server.status.state).toBe('Scheduled');
    const hostPort = server.spec.ports[0]!.hostPort!;
    expect(hostPort).toBeGreaterThanOrEqual(7000);
    expect(hostPort).toBeLessThanOrEqual(7009);
    expect(server.status.ports).toEqual([{ name: 'default', port: hostPort }]);
    expect(server.status.nodeName).toMatch(/^node-\d$/);
    expect(server.status.address).toBe('127.0.0.1');
    expect(server.status.addresses.map((a) => a.type)).toEqual(['Hostname', 'ExternalIP', 'InternalIP', 'PodIP']);
    const states = [...cluster.log.read({ kind: 'GameServer', name: 'gs-1' })]
      .filter((e) => e.type === 'GameServerStateChanged')
      .map((e) => (e.payload as { state: string; reason: string }).reason);
    expect(states).toEqual(['PortAllocation', 'Creating', 'Scheduled']);
  });

  it('starts a static-port GameServer in Creating and keeps its port', async () => {
    const { settle, create, gs } = await setup();
    await create('static', { ports: [{ name: 'game', portPolicy: 'Static', containerPort: 7654, hostPort: 7777 }] });
    expect(gs('static').status.state).toBe('Creating');
    await settle();
    expect(gs('static').status.ports).toEqual([{ name: 'game', port: 7777 }]);
  });

  it('moves RequestReady to Ready and deletes Shutdown GameServers, freeing their ports', async () => {
    const { settle, create, gs, cluster } = await setup();
    await create('gs-1');
    await settle();
    await cluster.actors.send('default', 'gs-1', { type: 'sdk.ready' });
    await settle();
    expect(gs('gs-1').status.state).toBe('Ready');
    await cluster.actors.send('default', 'gs-1', { type: 'sdk.shutdown' });
    await settle();
    expect(gs('gs-1')).toBeUndefined();
  });

  it('never hands out the same host port twice within one node table, and adds tables when full', async () => {
    const { settle, create, gs } = await setup(1);
    for (let i = 0; i < 15; i++) await create(`gs-${i}`);
    await settle();
    const ports = Array.from({ length: 15 }, (_, i) => gs(`gs-${i}`).spec.ports[0]!.hostPort!);
    // Ten ports in the range: the first ten are distinct, the next five come from a second table.
    expect(new Set(ports.slice(0, 10)).size).toBe(10);
    expect(new Set(ports.slice(10)).size).toBe(5);
  });

  it('never places more pods on a node than it takes, even when many are placed at once', async () => {
    const { settle, create, gs } = await setup(2, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => create(`burst-${i}`)));
    await settle();
    const nodes = Array.from({ length: 10 }, (_, i) => gs(`burst-${i}`).status.nodeName).filter((n) => n !== '');
    const perNode = new Map<string, number>();
    for (const n of nodes) perNode.set(n, (perNode.get(n) ?? 0) + 1);
    expect([...perNode.values()].every((count) => count <= 4)).toBe(true);
    expect(nodes).toHaveLength(8);
    expect(Array.from({ length: 10 }, (_, i) => gs(`burst-${i}`).status.state).filter((s) => s === 'Starting')).toHaveLength(2);
  });

  it('packs onto the busiest node and spreads Distributed ones; leaves a pod pending when nodes are full', async () => {
    const { settle, create, gs } = await setup(2, 3);
    for (let i = 0; i < 3; i++) await create(`packed-${i}`);
    await settle();
    const nodes = new Set([0, 1, 2].map((i) => gs(`packed-${i}`).status.nodeName));
    expect(nodes.size).toBe(1);
    for (let i = 0; i < 3; i++) await create(`dist-${i}`, { scheduling: 'Distributed' });
    await settle();
    await create('pending');
    await settle();
    expect(gs('pending').status.state).toBe('Starting');
  });

  it("places pods by each node's own capacity, and a waiting one as soon as a node is added or a pod leaves", async () => {
    const { settle, create, gs, cluster, controller } = await setup(0);
    await cluster.commit([nodeCreation(cluster, { name: 'small-1', pods: 2, network: 1, ordinal: 0 })]);
    for (let i = 0; i < 3; i++) await create(`gs-${i}`);
    await settle();
    expect([0, 1].map((i) => gs(`gs-${i}`).status.nodeName)).toEqual(['small-1', 'small-1']);
    expect(gs('gs-2').status.state).toBe('Starting');
    expect(controller.unschedulableCount).toBe(1);
    expect(controller.unschedulableKeys(10)).toEqual(['default/gs-2']);
    expect(controller.podsOn('small-1')).toBe(2);

    await cluster.commit([nodeCreation(cluster, { name: 'big-1', pods: 5, network: 2, ordinal: 0 })]);
    await settle();
    expect(gs('gs-2').status.nodeName).toBe('big-1');
    expect(controller.unschedulableCount).toBe(0);

    // Fill big-1, then free a place on small-1: the one waiting takes it.
    for (let i = 3; i < 8; i++) await create(`gs-${i}`);
    await settle();
    expect(controller.podsOn('big-1')).toBe(5);
    expect(controller.unschedulableCount).toBe(1);
    await cluster.actors.send('default', 'gs-0', { type: 'sdk.shutdown' });
    await settle();
    expect(gs('gs-0')).toBeUndefined();
    expect(gs('gs-7').status.nodeName).toBe('small-1');
    expect(controller.unschedulableCount).toBe(0);
  });

  it('places no two pods holding one host port on a node; a pod every node with room holds it for waits, told why once, then takes the port freed', async () => {
    const { settle, create, gs, cluster, controller } = await setup(3, 2);
    const staticPort = (protocol: string) => ({ ports: [{ name: 'game', portPolicy: 'Static', hostPort: 7500, containerPort: 7654, protocol }] });
    await create('filler-1');
    await create('filler-2');
    await settle();
    // The busiest node is full: Packed goes to the next, skipping the node that holds the port after.
    await create('udp-1', staticPort('UDP'));
    await settle();
    await create('tcp-1', staticPort('TCP'));
    await create('udp-2', staticPort('UDP'));
    await settle();
    const node = (name: string) => gs(name).status.nodeName;
    expect(node('tcp-1')).toBe(node('udp-1'));
    expect(node('udp-2')).not.toBe(node('udp-1'));
    expect(new Set([node('filler-1'), node('udp-1'), node('udp-2')]).size).toBe(3);
    expect(gs('udp-2').status.address).toBe(`127.0.0.${node('udp-2')!.slice('node-'.length)}`);

    await create('udp-3', staticPort('UDP'));
    await settle();
    await create('udp-4', staticPort('TCPUDP'));
    await settle();
    expect(gs('udp-3').status.state).toBe('Starting');
    expect(controller.unschedulableCount).toBe(2);
    const failed = () => cluster.readModel.list('Event').filter((e) => (e as unknown as { reason: string }).reason === 'FailedScheduling') as unknown as Array<{
      message: string;
      involvedObject: { kind: string; name: string };
    }>;
    expect(failed().map((e) => [e.involvedObject.kind, e.involvedObject.name, e.message])).toEqual([
      ['Pod', 'udp-3', "0/3 nodes are available: 2 Too many pods, 1 node(s) didn't have free ports for the requested pod ports (7500/UDP)."],
      ['Pod', 'udp-4', "0/3 nodes are available: 2 Too many pods, 1 node(s) didn't have free ports for the requested pod ports (7500/UDP)."],
    ]);

    // A pod leaving frees the port on its node: the first waiting takes it, the next waits on.
    const freed = node('udp-2');
    await cluster.actors.send('default', 'udp-2', { type: 'sdk.shutdown' });
    await settle();
    expect(gs('udp-3').status.nodeName).toBe(freed);
    expect(gs('udp-4').status.state).toBe('Starting');
    expect(controller.unschedulableCount).toBe(1);
    expect(failed()).toHaveLength(2);
  });

  it("places a pod only on a node its nodeSelector matches, says why while none does, and takes the first that comes", async () => {
    const { settle, create, gs, cluster, controller } = await setup(3);
    const pinned = (selector: Record<string, string>) => ({ template: { spec: { nodeSelector: selector, containers: [{ name: 'game', image: 'game:1' }] } } });
    // Packed would take the busiest node; the selector takes node-3.
    await create('filler');
    await settle();
    await create('pinned', pinned({ 'kubernetes.io/hostname': 'node-3' }));
    await create('ssd', pinned({ disk: 'ssd' }));
    await settle();
    expect(gs('filler').status.nodeName).not.toBe('node-3');
    expect(gs('pinned').status.nodeName).toBe('node-3');
    expect(gs('ssd').status.state).toBe('Starting');
    expect(controller.unschedulableCount).toBe(1);
    const failed = cluster.readModel.list('Event').filter((e) => (e as unknown as { reason: string }).reason === 'FailedScheduling') as unknown as Array<{ message: string }>;
    expect(failed.map((e) => e.message)).toEqual(["0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."]);

    await cluster.commit([nodeCreation(cluster, { name: 'node-ssd', pods: 10, labels: { disk: 'ssd' }, network: 1, ordinal: 0 })]);
    await settle();
    expect(gs('ssd').status.nodeName).toBe('node-ssd');
    expect(controller.unschedulableCount).toBe(0);
  });

  it('turns a GameServer whose pod has no node with its static port free Unhealthy without sidecar containers, as Agones does; with them it waits', async () => {
    const staticOn = (node: string) => ({
      ports: [{ name: 'game', portPolicy: 'Static', hostPort: 4500, containerPort: 7654 }],
      template: { spec: { nodeSelector: { 'kubernetes.io/hostname': node }, containers: [{ name: 'game', image: 'game:1' }] } },
    });
    for (const [gates, expected] of [['SidecarContainers=false', 'Unhealthy'], ['', 'Starting']] as const) {
      const { settle, create, gs, cluster } = await setup(2, 110, gates);
      await create('first', staticOn('node-1'));
      await settle();
      expect(gs('first').status.nodeName).toBe('node-1');
      await create('second', staticOn('node-1'));
      await settle();
      expect(gs('second').status.state).toBe(expected);
      const events = cluster.readModel.list('Event') as unknown as Array<{ reason: string; message: string; involvedObject: { name: string } }>;
      expect(events.filter((e) => e.involvedObject.name === 'second' && e.reason === 'FailedScheduling').map((e) => e.message)).toEqual([
        "0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports (4500/UDP), 1 node(s) didn't match Pod's node affinity/selector.",
      ]);
    }
  });

  it('does nothing once stopped, though a drain was due: the log may be closed next', async () => {
    const { clock, create, gs, cluster, controller } = await setup();
    await create('gs-1');
    const seq = cluster.log.lastSeq;
    controller.stop();
    clock.advance(1000);
    await new Promise((r) => setImmediate(r));
    expect(gs('gs-1').status.state).toBe('PortAllocation');
    expect(cluster.log.lastSeq).toBe(seq);
  });

  it('forgets a deleted node', async () => {
    const { settle, create, gs, cluster, controller } = await setup(1);
    await cluster.commit([{ type: 'ResourceDeleted', kind: 'Node', namespace: '', name: 'node-1', payload: {} }]);
    await create('gs-1');
    await settle();
    expect(gs('gs-1').status.state).toBe('Starting');
    expect(controller.unschedulableCount).toBe(1);
  });
});
