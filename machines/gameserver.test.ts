import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { VirtualClock } from '../server/clock.js';
import type { GameServerState, GameServerStateChanged, Health } from '../server/kinds/gameserver.js';
import { type GameServerCommand, gameServerMachine, healthDeadline } from './gameserver.js';

const HEALTH: Health = { disabled: false, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 5 };
const NO_HEALTH: Health = { ...HEALTH, disabled: true };

function boot(state: GameServerState, options: { health?: Health; reservedUntil?: number | null } = {}) {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1));
  const emitted: Array<{ type: string; payload: GameServerStateChanged }> = [];
  const actor = createActor(gameServerMachine, {
    clock,
    input: {
      namespace: 'default',
      name: 'gs-1',
      state,
      reservedUntil: options.reservedUntil ?? null,
      health: options.health ?? NO_HEALTH,
      now: () => clock.now(),
    },
  });
  actor.on('domain', ({ event }) => emitted.push(event as { type: string; payload: GameServerStateChanged }));
  actor.start();
  const send = (command: GameServerCommand) => {
    const before = emitted.length;
    actor.send(command);
    return emitted.slice(before);
  };
  const states = () => emitted.map((e) => e.payload.state);
  return { actor, clock, emitted, send, states };
}

const ALL_STATES: GameServerState[] = [
  'PortAllocation',
  'Creating',
  'Starting',
  'Scheduled',
  'RequestReady',
  'Ready',
  'Shutdown',
  'Error',
  'Unhealthy',
  'Reserved',
  'Allocated',
];
const RUNNING: GameServerState[] = ['Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated'];

describe('GameServer statechart', () => {
  it('boots into the state of the record without emitting anything', () => {
    for (const state of ALL_STATES) {
      const { emitted, actor } = boot(state, { health: HEALTH });
      expect(emitted).toEqual([]);
      expect(JSON.stringify(actor.getSnapshot().value)).toContain(state);
    }
  });

  it('walks the controller path PortAllocation -> Creating -> Starting -> Scheduled', () => {
    const { send, states } = boot('PortAllocation');
    send({
      type: 'controller.portsAllocated',
      specPorts: [{ name: 'default', portPolicy: 'Dynamic', containerPort: 7654, hostPort: 7001, protocol: 'UDP' }],
    });
    send({ type: 'controller.podCreated' });
    const [scheduled] = send({
      type: 'controller.scheduled',
      nodeName: 'node-1',
      address: '10.0.0.1',
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      ports: [{ name: 'default', port: 7001 }],
    });
    expect(states()).toEqual(['Creating', 'Starting', 'Scheduled']);
    expect(scheduled!.payload).toMatchObject({ nodeName: 'node-1', address: '10.0.0.1', reason: 'Scheduled' });
  });

  it('refuses controller steps out of order', () => {
    const { send } = boot('PortAllocation');
    expect(send({ type: 'controller.podCreated' })).toEqual([]);
    expect(send({ type: 'controller.ready' })).toEqual([]);
  });

  it('moves Creating to Error with the errored-at annotation', () => {
    const { send } = boot('Creating');
    const [event] = send({ type: 'controller.error', message: 'Pod is invalid' });
    expect(event!.payload).toMatchObject({ state: 'Error', eventType: 'Warning', message: 'Pod is invalid' });
    expect(event!.payload.annotations?.['agones.dev/errored-at']).toBe('2026-01-01T00:00:00Z');
  });

  it('goes to Ready only through RequestReady and the controller', () => {
    const { send, states } = boot('Scheduled');
    send({ type: 'sdk.ready' });
    expect(states()).toEqual(['RequestReady']);
    send({ type: 'controller.ready' });
    expect(states()).toEqual(['RequestReady', 'Ready']);
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
        const { send } = boot(from);
        const command = (type === 'sdk.reserve' ? { type, seconds: 5 } : { type }) as GameServerCommand;
        const [event] = send(command);
        expect(event?.payload.state, `${from} + ${type}`).toBe(to);
      }
    }
  });

  it('refuses SDK calls before the pod runs and after a final state', () => {
    const refusing: GameServerState[] = ['PortAllocation', 'Creating', 'Starting', 'Shutdown', 'Error', 'Unhealthy'];
    for (const from of refusing) {
      const { send } = boot(from);
      for (const command of [
        { type: 'sdk.ready' },
        { type: 'sdk.allocate' },
        { type: 'sdk.reserve', seconds: 5 },
        { type: 'sdk.shutdown' },
      ] as GameServerCommand[]) {
        expect(send(command), `${from} + ${command.type}`).toEqual([]);
      }
    }
  });

  it('annotates an SDK allocation with agones.dev/last-allocated', () => {
    const { send, clock } = boot('Ready');
    clock.advance(1500);
    const [event] = send({ type: 'sdk.allocate' });
    expect(event!.payload.annotations).toEqual({ 'agones.dev/last-allocated': '2026-01-01T00:00:01.500Z' });
  });

  it('returns a reservation to Ready via RequestReady when it expires, as an event', () => {
    const { send, clock, states, emitted } = boot('Ready');
    const [reserved] = send({ type: 'sdk.reserve', seconds: 5 });
    expect(reserved!.payload.reservedUntil).toBe('2026-01-01T00:00:05.000Z');
    clock.advance(4999);
    expect(states()).toEqual(['Reserved']);
    clock.advance(1);
    expect(states()).toEqual(['Reserved', 'RequestReady']);
    expect(emitted[1]!.payload).toMatchObject({ cause: 'timer', reservedUntil: null });
  });

  it('holds a zero-second reservation forever', () => {
    const { send, clock, states } = boot('Ready');
    const [reserved] = send({ type: 'sdk.reserve', seconds: 0 });
    expect(reserved!.payload.reservedUntil).toBeNull();
    clock.advance(3_600_000);
    expect(states()).toEqual(['Reserved']);
    expect(clock.pending).toBe(0);
  });

  it('restarts the reservation timer on a second Reserve and cancels it on Allocate', () => {
    const first = boot('Ready');
    first.send({ type: 'sdk.reserve', seconds: 5 });
    first.clock.advance(3000);
    first.send({ type: 'sdk.reserve', seconds: 5 });
    first.clock.advance(3000);
    expect(first.states()).toEqual(['Reserved', 'Reserved']);
    first.clock.advance(2000);
    expect(first.states()).toEqual(['Reserved', 'Reserved', 'RequestReady']);

    const second = boot('Ready');
    second.send({ type: 'sdk.reserve', seconds: 5 });
    second.send({ type: 'sdk.allocate' });
    second.clock.advance(10_000);
    expect(second.states()).toEqual(['Reserved', 'Allocated']);
  });

  it('re-arms the remaining reservation when booted from a Reserved record', () => {
    const clockStart = Date.UTC(2026, 0, 1);
    const { clock, states } = boot('Reserved', { reservedUntil: clockStart + 2000 });
    clock.advance(1999);
    expect(states()).toEqual([]);
    clock.advance(1);
    expect(states()).toEqual(['RequestReady']);
  });

  it('computes the health deadline from the check loop', () => {
    // Checks at 5s, 10s, 15s, 20s...; with no ping the 10s, 15s and 20s checks fail.
    expect(healthDeadline(HEALTH, 0, 0)).toBe(20_000);
    // A ping at 12s: the 20s check is the first to find it stale, so 20s, 25s, 30s fail.
    expect(healthDeadline(HEALTH, 0, 12_000)).toBe(30_000);
  });

  it('turns a silent server Unhealthy, and pings keep it healthy', () => {
    const silent = boot('Scheduled', { health: HEALTH });
    silent.clock.advance(19_999);
    expect(silent.states()).toEqual([]);
    silent.clock.advance(1);
    expect(silent.emitted[0]!.payload).toMatchObject({
      state: 'Unhealthy',
      cause: 'health',
      message: 'Health check failure',
      eventType: 'Warning',
    });

    const pinging = boot('Scheduled', { health: HEALTH });
    for (let t = 0; t < 60; t++) {
      pinging.clock.advance(4000);
      pinging.send({ type: 'sdk.health' });
    }
    expect(pinging.states()).toEqual([]);
  });

  it('starts health checking when the pod is scheduled, not before', () => {
    const { send, clock, states } = boot('Starting', { health: HEALTH });
    clock.advance(60_000);
    expect(states()).toEqual([]);
    send({ type: 'controller.scheduled', nodeName: 'n', address: 'a', addresses: [], ports: [] });
    clock.advance(20_000);
    expect(states()).toEqual(['Scheduled', 'Unhealthy']);
  });

  it('never leaves Unhealthy or Shutdown through the SDK; a health failure after Shutdown changes nothing', () => {
    const { send, clock, states } = boot('Ready', { health: HEALTH });
    send({ type: 'sdk.shutdown' });
    clock.advance(60_000);
    send({ type: 'sdk.ready' });
    expect(states()).toEqual(['Shutdown']);
  });

  it('lets the controller shut down or fail a server from any live state', () => {
    for (const from of ['PortAllocation', 'Creating', 'Starting', ...RUNNING] as GameServerState[]) {
      const { send } = boot(from);
      expect(send({ type: 'controller.shutdown', message: 'scale down' })[0]?.payload.state).toBe('Shutdown');
      const second = boot(from);
      expect(second.send({ type: 'controller.unhealthy', message: 'Pod is missing' })[0]?.payload.state).toBe(
        'Unhealthy',
      );
    }
    // Unhealthy and Error are cleaned up by their set through Shutdown.
    expect(boot('Unhealthy').send({ type: 'controller.shutdown', message: 'x' })[0]?.payload.state).toBe('Shutdown');
    expect(boot('Error').send({ type: 'controller.shutdown', message: 'x' })[0]?.payload.state).toBe('Shutdown');
    expect(boot('Shutdown').send({ type: 'controller.unhealthy', message: 'x' })).toEqual([]);
  });

  it('applies an allocation from Ready or Allocated only', () => {
    const allocation = {
      type: 'GameServerStateChanged',
      kind: 'GameServer',
      namespace: 'default',
      name: 'gs-1',
      payload: { state: 'Allocated' },
    };
    for (const from of ALL_STATES) {
      const { send } = boot(from);
      const emitted = send({ type: 'allocator.allocate', event: allocation });
      expect(emitted.length, from).toBe(from === 'Ready' || from === 'Allocated' ? 1 : 0);
    }
  });
});
