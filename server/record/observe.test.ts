import { describe, expect, it } from 'vitest';
import { EventLog } from '../log/event-log.js';
import type { GameServerObserved } from '../kinds/gameserver/events.js';
import type { KubeObject } from './kube-client.js';
import { WATCHED_KINDS, collectionPath, observationEvents } from './observe.js';
import { RecordedState, notNewer } from './recorded-state.js';

const kind = (name: string) => WATCHED_KINDS.find((k) => k.kind === name)!;
const GS = kind('GameServer');

function gameServer(state: string, resourceVersion: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: { name: 'gs-1', namespace: 'default', resourceVersion, labels, annotations, managedFields: [{ manager: 'agones' }] },
    spec: { ports: null },
    status: { state, ports: null, address: '', nodeName: 'node-1' },
  };
}

describe('collectionPath', () => {
  it('addresses core and group kinds, across namespaces or in one', () => {
    expect(collectionPath(kind('Node'), 'ns')).toBe('/api/v1/nodes');
    expect(collectionPath(kind('Event'))).toBe('/api/v1/events');
    expect(collectionPath(GS, 'game')).toBe('/apis/agones.dev/v1/namespaces/game/gameservers');
    expect(collectionPath(kind('FleetAutoscaler'))).toBe('/apis/autoscaling.agones.dev/v1/fleetautoscalers');
  });
});

describe('observationEvents', () => {
  it('records a GameServer whole, without managedFields, with the fields fleetsim reads filled in', () => {
    const { events, said } = observationEvents(GS, undefined, gameServer('Ready', '5'), false);
    expect(said).toBeUndefined();
    expect(events).toHaveLength(1);
    const payload = events[0]!.payload as GameServerObserved;
    expect(events[0]!.type).toBe('GameServerObserved');
    expect(payload.object.metadata).not.toHaveProperty('managedFields');
    expect(payload.object.status).toMatchObject({ state: 'Ready', ports: [], addresses: [], reservedUntil: null, nodeName: 'node-1' });
    expect(payload.allocation).toBeUndefined();
  });

  it('says what an allocation set when a GameServer turns Allocated', () => {
    const before = observationEvents(GS, undefined, gameServer('Ready', '5', { 'agones.dev/fleet': 'game' }), false).events[0]!.payload as GameServerObserved;
    const after = gameServer('Allocated', '9', { 'agones.dev/fleet': 'game', mode: 'ctf' }, { 'agones.dev/last-allocated': '2026-01-01T00:00:00Z' });
    const { events, said } = observationEvents(GS, before.object as never, after, false);
    expect((events[0]!.payload as GameServerObserved).allocation).toEqual({ labels: { mode: 'ctf' }, annotations: { 'agones.dev/last-allocated': '2026-01-01T00:00:00Z' } });
    expect(said).toBe('allocated, the allocation setting labels {mode: ctf} and annotations {agones.dev/last-allocated: 2026-01-01T00:00:00Z}');
    // Allocated already, and again: no new allocation.
    const again = observationEvents(GS, (events[0]!.payload as GameServerObserved).object as never, gameServer('Allocated', '10'), false);
    expect((again.events[0]!.payload as GameServerObserved).allocation).toBeUndefined();
  });

  it('counts a GameServer first seen Allocated as allocated only when it appeared while recording', () => {
    const atStart = observationEvents(GS, undefined, gameServer('Allocated', '3'), false);
    expect((atStart.events[0]!.payload as GameServerObserved).allocation).toBeUndefined();
    const later = observationEvents(GS, undefined, gameServer('Allocated', '3'), true);
    expect((later.events[0]!.payload as GameServerObserved).allocation).toBeDefined();
  });

  it('stores other kinds whole and deletes what was recorded only', () => {
    const fleet = { apiVersion: 'agones.dev/v1', kind: 'Fleet', metadata: { name: 'game', namespace: 'default', resourceVersion: '7' }, spec: { replicas: 3 } };
    const created = observationEvents(kind('Fleet'), undefined, fleet, false).events[0]!;
    expect(created).toMatchObject({ type: 'ResourceCreated', kind: 'Fleet', namespace: 'default', name: 'game' });
    const object = (created.payload as { object: never }).object;
    expect(observationEvents(kind('Fleet'), object, fleet, false).events[0]!.type).toBe('ResourceUpdated');
    expect(observationEvents(kind('Fleet'), object, undefined, false).events[0]!.type).toBe('ResourceDeleted');
    expect(observationEvents(kind('Fleet'), undefined, undefined, false).events).toEqual([]);
    const node = observationEvents(kind('Node'), undefined, { metadata: { name: 'n1', namespace: 'ignored', resourceVersion: '1' } }, false).events[0]!;
    expect(node).toMatchObject({ kind: 'Node', namespace: '', name: 'n1' });
  });
});

describe('RecordedState', () => {
  it('folds a recording back to its objects, each with the version the cluster gave it', () => {
    const log = new EventLog(':memory:');
    const cause = (resourceVersion: string) => ({ type: 'observed', cluster: 'c', context: 'x', resourceVersion, observedAt: '', via: 'watch' }) as const;
    const add = (object: KubeObject, rv: string, previous?: never) => log.append(observationEvents(GS, previous, object, false).events, 0, cause(rv)).records;
    const [first] = add(gameServer('Ready', '5'), '5');
    const state = new RecordedState();
    state.apply(first!);
    expect(state.get('GameServer', 'default', 'gs-1')).toMatchObject({ resourceVersion: '5' });
    const [second] = add(gameServer('Allocated', '8'), '8', state.get('GameServer', 'default', 'gs-1')!.object as never);
    state.apply(second!);
    expect(state.get('GameServer', 'default', 'gs-1')?.resourceVersion).toBe('8');
    expect((state.get('GameServer', 'default', 'gs-1')?.object as unknown as { status: { state: string } }).status.state).toBe('Allocated');
    const [gone] = log.append(observationEvents(GS, state.get('GameServer', 'default', 'gs-1')!.object, undefined, false).events, 0, cause('9')).records;
    state.apply(gone!);
    expect(state.size).toBe(0);
    log.close();
  });

  it('tells a version already recorded (or older) from a newer one', () => {
    expect(notNewer('5', '5')).toBe(true);
    expect(notNewer('4', '12')).toBe(true);
    expect(notNewer('13', '12')).toBe(false);
    expect(notNewer('abc', 'abd')).toBe(false);
  });
});
