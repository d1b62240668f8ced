import { describe, expect, it, vi } from 'vitest';
import {
  type AggregatedCapacity,
  type AutoscaledFleet,
  AutoscalerError,
  type GameServerCapacity,
  bufferPolicy,
  computeDesiredReplicas,
  counterOrListPolicy,
  parseBufferSize,
  webhookPolicy,
} from './autoscaler.js';
import type { BufferPolicy, CapacityPolicy } from '../server/kinds/fleetautoscaler/fleetautoscaler.js';

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
  const on = { countsAndLists: true };
  it('dispatches on the policy type', () => {
    expect(computeDesiredReplicas({ type: 'Buffer', buffer: { bufferSize: 2, maxReplicas: 10 } }, fleetWith({ allocatedReplicas: 3 }), on)).toEqual({
      replicas: 5,
      limited: false,
    });
    expect(computeDesiredReplicas({ type: 'Counter', counter: { key: 'rooms', bufferSize: 10, maxCapacity: 100 } }, W2_FLEET, on)).toEqual({
      replicas: 4,
      limited: false,
    });
    expect(computeDesiredReplicas({ type: 'Webhook', webhook: {} }, W2_FLEET, { ...on, webhook: { scale: true, replicas: 8 } })).toEqual({
      replicas: 8,
      limited: false,
    });
  });

  it.each([
    [{ type: 'Counter', counter: { key: 'rooms', bufferSize: 1, maxCapacity: 10 } }, { countsAndLists: false }, 'cannot apply CounterPolicy unless feature flag CountsAndLists is enabled'],
    [{ type: 'List', list: { key: 'rooms', bufferSize: 1, maxCapacity: 10 } }, { countsAndLists: false }, 'cannot apply CounterPolicy unless feature flag CountsAndLists is enabled'],
    [{ type: 'Buffer' }, on, 'buffer policy config params are missing'],
    [{ type: 'List' }, on, 'list policy config params are missing'],
    [{ type: 'Webhook', webhook: {} }, on, 'webhook policy config params are missing'],
    [{ type: 'Chain' }, on, 'policy type Chain is not supported by fleetsim; use one of: Buffer, Webhook, Counter, List'],
    [{ type: 'Nope' }, on, 'wrong policy type, should be one of: Buffer, Webhook, Counter, List'],
  ])('rejects %j', (policy, options, message) => {
    expect(() => computeDesiredReplicas(policy, W2_FLEET, options)).toThrow(new AutoscalerError(message));
  });
});
