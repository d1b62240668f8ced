import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { type GameServersCreated, gameServersOfBatch } from '../kinds/gameserver/events.js';
import type { StoredEvent } from '../log/event-log.js';
import { type Cluster, createCluster } from '../cluster.js';
import { ResourceService } from './service.js';

/**
 * A set's batch of creations is one event. Copies of one template are written as the template
 * and each copy's name and uid; the read model rebuilds every GameServer from that, and logs
 * written with each object in full still replay.
 */

const clusters: Cluster[] = [];
afterEach(() => clusters.splice(0).forEach((c) => c.close()));

function cluster(): Cluster {
  const c = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates(''), seed: 3 });
  clusters.push(c);
  return c;
}

const body = (labels: Record<string, string> = { 'agones.dev/gameserverset': 'set-a' }) => ({
  metadata: { generateName: 'set-a-', labels },
  spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
});

describe('GameServersCreated', () => {
  it('writes copies of one template once, with the names and uids of all, and reads back each server', async () => {
    const c = cluster();
    const service = new ResourceService(c);
    const template = body();
    const { objects, events } = service.prepareGameServerBatch('default', [template, template, template]);
    expect(events).toHaveLength(1);
    const payload = events[0]!.payload as GameServersCreated;
    expect(payload.objects).toBeUndefined();
    expect(payload.members).toEqual(objects.map((o) => ({ name: o.metadata.name, uid: o.metadata.uid })));
    expect(new Set(payload.members!.map((m) => m.name)).size).toBe(3);
    // The stored text holds the template once.
    expect(JSON.stringify(payload).split('"generateName"').length - 1).toBe(1);

    await c.commit(events);
    for (const object of objects) {
      const stored = c.gameServers.get('default', object.metadata.name)!;
      // As JSON: the read model's own stamp (when the state was entered) is not part of the object.
      expect(asJson(stored)).toEqual({ ...object, metadata: { ...object.metadata, resourceVersion: stored.metadata.resourceVersion } });
      expect(stored.metadata.uid).toBe(object.metadata.uid);
    }
  });

  it('writes each object in full when they differ in more than their identity', () => {
    const service = new ResourceService(cluster());
    const { objects, events } = service.prepareGameServerBatch('default', [body({ a: '1' }), body({ a: '2' })]);
    const payload = events[0]!.payload as GameServersCreated;
    expect(payload.members).toBeUndefined();
    expect(payload.objects!.map((o) => o.metadata.labels)).toEqual(objects.map((o) => o.metadata.labels));
  });

  it('still reads a batch written with every object in full (older logs)', () => {
    const service = new ResourceService(cluster());
    const template = body();
    const { objects } = service.prepareGameServerBatch('default', [template, template]);
    const older: GameServersCreated = { spec: objects[0]!.spec, objects: objects.map(({ spec: _spec, ...rest }) => rest) };
    const event: StoredEvent = { seq: 7, time: 0, type: 'GameServersCreated', kind: 'GameServer', namespace: 'default', name: '', payload: older, schemaVersion: 1 };
    expect(gameServersOfBatch(event).map(asJson)).toEqual(objects.map((o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: '7' } })));
  });
});

function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
