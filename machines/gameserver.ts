import { type AnyStateNode, enqueueActions, setup } from 'xstate';
import type { NewEvent } from '../server/log/event-log.js';
import { LAST_ALLOCATED_ANNOTATION } from '../server/kinds/gameserver/gameserver.js';
import { type GameServerState, type GameServerStatusPort, type Health, type NodeAddress, GAMESERVER_STATES } from '../server/kinds/gameserver-types.js';
import { type GameServerStateChanged, gameServerEvent } from '../server/kinds/gameserver/events.js';
import { rfc3339Nano } from '../server/kinds/meta.js';

/**
 * The GameServer lifecycle, as the real cluster runs it (not the permissive local sdk-server):
 * Ready goes through RequestReady and the controller; a reservation returns to Ready when it
 * expires; a silent server turns Unhealthy; Unhealthy, Error and Shutdown are final for SDK calls.
 *
 * The statechart below (XState) is the one definition of the lifecycle. A GameServer's state
 * lives in its record, so the runtime does not keep an XState actor resident per GameServer (an
 * actor costs kilobytes and tens of microseconds per event, which a fleet of 100,000 cannot
 * afford): `decide` runs a transition table compiled from this machine, with the same action
 * functions, and a test holds it to what XState itself does for every state and command.
 */

export interface LifecycleContext {
  namespace: string;
  name: string;
  /** The decision's time (ms since the epoch), from the injected clock. */
  now: number;
  /** Reservation end (ms since the epoch); null = none or indefinite. */
  reservedUntil: number | null;
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
  | { type: 'controller.portsAllocated'; hostPorts: number[] }
  | { type: 'controller.podCreated' }
  | ({ type: 'controller.scheduled' } & ScheduledDetails)
  | { type: 'controller.ready'; address?: Partial<ScheduledDetails> }
  | { type: 'controller.error'; message: string }
  | { type: 'controller.unhealthy'; message: string }
  | { type: 'controller.shutdown'; message: string }
  /** The allocator's decision, already built as one atomic event. */
  | { type: 'allocator.allocate'; event: NewEvent }
  /** The sidecar's health loop found too many failed checks. */
  | { type: 'health.failed' }
  /** A delayed transition falling due (the machine's `after`). */
  | { type: 'timer.reservation' };

/** What one action does: at most one event, and perhaps a new reservation end. */
interface Effect {
  event?: NewEvent;
  reservedUntil?: number | null;
}
type Action = (context: LifecycleContext, command: GameServerCommand) => Effect;

type Change = Omit<GameServerStateChanged, 'state'>;

function changed(context: LifecycleContext, state: GameServerState, change: Change): Effect {
  return { event: gameServerEvent('GameServerStateChanged', context.namespace, context.name, { state, ...change }) };
}

function byController(reason: string, message: string, eventType: 'Normal' | 'Warning' = 'Normal'): Change {
  return { cause: 'controller', reason, message, eventType };
}

function sdkChange(reason: string, message = 'SDK state change'): Change {
  return { cause: 'sdk', reason, message, eventType: 'Normal', reservedUntil: null };
}

const seconds = (command: GameServerCommand) => (command.type === 'sdk.reserve' ? command.seconds : 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** The machine's actions as plain functions: XState runs them in tests, `decide` everywhere else. */
const ACTIONS = {
  emitRequestReady: (c) => changed(c, 'RequestReady', sdkChange('RequestReady')),
  emitAllocated: (c) =>
    changed(c, 'Allocated', { ...sdkChange('Allocated'), annotations: { [LAST_ALLOCATED_ANNOTATION]: rfc3339Nano(c.now) } }),
  emitReserved: (c, e) =>
    changed(c, 'Reserved', {
      ...sdkChange('Reserved', seconds(e) > 0 ? `SDK state change, for ${seconds(e)}s` : 'SDK state change'),
      reservedUntil: seconds(e) > 0 ? iso(c.now + seconds(e) * 1000) : null,
    }),
  emitShutdown: (c) => changed(c, 'Shutdown', sdkChange('Shutdown')),
  emitHealthFailure: (c) =>
    changed(c, 'Unhealthy', { cause: 'health', reason: 'Unhealthy', message: 'Health check failure', eventType: 'Warning', reservedUntil: null }),
  emitReservationExpired: (c) =>
    changed(c, 'RequestReady', { cause: 'timer', reason: 'RequestReady', message: 'Reservation expired', eventType: 'Normal', reservedUntil: null }),
  rememberReservation: (c, e) => ({ reservedUntil: seconds(e) > 0 ? c.now + seconds(e) * 1000 : null }),
  forgetReservation: () => ({ reservedUntil: null }),
  emitPortsAllocated: (c, e) =>
    changed(c, 'Creating', {
      ...byController('PortAllocation', 'Port allocated'),
      ...(e.type === 'controller.portsAllocated' && { hostPorts: e.hostPorts }),
    }),
  emitPodCreated: (c) => changed(c, 'Starting', byController('Creating', `Pod ${c.name} created`)),
  emitScheduled: (c, e) =>
    changed(c, 'Scheduled', {
      ...byController('Scheduled', 'Address and port populated'),
      ...(e.type === 'controller.scheduled' && { nodeName: e.nodeName, address: e.address, addresses: e.addresses, ports: e.ports }),
    }),
  emitControllerReady: (c, e) =>
    changed(c, 'Ready', { ...byController('Ready', 'SDK.Ready() complete'), ...(e.type === 'controller.ready' && e.address) }),
  emitError: (c, e) =>
    changed(c, 'Error', {
      ...byController('Error', e.type === 'controller.error' ? e.message : 'error', 'Warning'),
      annotations: { 'agones.dev/errored-at': iso(c.now).replace(/\.\d+Z$/, 'Z') },
    }),
  emitControllerUnhealthy: (c, e) =>
    changed(c, 'Unhealthy', {
      ...byController('Unhealthy', e.type === 'controller.unhealthy' ? e.message : '', 'Warning'),
      reservedUntil: null,
    }),
  emitControllerShutdown: (c, e) =>
    changed(c, 'Shutdown', { ...byController('Shutdown', e.type === 'controller.shutdown' ? e.message : ''), reservedUntil: null }),
  emitAllocation: (_c, e) => (e.type === 'allocator.allocate' ? { event: e.event } : {}),
} satisfies Record<string, Action>;
type ActionName = keyof typeof ACTIONS;
const ACTION_TABLE: Record<ActionName, Action> = ACTIONS;

const GUARDS = {
  reservationHasEnd: (c: LifecycleContext) => c.reservedUntil !== null,
};
const DELAYS = {
  reservation: (c: LifecycleContext) => Math.max(0, (c.reservedUntil ?? 0) - c.now),
};

type MachineContext = LifecycleContext;
interface DomainEmitted {
  type: 'domain';
  event: NewEvent;
}

/** Wraps a plain action as an XState action: the effect's event is emitted, its reservation assigned. */
function asXState(name: ActionName) {
  return enqueueActions<
    MachineContext,
    GameServerCommand,
    undefined,
    GameServerCommand,
    never,
    never,
    never,
    'reservation',
    DomainEmitted
  >(({ context, event, enqueue }) => {
      const effect = ACTION_TABLE[name](context, event);
      if (effect.event) enqueue.emit({ type: 'domain', event: effect.event });
      if ('reservedUntil' in effect) enqueue.assign({ reservedUntil: effect.reservedUntil ?? null });
  });
}

const xstateActions = Object.fromEntries((Object.keys(ACTIONS) as ActionName[]).map((n) => [n, asXState(n)])) as {
  [K in ActionName]: ReturnType<typeof asXState>;
};

export const gameServerMachine = setup({
  types: {
    context: {} as MachineContext,
    input: {} as MachineContext,
    events: {} as GameServerCommand,
    emitted: {} as DomainEmitted,
  },
  delays: { reservation: ({ context }) => DELAYS.reservation(context) },
  guards: { reservationHasEnd: ({ context }) => GUARDS.reservationHasEnd(context) },
  actions: xstateActions,
}).createMachine({
  id: 'gameServer',
  initial: 'PortAllocation',
  context: ({ input }) => ({ ...input }),
  states: {
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
        'controller.scheduled': { target: 'running.Scheduled', actions: 'emitScheduled' },
        'controller.unhealthy': { target: 'Unhealthy', actions: 'emitControllerUnhealthy' },
        'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' },
      },
    },
    // The pod runs from here on: the sidecar takes SDK calls and writes whatever they ask, as
    // the real sidecar does (it does not check, say, Allocated -> Reserved).
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
        RequestReady: { on: { 'controller.ready': { target: 'Ready', actions: 'emitControllerReady' } } },
        Ready: { on: { 'allocator.allocate': { target: 'Allocated', actions: 'emitAllocation' } } },
        Reserved: {
          after: {
            reservation: {
              guard: 'reservationHasEnd',
              target: 'RequestReady',
              actions: ['forgetReservation', 'emitReservationExpired'],
            },
          },
        },
        Allocated: { on: { 'allocator.allocate': { target: 'Allocated', actions: 'emitAllocation' } } },
      },
    },
    Shutdown: {},
    Error: { on: { 'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' } } },
    Unhealthy: { on: { 'controller.shutdown': { target: 'Shutdown', actions: 'emitControllerShutdown' } } },
  },
});

// ---------------------------------------------------------------------------------------------
// The compiled form: (state, command type) -> transition, read off the machine's state nodes.

interface CompiledTransition {
  target: GameServerState;
  actions: ActionName[];
  guard?: keyof typeof GUARDS;
  /** Whether the target state is entered again even when it is the source (timers restart). */
  reenter: boolean;
}

interface CompiledState {
  on: Map<string, CompiledTransition>;
  /** Delayed transitions: fire as `timer.<delay>` commands. */
  after: Array<{ delay: keyof typeof DELAYS; command: string; guard?: keyof typeof GUARDS }>;
}

/** The leaf a state node resolves to (a compound state enters its initial child). */
function leafOf(node: AnyStateNode): GameServerState {
  let current = node;
  while (current.type === 'compound') current = current.states[(current.config.initial as string)]!;
  return current.key as GameServerState;
}

function compile(): Map<GameServerState, CompiledState> {
  const table = new Map<GameServerState, CompiledState>();
  for (const state of GAMESERVER_STATES) {
    const path = ['Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated'].includes(state) ? `running.${state}` : state;
    const node = gameServerMachine.getStateNodeById(`gameServer.${path}`);
    const compiled: CompiledState = { on: new Map(), after: [] };
    // The deepest state's transitions win over its ancestors', as in any statechart.
    for (let n: AnyStateNode | undefined = node; n && n !== gameServerMachine.root; n = n.parent) {
      for (const [type, transitions] of Object.entries(n.on)) {
        if (compiled.on.has(type) || type.startsWith('xstate.after')) continue;
        const t = transitions[0]!;
        compiled.on.set(type, {
          target: t.target ? leafOf(t.target[0]!) : state,
          actions: t.actions.map((a) => String(a)) as ActionName[],
          ...(t.guard && { guard: String(t.guard) as keyof typeof GUARDS }),
          reenter: t.reenter === true,
        });
      }
    }
    for (const t of node.after) {
      const delay = String(t.delay) as keyof typeof DELAYS;
      const command = `timer.${delay}`;
      compiled.after.push({ delay, command, ...(t.guard && { guard: String(t.guard) as keyof typeof GUARDS }) });
      compiled.on.set(command, {
        target: t.target ? leafOf(t.target[0]!) : state,
        actions: t.actions.map((a) => String(a)) as ActionName[],
        ...(t.guard && { guard: String(t.guard) as keyof typeof GUARDS }),
        reenter: false,
      });
    }
    table.set(state, compiled);
  }
  return table;
}

const TABLE = compile();

export interface Decision {
  state: GameServerState;
  events: NewEvent[];
  reservedUntil: number | null;
  /** Whether the state was entered (again): its timers start over. */
  entered: boolean;
  /** Delayed transitions of the state now armed: the command to send and when (ms since the epoch). */
  timers: Array<{ command: GameServerCommand; at: number }>;
}

/** The timers a GameServer in `state` has armed (at boot, or after entering it). */
export function timersOf(state: GameServerState, context: LifecycleContext): Decision['timers'] {
  const timers: Decision['timers'] = [];
  for (const after of TABLE.get(state)?.after ?? []) {
    if (after.guard && !GUARDS[after.guard](context)) continue;
    timers.push({ command: { type: after.command } as GameServerCommand, at: context.now + DELAYS[after.delay](context) });
  }
  return timers;
}

/**
 * Decides what a command does to a GameServer in `state`: the events to append, or undefined
 * when the machine refuses (no transition for it in that state).
 */
export function decide(state: GameServerState, context: LifecycleContext, command: GameServerCommand): Decision | undefined {
  const transition = TABLE.get(state)?.on.get(command.type);
  if (!transition) return undefined;
  if (transition.guard && !GUARDS[transition.guard](context)) return undefined;
  let current = context;
  const events: NewEvent[] = [];
  for (const name of transition.actions) {
    const effect = ACTION_TABLE[name](current, command);
    if (effect.event) events.push(effect.event);
    if ('reservedUntil' in effect) current = { ...current, reservedUntil: effect.reservedUntil ?? null };
  }
  const entered = transition.target !== state || transition.reenter;
  return {
    state: transition.target,
    events,
    reservedUntil: current.reservedUntil,
    entered,
    timers: entered ? timersOf(transition.target, current) : [],
  };
}

/** Every command type the machine knows, for tests and tools. */
export const COMMAND_TYPES = [...new Set([...TABLE.values()].flatMap((s) => [...s.on.keys()]))].sort();

/** Next health deadline: the failureThreshold-th check after the last ping that finds it stale. */
export function healthDeadline(health: Health, healthStartedAt: number, lastPingAt: number): number {
  // Only a GameServer with health checking on is watched, and its defaults set every number.
  const period = (health.periodSeconds ?? 0) * 1000;
  const firstCheck = healthStartedAt + (health.initialDelaySeconds ?? 0) * 1000;
  // A check at time t fails when lastPing + period < t (strictly), as the sidecar's loop does.
  const staleAfter = lastPingAt + period;
  const firstFailing = staleAfter < firstCheck ? 0 : Math.floor((staleAfter - firstCheck) / period) + 1;
  return firstCheck + (firstFailing + (health.failureThreshold ?? 0) - 1) * period;
}
