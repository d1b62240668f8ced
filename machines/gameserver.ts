import { assign, emit, raise, setup } from 'xstate';
import type { NewEvent } from '../server/log/event-log.js';
import {
  type GameServerPort,
  type GameServerState,
  type GameServerStateChanged,
  type GameServerStatusPort,
  type Health,
  type NodeAddress,
  GAMESERVER_STATES,
  LAST_ALLOCATED_ANNOTATION,
  SIDECAR_RUNNING_STATES,
  gameServerEvent,
} from '../server/kinds/gameserver.js';

/**
 * The GameServer lifecycle, as the real cluster runs it (not the permissive local sdk-server):
 * Ready goes through RequestReady and the controller; a reservation returns to Ready when it
 * expires; a silent server turns Unhealthy; Unhealthy, Error and Shutdown are final for SDK calls.
 *
 * The machine decides and emits domain events (`{ type: 'domain', event }`); it never writes
 * state. Transitions carry the emits (entries do not), so booting an actor into the state a
 * record already has emits nothing.
 */

export interface GameServerMachineInput {
  namespace: string;
  name: string;
  /** The state the record is in: the actor boots straight into it. */
  state: GameServerState;
  /** Reservation end (ms since the epoch) when booting into Reserved; null = indefinitely. */
  reservedUntil: number | null;
  health: Health;
  now: () => number;
}

interface Context extends GameServerMachineInput {
  /** When health checking began (the sidecar started). */
  healthStartedAt: number;
  lastPingAt: number;
}

export interface ScheduledDetails {
  nodeName: string;
  address: string;
  addresses: NodeAddress[];
  ports: GameServerStatusPort[];
}

export type GameServerCommand =
  | { type: 'sdk.ready' }
  | { type: 'sdk.allocate' }
  | { type: 'sdk.reserve'; seconds: number }
  | { type: 'sdk.shutdown' }
  | { type: 'sdk.health' }
  | { type: 'controller.portsAllocated'; specPorts: GameServerPort[] }
  | { type: 'controller.podCreated' }
  | ({ type: 'controller.scheduled' } & ScheduledDetails)
  | { type: 'controller.ready'; address?: Partial<ScheduledDetails> }
  | { type: 'controller.error'; message: string }
  | { type: 'controller.unhealthy'; message: string }
  | { type: 'controller.shutdown'; message: string }
  /** The allocator's decision, already built as one atomic event (issue: allocation). */
  | { type: 'allocator.allocate'; event: NewEvent }
  | { type: 'health.failed' }
  /** Raised internally when the pod starts, so health checking begins with the sidecar. */
  | { type: 'sidecar.started' };

export interface DomainEmit {
  type: 'domain';
  event: NewEvent;
}

type Change = Omit<GameServerStateChanged, 'state'>;

function changed(context: Context, state: GameServerState, change: Change): DomainEmit {
  return {
    type: 'domain',
    event: gameServerEvent('GameServerStateChanged', context.namespace, context.name, { state, ...change }),
  };
}

function byController(reason: string, message: string, eventType: 'Normal' | 'Warning' = 'Normal'): Change {
  return { cause: 'controller', reason, message, eventType };
}

/** Next health deadline: the failureThreshold-th check after the last ping that finds it stale. */
export function healthDeadline(health: Health, healthStartedAt: number, lastPingAt: number): number {
  const period = health.periodSeconds * 1000;
  const firstCheck = healthStartedAt + health.initialDelaySeconds * 1000;
  // A check at time t fails when lastPing + period < t (strictly), as the sidecar's loop does.
  const staleAfter = lastPingAt + period;
  const firstFailing = staleAfter < firstCheck ? 0 : Math.floor((staleAfter - firstCheck) / period) + 1;
  return firstCheck + (firstFailing + health.failureThreshold - 1) * period;
}

export const gameServerMachine = setup({
  types: {
    context: {} as Context,
    input: {} as GameServerMachineInput,
    events: {} as GameServerCommand,
    emitted: {} as DomainEmit,
  },
  delays: {
    reservation: ({ context }) => Math.max(0, (context.reservedUntil ?? 0) - context.now()),
    healthDeadline: ({ context }) =>
      Math.max(0, healthDeadline(context.health, context.healthStartedAt, context.lastPingAt) - context.now()),
  },
  guards: {
    bootsInto: ({ context }, state: GameServerState) => context.state === state,
    reservationHasEnd: ({ context }) => context.reservedUntil !== null,
    healthDisabled: ({ context }) => context.health.disabled,
    sidecarRunningAtBoot: ({ context }) => SIDECAR_RUNNING_STATES.has(context.state),
  },
  actions: {
    // SDK calls: what the sidecar writes (pkg/sdkserver behaviour).
    emitRequestReady: emit(({ context }) =>
      changed(context, 'RequestReady', {
        cause: 'sdk',
        reason: 'RequestReady',
        message: 'SDK state change',
        eventType: 'Normal',
        reservedUntil: null,
      }),
    ),
    emitAllocated: emit(({ context }) =>
      changed(context, 'Allocated', {
        cause: 'sdk',
        reason: 'Allocated',
        message: 'SDK state change',
        eventType: 'Normal',
        reservedUntil: null,
        annotations: { [LAST_ALLOCATED_ANNOTATION]: new Date(context.now()).toISOString() },
      }),
    ),
    emitReserved: emit(({ context, event }) => {
      const seconds = event.type === 'sdk.reserve' ? event.seconds : 0;
      return changed(context, 'Reserved', {
        cause: 'sdk',
        reason: 'Reserved',
        message: seconds > 0 ? `SDK state change, for ${seconds}s` : 'SDK state change',
        eventType: 'Normal',
        reservedUntil: seconds > 0 ? new Date(context.now() + seconds * 1000).toISOString() : null,
      });
    }),
    emitShutdown: emit(({ context }) =>
      changed(context, 'Shutdown', {
        cause: 'sdk',
        reason: 'Shutdown',
        message: 'SDK state change',
        eventType: 'Normal',
        reservedUntil: null,
      }),
    ),
    emitHealthFailure: emit(({ context }) =>
      changed(context, 'Unhealthy', {
        cause: 'health',
        reason: 'Unhealthy',
        message: 'Health check failure',
        eventType: 'Warning',
        reservedUntil: null,
      }),
    ),
    emitReservationExpired: emit(({ context }) =>
      changed(context, 'RequestReady', {
        cause: 'timer',
        reason: 'RequestReady',
        message: 'Reservation expired',
        eventType: 'Normal',
        reservedUntil: null,
      }),
    ),
    rememberReservation: assign({
      reservedUntil: ({ context, event }) =>
        event.type === 'sdk.reserve' && event.seconds > 0 ? context.now() + event.seconds * 1000 : null,
    }),
    forgetReservation: assign({ reservedUntil: null }),

    // Controller steps (pkg/gameservers/controller.go).
    emitPortsAllocated: emit(({ context, event }) =>
      changed(context, 'Creating', {
        ...byController('PortAllocation', 'Port allocated'),
        ...(event.type === 'controller.portsAllocated' && { specPorts: event.specPorts }),
      }),
    ),
    emitPodCreated: emit(({ context }) =>
      changed(context, 'Starting', byController('Creating', `Pod ${context.name} created`)),
    ),
    emitScheduled: emit(({ context, event }) => {
      const details =
        event.type === 'controller.scheduled'
          ? { nodeName: event.nodeName, address: event.address, addresses: event.addresses, ports: event.ports }
          : {};
      return changed(context, 'Scheduled', { ...byController('Scheduled', 'Address and port populated'), ...details });
    }),
    emitControllerReady: emit(({ context, event }) =>
      changed(context, 'Ready', {
        ...byController('Ready', 'SDK.Ready() complete'),
        ...(event.type === 'controller.ready' && event.address),
      }),
    ),
    emitError: emit(({ context, event }) =>
      changed(context, 'Error', {
        ...byController('Error', event.type === 'controller.error' ? event.message : 'error', 'Warning'),
        annotations: { 'agones.dev/errored-at': new Date(context.now()).toISOString().replace(/\.\d+Z$/, 'Z') },
      }),
    ),
    emitControllerUnhealthy: emit(({ context, event }) =>
      changed(context, 'Unhealthy', {
        ...byController('Unhealthy', event.type === 'controller.unhealthy' ? event.message : '', 'Warning'),
        reservedUntil: null,
      }),
    ),
    emitControllerShutdown: emit(({ context, event }) =>
      changed(context, 'Shutdown', {
        ...byController('Shutdown', event.type === 'controller.shutdown' ? event.message : ''),
        reservedUntil: null,
      }),
    ),
    emitAllocation: emit(({ event }) => ({
      type: 'domain' as const,
      event: (event as Extract<GameServerCommand, { type: 'allocator.allocate' }>).event,
    })),

    // Health region.
    recordPing: assign({ lastPingAt: ({ context }) => context.now() }),
    startHealthClock: assign({
      healthStartedAt: ({ context }) => context.now(),
      lastPingAt: ({ context }) => context.now(),
    }),
    raiseHealthFailed: raise({ type: 'health.failed' }),
    raiseSidecarStarted: raise({ type: 'sidecar.started' }),
  },
}).createMachine({
  id: 'gameServer',
  type: 'parallel',
  context: ({ input }) => ({ ...input, healthStartedAt: input.now(), lastPingAt: input.now() }),
  states: {
    lifecycle: {
      initial: 'boot',
      states: {
        boot: {
          always: GAMESERVER_STATES.map((state) => ({
            guard: { type: 'bootsInto' as const, params: state },
            target: SIDECAR_RUNNING_STATES.has(state) ? `running.${state}` : state,
          })),
        },
        PortAllocation: {
          on: {
            'controller.portsAllocated': { target: 'Creating', actions: 'emitPortsAllocated' },
            'controller.unhealthy': { target: 'Unhealthy', actions: 'emitControllerUnhealthy' },
            'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' },
          },
        },
        Creating: {
          on: {
            'controller.podCreated': { target: 'Starting', actions: 'emitPodCreated' },
            'controller.error': { target: 'Error', actions: 'emitError' },
            'controller.unhealthy': { target: 'Unhealthy', actions: 'emitControllerUnhealthy' },
            'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' },
          },
        },
        Starting: {
          on: {
            'controller.scheduled': { target: 'running.Scheduled', actions: ['emitScheduled', 'raiseSidecarStarted'] },
            'controller.unhealthy': { target: 'Unhealthy', actions: 'emitControllerUnhealthy' },
            'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' },
          },
        },
        // The pod runs from here on: the sidecar takes SDK calls and writes whatever they ask,
        // as the real sidecar does (it does not check, say, Allocated -> Reserved).
        running: {
          initial: 'Scheduled',
          on: {
            'sdk.ready': { target: '.RequestReady', actions: ['forgetReservation', 'emitRequestReady'] },
            'sdk.allocate': { target: '.Allocated', actions: ['forgetReservation', 'emitAllocated'] },
            'sdk.reserve': { target: '.Reserved', reenter: true, actions: ['rememberReservation', 'emitReserved'] },
            'sdk.shutdown': { target: 'Shutdown', actions: ['forgetReservation', 'emitShutdown'] },
            'health.failed': { target: 'Unhealthy', actions: ['forgetReservation', 'emitHealthFailure'] },
            'controller.unhealthy': { target: 'Unhealthy', actions: ['forgetReservation', 'emitControllerUnhealthy'] },
            'controller.shutdown': { target: 'Shutdown', actions: ['forgetReservation', 'emitControllerShutdown'] },
          },
          states: {
            Scheduled: {},
            RequestReady: {
              on: { 'controller.ready': { target: 'Ready', actions: 'emitControllerReady' } },
            },
            Ready: {
              on: { 'allocator.allocate': { target: 'Allocated', actions: 'emitAllocation' } },
            },
            Reserved: {
              after: {
                reservation: {
                  guard: 'reservationHasEnd',
                  target: 'RequestReady',
                  actions: ['forgetReservation', 'emitReservationExpired'],
                },
              },
            },
            Allocated: {
              on: { 'allocator.allocate': { target: 'Allocated', actions: 'emitAllocation' } },
            },
          },
        },
        Shutdown: { type: 'final' },
        Error: {
          on: { 'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' } },
        },
        Unhealthy: {
          on: { 'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' } },
        },
      },
    },
    health: {
      initial: 'boot',
      states: {
        boot: {
          always: [
            { guard: 'healthDisabled', target: 'off' },
            { guard: 'sidecarRunningAtBoot', target: 'watching' },
            { target: 'notStarted' },
          ],
        },
        notStarted: { on: { 'sidecar.started': { target: 'watching', actions: 'startHealthClock' } } },
        watching: {
          after: { healthDeadline: { target: 'failed', actions: 'raiseHealthFailed' } },
          on: { 'sdk.health': { target: 'watching', reenter: true, actions: 'recordPing' } },
        },
        failed: {},
        off: {},
      },
    },
  },
});
