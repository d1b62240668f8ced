import { describe, expect, it } from 'vitest';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { Resource } from '../kinds/resource.js';
import type { StoredEvent } from '../log/event-log.js';
import { type ApplySink, type Change, DEFAULT_EVENT_TTL_MS, EVENTS_EXPIRED, IGNORE_CHANGES, ReadModel } from './read-model.js';
import { gameServer as buildGameServer } from '../../test/helpers/gameservers.js';

const T0 = Date.parse('2026-06-01T00:00:00Z');
const MINUTE = 60_000;

function kubernetesEvent(name: string, reason: string): Resource {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '0', generation: 1, creationTimestamp: '', labels: {}, annotations: {} },
    involvedObject: { apiVersion: 'agones.dev/v1', kind: 'Fleet', namespace: 'default', name: 'f', uid: 'f' },
    reason,
    message: reason,
    type: 'Normal',
  } as Resource;
}

function gameServer(name: string): GameServer {
  return buildGameServer(name, { node: 'n', metadata: { uid: name, creationTimestamp: '' } });
}

/** A log: Events written over two hours, other kinds in between, an idle stretch, an expiry tick. */
function log(): StoredEvent[] {
  const events: StoredEvent[] = [];
  const at = (minutes: number, e: Omit<StoredEvent, 'seq' | 'time' | 'schemaVersion'>) =>
    events.push({ ...e, seq: events.length + 1, time: T0 + minutes * MINUTE, schemaVersion: 1 });
  const created = (minutes: number, name: string, reason = 'Scaling') =>
    at(minutes, { type: 'ResourceCreated', kind: 'Event', namespace: 'default', name, payload: { object: kubernetesEvent(name, reason) } });
  created(0, 'e0');
  created(10, 'e10');
  created(20, 'e20');
  // e0 is written again at 30 min: it lives an hour from then.
  at(30, { type: 'ResourceUpdated', kind: 'Event', namespace: 'default', name: 'e0', payload: { object: kubernetesEvent('e0', 'ScalingAgain') } });
  at(40, { type: 'GameServerCreated', kind: 'GameServer', namespace: 'default', name: 'gs', payload: { object: gameServer('gs') } });
  at(45, { type: 'GameServerStateChanged', kind: 'GameServer', namespace: 'default', name: 'gs', payload: { state: 'Ready', reason: 'Ready', message: 'SDK.Ready() complete', eventType: 'Normal', cause: 'sdk' } });
  created(65, 'e65');
  // Nothing written from 65 to 95 min, then the expiry tick of an idle cluster.
  at(95, { type: EVENTS_EXPIRED, kind: 'Event', namespace: '', name: '', payload: {} });
  return events;
}

const names = (model: ReadModel) =>
  model
    .list('Event', 'default')
    .map((e) => e.metadata.name)
    .sort();

function recordingSink(): { sink: ApplySink; changes: Change[] } {
  const changes: Change[] = [];
  return { sink: { ...IGNORE_CHANGES, change: (c) => changes.push(c) }, changes };
}

describe('ReadModel: Kubernetes Events expire after the event TTL (by the log time, not a clock)', () => {
  it('keeps an hour by default', () => {
    expect(new ReadModel().eventTtlMs).toBe(DEFAULT_EVENT_TTL_MS);
    expect(DEFAULT_EVENT_TTL_MS).toBe(60 * MINUTE);
  });

  it('drops Events an hour after their last write: gone from get and list, and watchers hear DELETED', () => {
    const model = new ReadModel();
    const { sink, changes } = recordingSink();
    const events = log();
    const upTo = (minutes: number) => {
      for (const e of events.filter((x) => x.time <= T0 + minutes * MINUTE && x.seq > model.lastSeq)) model.apply(e, sink);
    };
    upTo(65);
    // At 65 min: e0 (rewritten at 30), e10, e20, e65, and the derived GameServer Events.
    expect(names(model).filter((n) => n.startsWith('e'))).toEqual(['e0', 'e10', 'e20', 'e65']);
    expect(model.list('Event').filter((e) => e.involvedObject !== undefined && (e.involvedObject as { kind: string }).kind === 'GameServer')).toHaveLength(1);
    upTo(95);
    // At 95 min: e10 (70) and e20 (80) are past the hour; e0's last write was at 30 (expires 90);
    // e65 stays, and so does the GameServer's Ready Event of 45 min.
    expect(names(model).filter((n) => n.startsWith('e'))).toEqual(['e65']);
    expect(model.get('Event', 'default', 'e10')).toBeUndefined();
    expect(model.get('Event', 'default', 'e0')).toBeUndefined();
    expect(model.get('Event', 'default', 'e65')?.reason).toBe('Scaling');
    const deleted = changes.filter((c) => c.type === 'DELETED').map((c) => c.name);
    expect(deleted.sort()).toEqual(['e0', 'e10', 'e20']);
    // The expiry tick itself is no object and no watch change of its own.
    expect(changes.filter((c) => c.name === '')).toEqual([]);
    // The next to go is the GameServer's Ready Event (45 min), before e65: derived Events expire too.
    expect(model.nextEventExpiry()).toBe(T0 + 105 * MINUTE);
  });

  it('hides derived GameServer Events past the same horizon', () => {
    const model = new ReadModel();
    for (const e of log()) model.apply(e);
    model.apply({ seq: 100, time: T0 + 150 * MINUTE, type: EVENTS_EXPIRED, kind: 'Event', namespace: '', name: '', payload: {}, schemaVersion: 1 });
    expect(model.list('Event')).toEqual([]);
    expect(model.nextEventExpiry()).toBeUndefined();
  });

  it('gets a derived GameServer Event by its name as listed, and not past the horizon or in another namespace', () => {
    const model = new ReadModel();
    for (const e of log()) model.apply(e);
    const derived = model.list('Event').find((e) => (e.involvedObject as { kind?: string } | undefined)?.kind === 'GameServer')!;
    expect(model.get('Event', 'default', derived.metadata.name)).toEqual(derived);
    expect(model.get('Event', 'other', derived.metadata.name)).toBeUndefined();
    expect(model.get('Event', 'default', `${derived.metadata.name}x`)).toBeUndefined();
    model.apply({ seq: 100, time: T0 + 150 * MINUTE, type: EVENTS_EXPIRED, kind: 'Event', namespace: '', name: '', payload: {}, schemaVersion: 1 });
    expect(model.get('Event', 'default', derived.metadata.name)).toBeUndefined();
  });

  it('a replay of the same log gives the same Events, and a shorter TTL drops more', () => {
    const live = new ReadModel();
    for (const e of log()) live.apply(e);
    const replay = new ReadModel();
    for (const e of log()) replay.apply(e);
    expect(replay.list('Event')).toEqual(live.list('Event'));
    expect(names(replay)).toEqual(names(live));
    const short = new ReadModel(undefined, { eventTtlMs: 10 * MINUTE });
    for (const e of log()) short.apply(e);
    expect(short.list('Event')).toEqual([]);
  });
});

describe('ReadModel.clone: a checkpoint a replay resumes from (time travel)', () => {
  /** The Event log above, then a fleet whose GameServers are created, allocated and deleted. */
  function longerLog(): StoredEvent[] {
    const events = log();
    const at = (e: Omit<StoredEvent, 'seq' | 'time' | 'schemaVersion'>) =>
      events.push({ ...e, seq: events.length + 1, time: T0 + 100 * MINUTE + events.length * 1000, schemaVersion: 1 });
    const labels = { 'agones.dev/fleet': 'f', 'agones.dev/gameserverset': 'f-1' };
    const fleet = { apiVersion: 'agones.dev/v1', kind: 'Fleet', metadata: { ...gameServer('f').metadata, labels: {} }, spec: { replicas: 2, template: { spec: {} } } };
    at({ type: 'ResourceCreated', kind: 'Fleet', namespace: 'default', name: 'f', payload: { object: fleet } });
    for (const name of ['f-1-a', 'f-1-b']) {
      const gs = buildGameServer(name, { node: 'n', metadata: { uid: name, creationTimestamp: '', labels } });
      at({ type: 'GameServerCreated', kind: 'GameServer', namespace: 'default', name, payload: { object: gs } });
    }
    at({ type: 'GameServerAllocated', kind: 'GameServer', namespace: 'default', name: 'f-1-a', payload: { labels: {}, annotations: {}, source: 'local' } });
    at({ type: 'GameServerDeleted', kind: 'GameServer', namespace: 'default', name: 'f-1-b', payload: {} });
    return events;
  }
  const view = (model: ReadModel) =>
    JSON.stringify({ seq: model.lastSeq, kinds: ['Event', 'Fleet', 'GameServer'].map((kind) => model.list(kind)), expiry: model.nextEventExpiry() });
  const replay = (events: StoredEvent[]) => {
    const model = new ReadModel();
    for (const event of events) model.apply(event);
    return model;
  };

  it('carried on from any point, gives what a replay from the start gives; the original stays where it was', () => {
    const events = longerLog();
    const whole = view(replay(events));
    for (let k = 0; k <= events.length; k++) {
      const checkpoint = replay(events.slice(0, k));
      const before = view(checkpoint);
      const resumed = checkpoint.clone();
      for (const event of events.slice(k)) resumed.apply(event);
      expect(view(resumed)).toBe(whole);
      expect(view(checkpoint)).toBe(before);
    }
  });
});
