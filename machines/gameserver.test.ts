import { describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import { VirtualClock } from '../server/clock.js';
import { parseFeatureGates } from '../server/features.js';
import type { GameServerState, Health } from '../server/kinds/gameserver-types.js';
import type { GameServerStateChanged } from '../server/kinds/gameserver/events.js';
import { GAMESERVER_STATES } from '../server/kinds/gameserver-types.js';
import { gameServerEvent } from '../server/kinds/gameserver/events.js';
import { createCluster } from '../server/cluster.js';
import { defaultLocalGameServer } from '../server/sidecar/local-gameserver.js';
import { COMMAND_TYPES, type GameServerCommand, type LifecycleContext, decide, gameServerMachine, healthDeadline } from './gameserver.js';

const T0 = Date.UTC(2026, 0, 1);
const ctx = (over: Partial<LifecycleContext> = {}): LifecycleContext => ({ namespace: 'default', name: 'gs-1', now: T0, reservedUntil: null, ...over });
const RUNNING: GameServerState[] = ['Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated'];

/** A representative command of each type. */
function sample(type: string): GameServerCommand {
  switch (type) {
    case 'sdk.reserve':
      return { type, seconds: 5 };
    case 'controller.portsAllocated':
      return { type, hostPorts: [7001] };
    case 'controller.scheduled':
      return { type, nodeName: 'node-1', address: '127.0.0.1', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], ports: [{ name: 'default', port: 7001 }] };
    case 'controller.error':
    case 'controller.unhealthy':
    case 'controller.shutdown':
      return { type, message: 'because' };
    case 'allocator.allocate':
      return { type, event: gameServerEvent('GameServerAllocated', 'default', 'gs-1', { labels: {}, annotations: {}, source: 'local' }) };
    default:
      return { type } as GameServerCommand;
  }
}

const payloadOf = (events: Array<{ payload: unknown }>) => events.map((e) => e.payload as GameServerStateChanged);

describe('decide (the compiled lifecycle)', () => {
  it('walks the controller path PortAllocation -> Creating -> Starting -> Scheduled', () => {
    const ports = decide('PortAllocation', ctx(), sample('controller.portsAllocated'))!;
    expect(ports.state).toBe('Creating');
    expect(payloadOf(ports.events)[0]).toMatchObject({ state: 'Creating', reason: 'PortAllocation', message: 'Port allocated' });
    expect(decide('Creating', ctx(), sample('controller.podCreated'))!.state).toBe('Starting');
    const scheduled = decide('Starting', ctx(), sample('controller.scheduled'))!;
    expect(scheduled.state).toBe('Scheduled');
    expect(payloadOf(scheduled.events)[0]).toMatchObject({ nodeName: 'node-1', address: '127.0.0.1', reason: 'Scheduled' });
  });

  it('refuses controller steps out of order', () => {
    expect(decide('PortAllocation', ctx(), sample('controller.podCreated'))).toBeUndefined();
    expect(decide('Scheduled', ctx(), sample('controller.ready'))).toBeUndefined();
    expect(decide('Ready', ctx(), sample('controller.scheduled'))).toBeUndefined();
  });

  it('moves Creating to Error with the errored-at annotation', () => {
    const [event] = payloadOf(decide('Creating', ctx(), sample('controller.error'))!.events);
    expect(event).toMatchObject({ state: 'Error', eventType: 'Warning', message: 'because' });
    expect(event!.annotations?.['agones.dev/errored-at']).toBe('2026-01-01T00:00:00Z');
  });

  it('goes to Ready only through RequestReady and the controller', () => {
    expect(decide('Scheduled', ctx(), sample('sdk.ready'))!.state).toBe('RequestReady');
    expect(decide('RequestReady', ctx(), sample('controller.ready'))!.state).toBe('Ready');
  });

  it('accepts every SDK lifecycle call from each running state', () => {
    const expected: Record<string, GameServerState> = {
      'sdk.ready': 'RequestReady',
      'sdk.allocate': 'Allocated',
      'sdk.reserve': 'Reserved',
      'sdk.shutdown': 'Shutdown',
    };
    for (const from of RUNNING) {
      for (const [type, to] of Object.entries(expected)) {
        const decision = decide(from, ctx(), sample(type))!;
        expect(decision.state, `${from} + ${type}`).toBe(to);
        expect(payloadOf(decision.events)[0]!.state).toBe(to);
      }
    }
  });

  it('refuses SDK calls before the pod runs and after a final state', () => {
    for (const from of ['PortAllocation', 'Creating', 'Starting', 'Shutdown', 'Error', 'Unhealthy'] as GameServerState[]) {
      for (const type of ['sdk.ready', 'sdk.allocate', 'sdk.reserve', 'sdk.shutdown', 'health.failed']) {
        expect(decide(from, ctx(), sample(type)), `${from} + ${type}`).toBeUndefined();
      }
    }
  });

  it('annotates an SDK allocation with agones.dev/last-allocated', () => {
    const [event] = payloadOf(decide('Ready', ctx({ now: T0 + 1500 }), sample('sdk.allocate'))!.events);
    expect(event!.annotations).toEqual({ 'agones.dev/last-allocated': '2026-01-01T00:00:01.5Z' });
  });

  it('arms the reservation timer on Reserve(n), not on Reserve(0), and re-arms on a second Reserve', () => {
    const reserved = decide('Ready', ctx(), { type: 'sdk.reserve', seconds: 5 })!;
    expect(payloadOf(reserved.events)[0]!.reservedUntil).toBe('2026-01-01T00:00:05.000Z');
    expect(reserved.timers).toEqual([{ command: { type: 'timer.reservation' }, at: T0 + 5000 }]);
    expect(decide('Ready', ctx(), { type: 'sdk.reserve', seconds: 0 })!.timers).toEqual([]);
    const again = decide('Reserved', ctx({ now: T0 + 3000, reservedUntil: T0 + 5000 }), { type: 'sdk.reserve', seconds: 5 })!;
    expect(again.entered).toBe(true);
    expect(again.timers[0]!.at).toBe(T0 + 8000);
    const expiry = decide('Reserved', ctx({ now: T0 + 5000, reservedUntil: T0 + 5000 }), { type: 'timer.reservation' })!;
    expect(expiry.state).toBe('RequestReady');
    expect(payloadOf(expiry.events)[0]).toMatchObject({ cause: 'timer', reservedUntil: null });
    // An indefinite reservation has no end to expire.
    expect(decide('Reserved', ctx(), { type: 'timer.reservation' })).toBeUndefined();
  });

  it('lets the controller shut down or fail a server from any live state', () => {
    for (const from of ['PortAllocation', 'Creating', 'Starting', ...RUNNING] as GameServerState[]) {
      expect(decide(from, ctx(), sample('controller.shutdown'))!.state).toBe('Shutdown');
      expect(decide(from, ctx(), sample('controller.unhealthy'))!.state).toBe('Unhealthy');
    }
    expect(decide('Unhealthy', ctx(), sample('controller.shutdown'))!.state).toBe('Shutdown');
    expect(decide('Error', ctx(), sample('controller.shutdown'))!.state).toBe('Shutdown');
    expect(decide('Shutdown', ctx(), sample('controller.unhealthy'))).toBeUndefined();
  });

  it('applies an allocation from Ready or Allocated only', () => {
    for (const from of GAMESERVER_STATES) {
      const decision = decide(from, ctx(), sample('allocator.allocate'));
      expect(decision?.state, from).toBe(from === 'Ready' || from === 'Allocated' ? 'Allocated' : undefined);
    }
  });

  it('decides exactly what the XState machine does, for every state and command', () => {
    const path = (state: GameServerState) => (RUNNING.includes(state) ? { running: state } : state);
    const leaf = (value: unknown): string => (typeof value === 'string' ? value : Object.values(value as object)[0]);
    for (const state of GAMESERVER_STATES) {
      for (const reservedUntil of [null, T0 + 5000]) {
        for (const type of COMMAND_TYPES) {
          const command = type === 'timer.reservation' ? undefined : sample(type);
          const context = ctx({ reservedUntil });
          const ours = decide(state, context, command ?? { type: 'timer.reservation' });
          if (!command) continue; // delayed transitions are checked through the machine's timers below
          const snapshot = gameServerMachine.resolveState({ value: path(state), context });
          const [next, actions] = transition(gameServerMachine, snapshot, command);
          const emitted = (actions as Array<{ type: string; params?: unknown }>)
            .filter((a) => a.type === 'xstate.emit')
            .map((a) => (a.params as { event: { event: unknown } }).event.event);
          const moved = JSON.stringify(next.value) !== JSON.stringify(snapshot.value) || emitted.length > 0;
          expect(ours ? ours.state : undefined, `${state} + ${type}`).toBe(moved ? leaf(next.value) : undefined);
          expect(ours?.events ?? [], `${state} + ${type}`).toEqual(emitted);
        }
      }
    }
  });
});

describe('health deadline', () => {
  const HEALTH: Health = { disabled: false, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 };
  it('is the failureThreshold-th failing check after the last ping', () => {
    // Checks at 5s, 10s, 15s, 20s...; with no ping the 10s, 15s and 20s checks fail.
    expect(healthDeadline(HEALTH, 0, 0)).toBe(20_000);
    // A ping at 12s: the 20s check is the first to find it stale, so 20s, 25s, 30s fail.
    expect(healthDeadline(HEALTH, 0, 12_000)).toBe(30_000);
  });
});

describe('lifecycle timers and health on the virtual clock', () => {
  async function setup(health: Partial<Health> = {}) {
    const clock = new VirtualClock(T0);
    const gates = parseFeatureGates('');
    const cluster = createCluster({ db: ':memory:', clock, gates });
    const gs = defaultLocalGameServer({ uid: 'u', now: T0, gates });
    gs.spec.health = { ...gs.spec.health, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5, ...health };
    await cluster.commit([gameServerEvent('GameServerCreated', 'default', 'local', { object: gs })]);
    const state = () => cluster.gameServers.get('default', 'local')!.status.state;
    const settle = () => new Promise((r) => setImmediate(r));
    return { cluster, clock, state, settle };
  }

  it('returns a reservation to RequestReady when it expires, and not when Allocate came first', async () => {
    const { cluster, clock, state, settle } = await setup({ disabled: true });
    await cluster.actors.send('default', 'local', { type: 'sdk.reserve', seconds: 5 });
    clock.advance(4999);
    expect(state()).toBe('Reserved');
    clock.advance(1);
    await settle();
    expect(state()).toBe('RequestReady');
    await cluster.actors.send('default', 'local', { type: 'sdk.reserve', seconds: 5 });
    await cluster.actors.send('default', 'local', { type: 'sdk.allocate' });
    clock.advance(10_000);
    await settle();
    expect(state()).toBe('Allocated');
    expect(cluster.actors.pendingTimers).toBe(0);
    cluster.close();
  });

  it('turns a silent server Unhealthy at the deadline, and pings keep it healthy', async () => {
    const silent = await setup();
    silent.clock.advance(19_999);
    expect(silent.state()).toBe('Scheduled');
    silent.clock.advance(1);
    await silent.settle();
    expect(silent.state()).toBe('Unhealthy');
    silent.cluster.close();

    const pinging = await setup();
    for (let t = 0; t < 60; t++) {
      pinging.clock.advance(4000);
      pinging.cluster.health.ping('default/local');
    }
    await pinging.settle();
    expect(pinging.state()).toBe('Scheduled');
    pinging.cluster.close();
  });

  it('stops health checking once a server is Shutdown', async () => {
    const { cluster, clock, state, settle } = await setup();
    await cluster.actors.send('default', 'local', { type: 'sdk.shutdown' });
    clock.advance(60_000);
    await settle();
    expect(state()).toBe('Shutdown');
    expect(cluster.health.size).toBe(0);
    cluster.close();
  });
});
