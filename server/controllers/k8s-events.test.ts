import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import type { Resource } from '../kinds/resource.js';
import { type Cluster, createCluster } from '../cluster.js';
import type { KubernetesEvent } from '../kinds/event/event.js';
import { gameServerEvent } from '../kinds/gameserver/events.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { EventExpiry, EventRecorder } from './k8s-events.js';

const clusters: Cluster[] = [];
afterEach(() => {
  for (const cluster of clusters.splice(0)) cluster.close();
});

const SET: Resource = {
  apiVersion: 'agones.dev/v1',
  kind: 'GameServerSet',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'set-uid',
    resourceVersion: '3',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    labels: {},
    annotations: {},
  },
};

describe('EventRecorder', () => {
  it('builds core/v1 Events with unique names, committed as ResourceCreated', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1, 0, 0, 5));
    const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
    clusters.push(cluster);
    const recorder = new EventRecorder(cluster, 'gameserverset-controller');
    const events = [1, 2, 3].map((i) => recorder.event(SET, { type: 'Normal', reason: 'SuccessfulDelete', message: `Deleted ${i}` }));
    expect(events.every((e) => e.type === 'ResourceCreated' && e.kind === 'Event')).toBe(true);
    await cluster.commit(events);
    const stored = cluster.readModel.store('Event')!;
    const objects = [...stored.values()] as KubernetesEvent[];
    expect(new Set(objects.map((o) => o.metadata.name)).size).toBe(3);
    expect(objects[0]).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'default', creationTimestamp: '2026-01-01T00:00:05Z' },
      involvedObject: { kind: 'GameServerSet', namespace: 'default', name: 'web', uid: 'set-uid', apiVersion: 'agones.dev/v1' },
      reason: 'SuccessfulDelete',
      message: 'Deleted 1',
      type: 'Normal',
      source: { component: 'gameserverset-controller' },
      firstTimestamp: '2026-01-01T00:00:05Z',
      lastTimestamp: '2026-01-01T00:00:05Z',
      count: 1,
    });
    expect(objects[0]!.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    // A second recorder at the same instant steps past names already stored.
    const other = new EventRecorder(cluster, 'fleet-controller');
    const next = other.event(SET, { type: 'Warning', reason: 'X', message: 'y' });
    expect(objects.map((o) => o.metadata.name)).not.toContain(next.name);
  });
});

describe('EventExpiry', () => {
  it('on a cluster where nothing else is written, expires the Events derived from GameServer changes at their time', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(''), eventTtlMs: 60_000 });
    clusters.push(cluster);
    const expiry = new EventExpiry(cluster);
    expiry.start();
    await cluster.commit([gameServerEvent('GameServerCreated', 'default', 'gs', { object: gameServer('gs', { node: 'n' }) })]);
    clock.advance(5_000);
    await cluster.commit([
      gameServerEvent('GameServerStateChanged', 'default', 'gs', { state: 'Ready', reason: 'Ready', message: 'SDK.Ready() complete', eventType: 'Normal', cause: 'sdk' }),
    ]);
    const reasons = () => (cluster.readModel.list('Event', 'default') as KubernetesEvent[]).map((e) => e.reason);
    expect(reasons()).toEqual(['Ready']);
    clock.advance(59_000);
    await cluster.settled();
    expect(reasons()).toEqual(['Ready']);
    clock.advance(1_000);
    await cluster.settled();
    expect(reasons()).toEqual([]);
    expiry.stop();
  });
});
