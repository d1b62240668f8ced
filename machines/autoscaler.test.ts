import { describe, expect, it, vi } from 'vitest';
import {
  type AggregatedCapacity,
  type AutoscaledFleet,
  AutoscalerError,
  ChainPolicyError,
  type ComputeOptions,
  type GameServerCapacity,
  bufferPolicy,
  chainEntryChanged,
  computeDesiredReplicas,
  isScheduleActive,
  lastAppliedPolicy,
  counterOrListPolicy,
  parseBufferSize,
  webhookPolicy,
} from './autoscaler.js';
import type { AutoscalerPolicy, BufferPolicy, CapacityPolicy, SchedulePolicy } from '../server/kinds/fleetautoscaler/fleetautoscaler.js';

function fleetWith(status: AutoscaledFleet['status'], spec: AutoscaledFleet['spec'] = {}): AutoscaledFleet {
  return { spec, status };
}

describe('bufferPolicy (§7.5)', () => {
  const cases: Array<{ name: string; allocated: number; policy: BufferPolicy; replicas: number; limited: boolean }> = [
    { name: 'W1: 8 allocated, 30% → ceil(800/70) = 12', allocated: 8, policy: { bufferSize: '30%', minReplicas: 1, maxReplicas: 100 }, replicas: 12, limited: false },
    { name: 'W1: 8 allocated + 5 = 13, capped at max 10', allocated: 8, policy: { bufferSize: 5, maxReplicas: 10 }, replicas: 10, limited: true },
    { name: 'absolute buffer on an idle fleet', allocated: 0, policy: { bufferSize: 5, minReplicas: 0, maxReplicas: 100 }, replicas: 5, limited: false },
    { name: 'absolute buffer below the minimum', allocated: 2, policy: { bufferSize: 5, minReplicas: 10, maxReplicas: 20 }, replicas: 10, limited: true },
    { name: 'exactly the minimum is not limited', allocated: 5, policy: { bufferSize: 5, minReplicas: 10, maxReplicas: 20 }, replicas: 10, limited: false },
    { name: 'exactly the maximum is not limited', allocated: 15, policy: { bufferSize: 5, minReplicas: 10, maxReplicas: 20 }, replicas: 20, limited: false },
    { name: 'percent of nothing allocated is 0, raised to the minimum', allocated: 0, policy: { bufferSize: '50%', minReplicas: 2, maxReplicas: 10 }, replicas: 2, limited: true },
    { name: 'percent rounds up: 7 allocated, 25% → ceil(9.33) = 10', allocated: 7, policy: { bufferSize: '25%', minReplicas: 1, maxReplicas: 100 }, replicas: 10, limited: false },
    { name: 'percent that divides evenly: 9 allocated, 10% → 10', allocated: 9, policy: { bufferSize: '10%', minReplicas: 1, maxReplicas: 100 }, replicas: 10, limited: false },
    { name: 'percent rounds up: 1 allocated, 1% → ceil(100/99) = 2', allocated: 1, policy: { bufferSize: '1%', minReplicas: 1, maxReplicas: 100 }, replicas: 2, limited: false },
    { name: '99% of 1 allocated → 100, capped at 50', allocated: 1, policy: { bufferSize: '99%', minReplicas: 1, maxReplicas: 50 }, replicas: 50, limited: true },
    { name: 'example manifest (5, 10..20) with 12 allocated → 17', allocated: 12, policy: { bufferSize: 5, minReplicas: 10, maxReplicas: 20 }, replicas: 17, limited: false },
  ];
  it.each(cases)('$name', ({ allocated, policy, replicas, limited }) => {
    expect(bufferPolicy(fleetWith({ replicas: 20, allocatedReplicas: allocated }), policy)).toEqual({ replicas, limited });
  });

  it('counts only Allocated servers: Ready and Reserved ones do not make it scale up', () => {
    const fleet = fleetWith({ replicas: 10, readyReplicas: 5, reservedReplicas: 3, allocatedReplicas: 2 });
    expect(bufferPolicy(fleet, { bufferSize: 2, maxReplicas: 100 })).toEqual({ replicas: 4, limited: false });
  });

  it('treats a fleet without status as nothing allocated', () => {
    expect(bufferPolicy({}, { bufferSize: 3, maxReplicas: 10 })).toEqual({ replicas: 3, limited: false });
  });

  it.each([
    ['5', 'invalid value for IntOrString: invalid type: string is not a percentage'],
    ['x%', 'invalid value for IntOrString: invalid value "x%"'],
    ['100%', 'bufferSize should be between 1% and 99%'],
    ['0%', 'bufferSize should be between 1% and 99%'],
  ])('rejects the buffer size %j', (bufferSize, message) => {
    expect(() => bufferPolicy(fleetWith({ allocatedReplicas: 1 }), { bufferSize, maxReplicas: 10 })).toThrow(new AutoscalerError(message));
  });
});

describe('parseBufferSize', () => {
  it('reads numbers and integer percentages', () => {
    expect(parseBufferSize(5)).toEqual({ kind: 'int', value: 5 });
    expect(parseBufferSize('30%')).toEqual({ kind: 'percent', value: 30 });
    expect(parseBufferSize('+05%')).toEqual({ kind: 'percent', value: 5 });
    expect(() => parseBufferSize(2.5)).toThrow(AutoscalerError);
    expect(() => parseBufferSize('2.5%')).toThrow(AutoscalerError);
  });
});

describe('webhookPolicy (§7.7)', () => {
  const fleet = fleetWith({ replicas: 7 }, { replicas: 9 });
  it('takes the answer as it is when scale is true, 0 and values beyond any limit included', () => {
    expect(webhookPolicy(fleet, { scale: true, replicas: 3 })).toEqual({ replicas: 3, limited: false });
    expect(webhookPolicy(fleet, { scale: true, replicas: 0 })).toEqual({ replicas: 0, limited: false });
    expect(webhookPolicy(fleet, { scale: true, replicas: 5000 })).toEqual({ replicas: 5000, limited: false });
  });
  it('keeps the current total (status.replicas, not spec.replicas) when scale is false', () => {
    expect(webhookPolicy(fleet, { scale: false, replicas: 100 })).toEqual({ replicas: 7, limited: false });
  });
});

// -- Counter and List -----------------------------------------------------------------------------

const ROOMS_TEMPLATE: AutoscaledFleet['spec'] = { template: { spec: { counters: { rooms: { count: 0, capacity: 10 } } } } };

function roomsFleet(aggregate: AggregatedCapacity, replicas: number, template = ROOMS_TEMPLATE): AutoscaledFleet {
  return { spec: template, status: { replicas, counters: { rooms: aggregate } } };
}

function counterServer(count: number, capacity: number): GameServerCapacity {
  return { status: { counters: { rooms: { count, capacity } } } };
}

function listServer(values: number, capacity: number): GameServerCapacity {
  return { status: { lists: { players: { capacity, values: Array.from({ length: values }, (_, i) => `p${i}`) } } } };
}

const BARE_SERVER: GameServerCapacity = { status: {} };

/** W2/W3's fleet: 3 replicas, 25 of 30 rooms used, 20 of them on allocated servers. */
const W2_FLEET = roomsFleet({ count: 25, capacity: 30, allocatedCount: 20 }, 3);

/** Five servers of 10 rooms, 15 used, in deletion order: three empty ones first. */
const FIVE_SERVERS = [counterServer(0, 10), counterServer(0, 10), counterServer(0, 10), counterServer(5, 10), counterServer(10, 10)];
const FIVE_FLEET = roomsFleet({ count: 15, capacity: 50, allocatedCount: 10 }, 5);

describe('counterOrListPolicy (§7.6)', () => {
  const cases: Array<{
    name: string;
    fleet: AutoscaledFleet;
    policy: CapacityPolicy;
    order?: GameServerCapacity[];
    replicas: number;
    limited: boolean;
  }> = [
    { name: 'W2: available 5 < buffer 10 → +ceil(5/10) = 1 → 4', fleet: W2_FLEET, policy: { key: 'rooms', bufferSize: 10, minCapacity: 0, maxCapacity: 100 }, replicas: 4, limited: false },
    { name: 'W2: 30 + 10 > maxCapacity 35 → +floor(5/10) = 0, limited', fleet: W2_FLEET, policy: { key: 'rooms', bufferSize: 10, maxCapacity: 35 }, replicas: 3, limited: true },
    { name: 'W3: 50% of 20 allocated → capacity 40, buffer 20 → +ceil(15/10) = 2 → 5', fleet: W2_FLEET, policy: { key: 'rooms', bufferSize: '50%', minCapacity: 10, maxCapacity: 100 }, replicas: 5, limited: false },
    {
      name: 'W3: nothing allocated and one replica meets minCapacity → 1, limited',
      fleet: roomsFleet({ count: 25, capacity: 30, allocatedCount: 0 }, 3),
      policy: { key: 'rooms', bufferSize: '50%', minCapacity: 10, maxCapacity: 100 },
      replicas: 1,
      limited: true,
    },
    {
      name: 'percent rounds up: 7 allocated, 30% → ceil(10) = 10 capacity, buffer 3; available 3 → stays',
      fleet: roomsFleet({ count: 7, capacity: 10, allocatedCount: 7 }, 1),
      policy: { key: 'rooms', bufferSize: '30%', minCapacity: 1, maxCapacity: 100 },
      replicas: 1,
      limited: false,
    },
    {
      name: 'percent rounds up: 8 allocated, 30% → ceil(11.43) = 12, buffer 4; available 2 → +1',
      fleet: roomsFleet({ count: 8, capacity: 10, allocatedCount: 8 }, 1),
      policy: { key: 'rooms', bufferSize: '30%', minCapacity: 1, maxCapacity: 100 },
      replicas: 2,
      limited: false,
    },
    { name: 'available equals the buffer: no change', fleet: W2_FLEET, policy: { key: 'rooms', bufferSize: 5, maxCapacity: 100 }, replicas: 3, limited: false },
    {
      name: 'scale-up counts per-replica room net of the template count: ceil(12/4) = 3',
      fleet: roomsFleet({ count: 28, capacity: 30, allocatedCount: 0 }, 3, { template: { spec: { counters: { rooms: { count: 6, capacity: 10 } } } } }),
      policy: { key: 'rooms', bufferSize: 14, maxCapacity: 1000 },
      replicas: 6,
      limited: false,
    },
    {
      name: 'scale-up landing exactly on maxCapacity is not limited',
      fleet: W2_FLEET,
      policy: { key: 'rooms', bufferSize: 10, minCapacity: 30, maxCapacity: 40 },
      replicas: 4,
      limited: false,
    },
    {
      name: 'scale-up past maxCapacity takes what fits: floor((55 − 30) / 10) = 2',
      fleet: roomsFleet({ count: 30, capacity: 30, allocatedCount: 0 }, 3),
      policy: { key: 'rooms', bufferSize: 30, maxCapacity: 55 },
      replicas: 5,
      limited: true,
    },
    {
      name: 'scale-down walks the deletion order and keeps the last count that holds the buffer',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 10, maxCapacity: 100 },
      order: FIVE_SERVERS,
      replicas: 3,
      limited: false,
    },
    {
      name: 'scale-down stops exactly on the buffer',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 15, maxCapacity: 100 },
      order: FIVE_SERVERS,
      replicas: 3,
      limited: false,
    },
    {
      name: 'scale-down stops exactly on minCapacity, limited',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 5, minCapacity: 30, maxCapacity: 100 },
      order: FIVE_SERVERS,
      replicas: 3,
      limited: true,
    },
    {
      name: 'scale-down does not go below minCapacity: one server back, limited',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 5, minCapacity: 35, maxCapacity: 100 },
      order: FIVE_SERVERS,
      replicas: 4,
      limited: true,
    },
    {
      name: 'already at minCapacity with room to spare: unchanged, limited',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 5, minCapacity: 50, maxCapacity: 100 },
      order: FIVE_SERVERS,
      replicas: 5,
      limited: true,
    },
    {
      name: 'servers without the key are removed without changing capacity',
      fleet: roomsFleet({ count: 15, capacity: 50, allocatedCount: 10 }, 7),
      policy: { key: 'rooms', bufferSize: 10, maxCapacity: 100 },
      order: [BARE_SERVER, BARE_SERVER, ...FIVE_SERVERS],
      replicas: 3,
      limited: false,
    },
    {
      name: 'never below one replica',
      fleet: roomsFleet({ count: 0, capacity: 20, allocatedCount: 0 }, 2),
      policy: { key: 'rooms', bufferSize: 5, maxCapacity: 100 },
      order: [BARE_SERVER, BARE_SERVER],
      replicas: 1,
      limited: false,
    },
    {
      name: 'an empty deletion order changes nothing',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 10, maxCapacity: 100 },
      order: [],
      replicas: 5,
      limited: false,
    },
    {
      name: 'below minCapacity: add template capacities until it is reached',
      fleet: roomsFleet({ count: 5, capacity: 20, allocatedCount: 5 }, 2),
      policy: { key: 'rooms', bufferSize: 5, minCapacity: 50, maxCapacity: 100 },
      replicas: 5,
      limited: true,
    },
    {
      name: 'below minCapacity with the buffer short too: the minimum decides',
      fleet: roomsFleet({ count: 18, capacity: 20, allocatedCount: 5 }, 2),
      policy: { key: 'rooms', bufferSize: 10, minCapacity: 41, maxCapacity: 100 },
      replicas: 5,
      limited: true,
    },
    {
      name: 'above maxCapacity with too little room: remove servers until under the maximum, limited',
      fleet: roomsFleet({ count: 45, capacity: 50, allocatedCount: 45 }, 5),
      policy: { key: 'rooms', bufferSize: 10, maxCapacity: 30 },
      order: [counterServer(10, 10), counterServer(10, 10), counterServer(10, 10), counterServer(10, 10), counterServer(5, 10)],
      replicas: 3,
      limited: true,
    },
    {
      name: 'above maxCapacity with room to spare: an ordinary scale-down (not flagged, as coded)',
      fleet: FIVE_FLEET,
      policy: { key: 'rooms', bufferSize: 10, maxCapacity: 30 },
      order: FIVE_SERVERS,
      replicas: 3,
      limited: false,
    },
  ];
  it.each(cases)('$name', ({ fleet, policy, order, replicas, limited }) => {
    expect(counterOrListPolicy(fleet, policy, 'Counter', order)).toEqual({ replicas, limited });
  });

  it('reads lists by their number of values', () => {
    const fleet: AutoscaledFleet = {
      spec: { template: { spec: { lists: { players: { capacity: 5, values: [] } } } } },
      status: { replicas: 2, lists: { players: { count: 8, capacity: 10, allocatedCount: 8 } } },
    };
    // available 2 < buffer 4 → +ceil(2/5) = 1
    expect(counterOrListPolicy(fleet, { key: 'players', bufferSize: 4, maxCapacity: 100 }, 'List')).toEqual({ replicas: 3, limited: false });
    // Scale-down counts each server's values.
    const idle: AutoscaledFleet = { ...fleet, status: { replicas: 4, lists: { players: { count: 3, capacity: 20, allocatedCount: 3 } } } };
    const order = [listServer(0, 5), listServer(0, 5), listServer(1, 5), listServer(2, 5)];
    // Remove two empty servers: capacity 10, 3 used → 7 available ≥ 5; the third would leave 3.
    expect(counterOrListPolicy(idle, { key: 'players', bufferSize: 5, maxCapacity: 100 }, 'List', order)).toEqual({ replicas: 2, limited: false });
  });

  it('a template list with values gives less room per replica', () => {
    const fleet: AutoscaledFleet = {
      spec: { template: { spec: { lists: { players: { capacity: 5, values: ['a', 'b', 'c'] } } } } },
      status: { replicas: 2, lists: { players: { count: 10, capacity: 10, allocatedCount: 10 } } },
    };
    // buffer 4, available 0 → ceil(4 / (5 − 3)) = 2
    expect(counterOrListPolicy(fleet, { key: 'players', bufferSize: 4, maxCapacity: 100 }, 'List')).toEqual({ replicas: 4, limited: false });
  });

  it('sorts the deletion order only when a scale-down needs it', () => {
    const order = vi.fn(() => FIVE_SERVERS);
    counterOrListPolicy(W2_FLEET, { key: 'rooms', bufferSize: 10, maxCapacity: 100 }, 'Counter', order);
    expect(order).not.toHaveBeenCalled();
    expect(counterOrListPolicy(FIVE_FLEET, { key: 'rooms', bufferSize: 10, maxCapacity: 100 }, 'Counter', order)).toEqual({ replicas: 3, limited: false });
    expect(order).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a missing key in the template', { status: { replicas: 1, counters: { rooms: { count: 0, capacity: 0, allocatedCount: 0 } } } }, 'Counter', 'cannot apply CounterPolicy as Counter key rooms does not exist in the Fleet Spec'],
    ['a missing key in the status', { spec: ROOMS_TEMPLATE, status: { replicas: 1 } }, 'Counter', 'cannot apply CounterPolicy as Counter key rooms does not exist in the Fleet Status'],
    ['a missing list in the template', { status: { replicas: 1 } }, 'List', 'cannot apply ListPolicy as List key rooms does not exist in the Fleet Spec'],
    [
      'a missing list in the status',
      { spec: { template: { spec: { lists: { rooms: { capacity: 5 } } } } }, status: { replicas: 1 } },
      'List',
      'cannot apply ListPolicy as List key rooms does not exist in the Fleet Status',
    ],
  ] as const)('rejects %s', (_what, fleet, kind, message) => {
    expect(() => counterOrListPolicy(fleet, { key: 'rooms', bufferSize: 5, maxCapacity: 100 }, kind)).toThrow(new AutoscalerError(message));
  });

  it('cannot scale up when a replica adds no room', () => {
    const full = roomsFleet({ count: 30, capacity: 30, allocatedCount: 0 }, 3, { template: { spec: { counters: { rooms: { count: 10, capacity: 10 } } } } });
    expect(() => counterOrListPolicy(full, { key: 'rooms', bufferSize: 5, maxCapacity: 100 }, 'Counter')).toThrow(
      new AutoscalerError('cannot scale up as adding additional replicas does not increase available Capacity'),
    );
  });

  it('cannot reach minCapacity with a zero-capacity template', () => {
    const zero = roomsFleet({ count: 0, capacity: 0, allocatedCount: 0 }, 1, { template: { spec: { counters: { rooms: { count: 0, capacity: 0 } } } } });
    expect(() => counterOrListPolicy(zero, { key: 'rooms', bufferSize: 5, minCapacity: 10, maxCapacity: 100 }, 'Counter')).toThrow(
      new AutoscalerError('cannot scale up as Capacity is equal to 0'),
    );
  });
});

describe('computeDesiredReplicas', () => {
  const on = { countsAndLists: true, scheduledAutoscaler: true, now: Date.UTC(2026, 0, 1) };
  const applied = (replicas: number, limited = false) => expect.objectContaining({ outcome: 'applied', replicas, limited }) as unknown;

  it('dispatches on the policy type', () => {
    expect(computeDesiredReplicas({ type: 'Buffer', buffer: { bufferSize: 2, maxReplicas: 10 } }, fleetWith({ allocatedReplicas: 3 }), on)).toEqual(applied(5));
    expect(computeDesiredReplicas({ type: 'Counter', counter: { key: 'rooms', bufferSize: 10, maxCapacity: 100 } }, W2_FLEET, on)).toEqual(applied(4));
  });

  it('asks for the answer of a webhook it reaches, then applies it', () => {
    const hook = { url: 'https://hook.example/scale' };
    expect(computeDesiredReplicas({ type: 'Webhook', webhook: hook }, W2_FLEET, on)).toEqual({ outcome: 'webhook-needed', place: 'spec.policy', webhook: hook });
    const answered = computeDesiredReplicas({ type: 'Webhook', webhook: hook }, W2_FLEET, {
      ...on,
      webhookAnswers: new Map([['spec.policy', { scale: true, replicas: 8 }]]),
    });
    expect(answered).toEqual(applied(8));
    expect(answered.outcome === 'applied' && answered.ruling.webhookAnswer).toEqual({ scale: true, replicas: 8 });
  });

  it.each([
    [{ type: 'Counter', counter: { key: 'rooms', bufferSize: 1, maxCapacity: 10 } }, { countsAndLists: false }, 'cannot apply CounterPolicy unless feature flag CountsAndLists is enabled'],
    [{ type: 'List', list: { key: 'rooms', bufferSize: 1, maxCapacity: 10 } }, { countsAndLists: false }, 'cannot apply CounterPolicy unless feature flag CountsAndLists is enabled'],
    [{ type: 'Buffer' }, {}, 'buffer policy config params are missing'],
    [{ type: 'List' }, {}, 'list policy config params are missing'],
    [{ type: 'Webhook' }, {}, 'webhook policy config params are missing'],
    [{ type: 'Schedule', schedule: {} }, { scheduledAutoscaler: false }, 'cannot apply SchedulePolicy unless feature flag ScheduledAutoscaler is enabled'],
    [{ type: 'Chain', chain: [] }, { scheduledAutoscaler: false }, 'cannot apply ChainPolicy unless feature flag ScheduledAutoscaler is enabled'],
    [{ type: 'Wasm' }, {}, 'policy type Wasm is not supported by fleetsim; use one of: Buffer, Webhook, Counter, List, Schedule, Chain'],
    [{ type: 'Nope' }, {}, 'wrong policy type, should be one of: Buffer, Webhook, Counter, List, Schedule, Chain'],
  ])('rejects %j', (policy, options, message) => {
    expect(() => computeDesiredReplicas(policy, W2_FLEET, { ...on, ...options })).toThrow(new AutoscalerError(message));
  });
});

/** Agones's isScheduleActive, the expected answers checked against Agones's formulas in Go. */
describe('isScheduleActive', () => {
  const at = (iso: string) => Date.parse(iso);
  const period = (startCron: string, duration: string, timezone?: string): SchedulePolicy => ({
    activePeriod: { startCron, duration, ...(timezone !== undefined && { timezone }) },
  });

  it('is active only within between.start and between.end, both included; without startCron always within them', () => {
    const window: SchedulePolicy = { between: { start: '2026-01-01T00:10:00Z', end: '2026-01-01T00:40:00Z' } };
    expect(isScheduleActive(window, at('2026-01-01T00:09:59Z'))).toBe(false);
    expect(isScheduleActive(window, at('2026-01-01T00:10:00Z'))).toBe(true);
    expect(isScheduleActive(window, at('2026-01-01T00:40:00Z'))).toBe(true);
    expect(isScheduleActive(window, at('2026-01-01T00:40:00.001Z'))).toBe(false);
    expect(isScheduleActive({ between: { start: '2026-01-01T00:10:00Z' } }, at('2030-01-01T00:00:00Z'))).toBe(true);
    expect(isScheduleActive({}, at('2026-01-01T00:00:00Z'))).toBe(true);
  });

  it('recurs: weekdays from 09:00 for 8 hours, the end excluded', () => {
    const weekdays = period('0 9 * * 1-5', '8h');
    expect(isScheduleActive(weekdays, at('2026-01-05T09:00:00Z'))).toBe(true); // Monday
    expect(isScheduleActive(weekdays, at('2026-01-05T16:59:59Z'))).toBe(true);
    expect(isScheduleActive(weekdays, at('2026-01-05T17:00:00Z'))).toBe(false);
    expect(isScheduleActive(weekdays, at('2026-01-03T10:00:00Z'))).toBe(false); // Saturday
  });

  it('starts 90 s early (strictly after start − 90 s), for clock changes', () => {
    const weekdays = period('0 9 * * 1-5', '8h');
    expect(isScheduleActive(weekdays, at('2026-01-05T08:58:31Z'))).toBe(true);
    expect(isScheduleActive(weekdays, at('2026-01-05T08:58:30Z'))).toBe(false);
  });

  it('a period may run past midnight', () => {
    const night = period('0 22 * * *', '4h');
    expect(isScheduleActive(night, at('2026-01-01T21:00:00Z'))).toBe(false);
    expect(isScheduleActive(night, at('2026-01-01T23:30:00Z'))).toBe(true);
    expect(isScheduleActive(night, at('2026-01-02T01:30:00Z'))).toBe(true);
    expect(isScheduleActive(night, at('2026-01-02T02:30:00Z'))).toBe(false);
  });

  it('reads startCron on the clocks of its timezone, across a clock change', () => {
    expect(isScheduleActive(period('0 9 * * 1-5', '8h', 'America/New_York'), at('2026-01-05T14:30:00Z'))).toBe(true);
    expect(isScheduleActive(period('0 9 * * 1-5', '8h', 'America/New_York'), at('2026-01-05T09:30:00Z'))).toBe(false);
    expect(isScheduleActive(period('0 9 * * *', '1h', 'Asia/Kolkata'), at('2026-01-01T03:45:00Z'))).toBe(true);
    expect(isScheduleActive(period('0 9 * * *', '1h', 'Asia/Kolkata'), at('2026-01-01T04:45:00Z'))).toBe(false);
    // New York moves to EDT on 2026-03-08: 09:00 is 14:00Z the day before, 13:00Z that day.
    const nineAm = period('0 9 * * *', '1h', 'America/New_York');
    expect(isScheduleActive(nineAm, at('2026-03-07T14:30:00Z'))).toBe(true);
    expect(isScheduleActive(nineAm, at('2026-03-08T13:30:00Z'))).toBe(true);
    expect(isScheduleActive(nineAm, at('2026-03-08T14:30:00Z'))).toBe(false);
  });

  it('an empty duration never ends (once the cron has ever started); a cron that never starts is never active', () => {
    expect(isScheduleActive(period('0 0 * * *', ''), at('2026-01-01T12:00:00Z'))).toBe(true);
    expect(isScheduleActive(period('0 0 30 2 *', ''), at('2026-01-01T12:00:00Z'))).toBe(false);
  });

  it('takes descriptors, @every included', () => {
    expect(isScheduleActive(period('@daily', '1h'), at('2026-01-01T00:30:00Z'))).toBe(true);
    expect(isScheduleActive(period('@daily', '1h'), at('2026-01-01T01:30:00Z'))).toBe(false);
    expect(isScheduleActive(period('@hourly', '15m'), at('2026-01-01T00:10:00Z'))).toBe(true);
    expect(isScheduleActive(period('@hourly', '15m'), at('2026-01-01T00:20:00Z'))).toBe(false);
    // @every counts from the time asked about: active always when the duration outlasts the delay, else never.
    expect(isScheduleActive(period('@every 1h', '2h'), at('2026-01-01T00:20:00Z'))).toBe(true);
    expect(isScheduleActive(period('@every 1h', '30m'), at('2026-01-01T00:20:00Z'))).toBe(false);
  });

  it('day of month or day of week: either when neither is *, both when one is', () => {
    // 2026-01-02 is a Friday, not the 13th.
    expect(isScheduleActive(period('0 0 13 * 5', '1h'), at('2026-01-02T00:30:00Z'))).toBe(true);
    expect(isScheduleActive(period('0 0 13 * ?', '1h'), at('2026-01-02T00:30:00Z'))).toBe(false);
  });
});

describe('computeDesiredReplicas: Schedule and Chain', () => {
  const NOW = Date.parse('2026-01-01T00:20:00Z');
  const options: ComputeOptions = { countsAndLists: false, scheduledAutoscaler: true, now: NOW };
  const fleet = fleetWith({ replicas: 3, allocatedReplicas: 1 });
  const buffer = (bufferSize: number): AutoscalerPolicy => ({ type: 'Buffer', buffer: { bufferSize, maxReplicas: 100 } });
  const hook = { url: 'https://hook.example/scale' };
  const webhook: AutoscalerPolicy = { type: 'Webhook', webhook: hook };
  const activeNow = (policy: AutoscalerPolicy): AutoscalerPolicy => ({
    type: 'Schedule',
    schedule: { between: { start: '2026-01-01T00:10:00Z' }, activePeriod: { startCron: '10 0 * * *', duration: '30m' }, policy },
  });
  const laterOn = (policy: AutoscalerPolicy): AutoscalerPolicy => ({ type: 'Schedule', schedule: { between: { start: '2026-01-01T01:00:00Z' }, policy } });

  it('a Schedule applies its policy while active', () => {
    const outcome = computeDesiredReplicas(activeNow(buffer(10)), fleet, options);
    expect(outcome).toMatchObject({ outcome: 'applied', replicas: 11, ruling: { scheduled: true, policy: buffer(10) } });
  });

  it('an inactive Schedule is its own outcome, keeping the fleet\'s current total', () => {
    expect(computeDesiredReplicas(laterOn(buffer(10)), fleet, options)).toEqual({ outcome: 'inactive-schedule', replicas: 3 });
  });

  it('a Chain: the first entry that applies rules, and the result names it', () => {
    const chain: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'event', ...activeNow(buffer(10)) }, { id: 'default', ...buffer(2) }] };
    const outcome = computeDesiredReplicas(chain, fleet, options);
    expect(outcome).toMatchObject({ outcome: 'applied', replicas: 11, ruling: { chainEntry: { id: 'event', type: 'Schedule' }, scheduled: true, passedOver: [] } });
    expect(outcome.outcome === 'applied' && lastAppliedPolicy(chain, outcome.ruling)).toBe('Chain:event:Schedule');
  });

  it('a Chain falls through an inactive schedule to its default', () => {
    const chain: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'later', ...laterOn(buffer(10)) }, { id: 'default', ...buffer(2) }] };
    const outcome = computeDesiredReplicas(chain, fleet, options);
    expect(outcome).toMatchObject({
      outcome: 'applied',
      replicas: 3,
      ruling: { chainEntry: { id: 'default', type: 'Buffer' }, scheduled: false, passedOver: [{ id: 'later', reason: 'inactive schedule' }] },
    });
    expect(outcome.outcome === 'applied' && lastAppliedPolicy(chain, outcome.ruling)).toBe('Chain:default:Buffer');
  });

  it('a webhook is asked only when the chain reaches it, and a failed one hands over to the next entry', () => {
    const chain: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'later', ...laterOn(buffer(10)) }, { id: 'hook', ...webhook }, { id: 'default', ...buffer(2) }] };
    expect(computeDesiredReplicas(chain, fleet, options)).toEqual({ outcome: 'webhook-needed', place: 'spec.policy.chain[1]', webhook: hook });
    const answered = computeDesiredReplicas(chain, fleet, { ...options, webhookAnswers: new Map([['spec.policy.chain[1]', { scale: true, replicas: 7 }]]) });
    expect(answered).toMatchObject({ outcome: 'applied', replicas: 7, ruling: { chainEntry: { id: 'hook', type: 'Webhook' } } });
    const failed = computeDesiredReplicas(chain, fleet, { ...options, webhookAnswers: new Map([['spec.policy.chain[1]', new Error('the webhook did not answer')]]) });
    expect(failed).toMatchObject({
      outcome: 'applied',
      replicas: 3,
      ruling: { chainEntry: { id: 'default', type: 'Buffer' }, passedOver: [{ id: 'later' }, { id: 'hook', reason: 'the webhook did not answer' }] },
    });
    // An entry that applies first: no webhook asked.
    const first: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'default', ...buffer(2) }, { id: 'hook', ...webhook }] };
    expect(computeDesiredReplicas(first, fleet, options).outcome).toBe('applied');
  });

  it('a webhook inside a schedule is asked by its place', () => {
    expect(computeDesiredReplicas(activeNow(webhook), fleet, options)).toEqual({ outcome: 'webhook-needed', place: 'spec.policy.schedule.policy', webhook: hook });
    expect(computeDesiredReplicas(laterOn(webhook), fleet, options).outcome).toBe('inactive-schedule');
  });

  it('when no entry applies, the last one tells: inactive, or its error as a ChainPolicyError', () => {
    const allLater: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'a', ...laterOn(buffer(10)) }, { id: 'b', ...laterOn(buffer(5)) }] };
    expect(computeDesiredReplicas(allLater, fleet, options)).toEqual({ outcome: 'inactive-schedule', replicas: 3 });
    const brokenFirst: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'a', type: 'Buffer' }, { id: 'b', ...laterOn(buffer(5)) }] };
    expect(computeDesiredReplicas(brokenFirst, fleet, options).outcome).toBe('inactive-schedule');
    const brokenLast: AutoscalerPolicy = { type: 'Chain', chain: [{ id: 'a', ...laterOn(buffer(5)) }, { id: 'b', type: 'Buffer' }] };
    expect(() => computeDesiredReplicas(brokenLast, fleet, options)).toThrow(new ChainPolicyError('buffer policy config params are missing'));
  });

  it('lastAppliedPolicy is the policy type, or Chain:<id>:<type>; a chain entry counts as changed as Agones compares them', () => {
    expect(lastAppliedPolicy(buffer(2), { policy: buffer(2), scheduled: false, passedOver: [] })).toBe('Buffer');
    expect(chainEntryChanged('', 'Chain:a:Buffer')).toBe(true);
    expect(chainEntryChanged('Buffer', 'Chain:a:Buffer')).toBe(true);
    expect(chainEntryChanged('Chain:a:Buffer', 'Chain:a:Buffer')).toBe(false);
    expect(chainEntryChanged('Chain:a:Buffer', 'Chain:b:Buffer')).toBe(true);
    expect(chainEntryChanged('Chain:a:Schedule', 'Chain:a:Buffer')).toBe(true);
  });
});
