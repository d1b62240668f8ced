import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AllocationService } from '../allocation/allocation-service.js';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { FLEET_DEFINITION } from '../kinds/fleet/definition.js';
import { FLEETAUTOSCALER_DEFINITION } from '../kinds/fleetautoscaler/definition.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { resourceEvent } from '../kinds/resource.js';
import { Store } from '../runtime/store.js';
import { NODE_KIND } from '../sim/nodes.js';
import { testCluster } from '../../test/helpers/cluster.js';
import { PROJECTIONS, registerProjections } from './projections.js';

const START = Date.UTC(2026, 0, 1);
const dir = mkdtempSync(join(tmpdir(), 'fleetsim-projections-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const snapshots = (store: Store) => Object.fromEntries(store.registered.map((projection) => [projection.name, projection.snapshot()]));

describe('registered projections', () => {
  it('rebuilt from the log by a fresh store, hold what the live ones held after fleets scaled, allocations, deletions and a node lost', async () => {
    const db = join(dir, 'events.db');
    const gates = parseFeatureGates('CountsAndLists=true');
    const clock = new VirtualClock(START);
    const plane = await testCluster({ db, clock, gates, seed: 7, nodes: 3, podsPerNode: 8, projections: true });
    const { cluster, service } = plane;
    const settle = async (rounds: number) => {
      for (let round = 0; round < rounds; round++) {
        clock.advance(250);
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const template = (scheduling: string) => ({
      scheduling,
      template: { spec: { ports: [{ name: 'default', containerPort: 7654 }], counters: { rooms: { count: 0, capacity: 4 } }, template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } } },
    });
    const inState = (fleet: string, state: string) =>
      [...cluster.gameServers.values()].filter((gs) => gs.metadata.labels['agones.dev/fleet'] === fleet && gs.status.state === state);

    await service.create(FLEET_DEFINITION, 'default', { metadata: { name: 'packed' }, spec: { replicas: 6, ...template('Packed') } });
    await service.create(FLEET_DEFINITION, 'default', { metadata: { name: 'spread' }, spec: { replicas: 5, ...template('Distributed') } });
    await settle(40);
    expect(inState('packed', 'Ready')).toHaveLength(6);

    const allocations = new AllocationService(cluster);
    const allocate = (fleet: string) =>
      allocations.create('default', { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }], counters: { rooms: { action: 'Increment', amount: 2 } } } });
    for (const fleet of ['packed', 'packed', 'packed', 'spread']) expect((await allocate(fleet)).status?.state).toBe('Allocated');

    // A Counter autoscaler scales the packed fleet down by its rooms: the fleet deletion index's walk.
    await service.create(FLEETAUTOSCALER_DEFINITION, 'default', {
      metadata: { name: 'packed-rooms' },
      spec: { fleetName: 'packed', policy: { type: 'Counter', counter: { key: 'rooms', bufferSize: 4, minCapacity: 8, maxCapacity: 40 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } } },
    });
    await service.patch(FLEET_DEFINITION, 'default', 'spread', { spec: { replicas: 2 } }, 'application/merge-patch+json');
    await settle(40);
    expect(inState('spread', 'Ready').length + inState('spread', 'Allocated').length).toBe(2);

    // Deletions: a Ready server and Allocated ones.
    await service.delete(GAMESERVER_DEFINITION, 'default', inState('spread', 'Ready')[0]!.metadata.name);
    await service.delete(GAMESERVER_DEFINITION, 'default', inState('spread', 'Allocated')[0]!.metadata.name);
    await service.delete(GAMESERVER_DEFINITION, 'default', inState('packed', 'Allocated')[1]!.metadata.name);
    await settle(20);

    // A node is lost with servers on it: they turn Unhealthy and their sets replace them elsewhere.
    const onLost = inState('packed', 'Allocated')[0]!;
    const lost = onLost.status.nodeName;
    await cluster.commit([resourceEvent('ResourceDeleted', NODE_KIND, '', lost, {})]);
    await service.patch(FLEET_DEFINITION, 'default', 'spread', { spec: { replicas: 4 } }, 'application/merge-patch+json');
    await settle(40);
    plane.stop();
    await cluster.settled();

    const live = snapshots(cluster);
    // The list names every projection the run registered, the node counter first.
    expect(Object.keys(live)).toEqual(PROJECTIONS.map((definition) => definition.name));
    expect(cluster.gameServers.get('default', onLost.metadata.name)?.status.state ?? 'gone').not.toBe('Allocated');
    expect(cluster.nodes.tally(lost)?.allocated ?? 0).toBe(0);
    expect(cluster.get(NODE_KIND, '', lost)).toBeUndefined();
    cluster.close();

    const replayed = new Store({ db, clock: new VirtualClock(START), gates });
    registerProjections(replayed);
    const rebuilt = snapshots(replayed);
    replayed.close();
    for (const name of Object.keys(live)) expect(rebuilt[name], name).toEqual(live[name]);
  });
});
