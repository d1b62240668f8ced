import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import type { Resource } from '../kinds/resource.js';
import { Cluster } from '../cluster.js';
import type { KubernetesEvent } from '../kinds/event/event.js';
import { EventRecorder } from './k8s-events.js';

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
    const cluster = new Cluster({ db: ':memory:', clock, gates: parseFeatureGates('') });
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
