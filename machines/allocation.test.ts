import { describe, expect, it } from 'vitest';
import { FEATURE_DEFAULTS, type FeatureGates } from '../server/features.js';
import type { CounterStatus, GameServer, GameServerState, ListStatus, PlayerStatus } from '../server/kinds/gameserver-types.js';
import type {
  GameServerAllocation,
  GameServerAllocationSpec,
  GameServerSelector,
} from '../server/kinds/gameserverallocation/gameserverallocation.js';
import { evolveGameServer } from '../server/kinds/gameserver/events.js';
import { rfc3339Nano } from '../server/kinds/meta.js';
import { type Priority, comparePriorities } from '../server/kinds/priorities.js';
import {
  comparePacked,
  decideAllocation,
  findGameServerForAllocation,
  matchesSelector,
  orderForAllocation,
} from './allocation.js';
import type { NodeCount } from './scale-down-order.js';
import { gameServer as buildGameServer } from '../test/helpers/gameservers.js';

const OFF: FeatureGates = FEATURE_DEFAULTS;
const ON: FeatureGates = { ...FEATURE_DEFAULTS, CountsAndLists: true, PlayerAllocationFilter: true, PlayerTracking: true };
const COUNTS_ONLY: FeatureGates = { ...FEATURE_DEFAULTS, CountsAndLists: true };

interface Options {
  state?: GameServerState;
  node?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  players?: PlayerStatus;
}

function gameServer(name: string, options: Options = {}): GameServer {
  return buildGameServer(name, {
    state: options.state,
    node: options.node,
    metadata: { namespace: options.namespace ?? 'default', labels: options.labels ?? {}, annotations: options.annotations ?? {} },
    status: {
      ports: [{ name: 'default', port: 7000 }],
      address: '10.0.0.1',
      ...(options.players && { players: options.players }),
      ...(options.counters && { counters: options.counters }),
      ...(options.lists && { lists: options.lists }),
    },
  });
}

function allocation(spec: GameServerAllocationSpec, namespace = 'default'): GameServerAllocation {
  return { apiVersion: 'allocation.agones.dev/v1', kind: 'GameServerAllocation', metadata: { namespace }, spec };
}

const names = (list: readonly GameServer[]) => list.map((gs) => gs.metadata.name);

// ---------------------------------------------------------------------------------------------

describe('matchesSelector', () => {
  const server = gameServer('gs', {
    labels: { game: 'my-game', tier: 'cache', 'agones.dev/fleet': 'green' },
    annotations: { map: 'garden22' },
    players: { count: 3, capacity: 10, ids: [] },
    counters: { rooms: { count: 2, capacity: 5 } },
    lists: { players: { capacity: 10, values: ['x6k8z', 'p2'] } },
  });

  const cases: Array<[string, GameServerSelector, FeatureGates, boolean]> = [
    ['empty selector matches a Ready server', {}, OFF, true],
    ['matchLabels equal', { matchLabels: { game: 'my-game' } }, OFF, true],
    ['matchLabels different value', { matchLabels: { game: 'other' } }, OFF, false],
    ['matchLabels missing key', { matchLabels: { mode: 'x' } }, OFF, false],
    ['annotations are never matched', { matchLabels: { map: 'garden22' } }, OFF, false],
    ['In', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['cache', 'db'] }] }, OFF, true],
    ['In, value absent', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, OFF, false],
    ['NotIn', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, OFF, true],
    ['NotIn, value present', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }] }, OFF, false],
    ['NotIn, key absent matches', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, OFF, true],
    ['Exists', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, OFF, true],
    ['Exists, key absent', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, OFF, false],
    ['DoesNotExist', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, OFF, true],
    ['DoesNotExist, key present', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, OFF, false],
    [
      'labels and expressions together',
      { matchLabels: { game: 'my-game' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['cache'] }] },
      OFF,
      true,
    ],
    ['a selector that does not convert matches nothing', { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }, OFF, false],
    ['state Ready explicitly', { gameServerState: 'Ready' }, OFF, true],
    ['state Allocated does not take a Ready server', { gameServerState: 'Allocated' }, OFF, false],
    // Players: available = 10 - 3 = 7.
    ['players within bounds', { players: { minAvailable: 1, maxAvailable: 7 } }, ON, true],
    ['players above max', { players: { minAvailable: 0, maxAvailable: 6 } }, ON, false],
    ['players below min', { players: { minAvailable: 8, maxAvailable: 99 } }, ON, false],
    ['players maxAvailable 0 disables the filter', { players: { minAvailable: 50, maxAvailable: 0 } }, ON, true],
    ['players ignored with the gate off', { players: { minAvailable: 0, maxAvailable: 1 } }, COUNTS_ONLY, true],
    // Counters: count 2, capacity 5, available 3.
    ['counter within every bound', { counters: { rooms: { minCount: 1, maxCount: 5, minAvailable: 1, maxAvailable: 10 } } }, ON, true],
    ['counter zeros are unbounded', { counters: { rooms: { minCount: 0, maxCount: 0, minAvailable: 0, maxAvailable: 0 } } }, ON, true],
    ['counter count below min', { counters: { rooms: { minCount: 3 } } }, ON, false],
    ['counter count above max', { counters: { rooms: { maxCount: 1 } } }, ON, false],
    ['counter available below min', { counters: { rooms: { minAvailable: 4 } } }, ON, false],
    ['counter available above max', { counters: { rooms: { maxAvailable: 2 } } }, ON, false],
    ['counter missing key', { counters: { sessions: {} } }, ON, false],
    ['counters ignored with the gate off', { counters: { sessions: {} } }, OFF, true],
    ['empty counter map is no filter', { counters: {} }, ON, true],
    // Lists: capacity 10, 2 values, available 8.
    ['list containsValue present', { lists: { players: { containsValue: 'x6k8z' } } }, ON, true],
    ['list containsValue absent', { lists: { players: { containsValue: 'nobody' } } }, ON, false],
    ['list containsValue empty means any', { lists: { players: { containsValue: '' } } }, ON, true],
    ['list available within', { lists: { players: { minAvailable: 8, maxAvailable: 8 } } }, ON, true],
    ['list available above max', { lists: { players: { maxAvailable: 7 } } }, ON, false],
    ['list available below min', { lists: { players: { minAvailable: 9 } } }, ON, false],
    ['list max 0 is unbounded', { lists: { players: { minAvailable: 1, maxAvailable: 0 } } }, ON, true],
    ['list missing key', { lists: { sessions: {} } }, ON, false],
  ];
  it.each(cases)('%s', (_name, selector, gates, expected) => {
    expect(matchesSelector(server, selector, gates)).toBe(expected);
  });

  it('needs status.counters / status.lists at all when a key is asked for', () => {
    const bare = gameServer('bare');
    expect(matchesSelector(bare, { counters: { rooms: {} } }, ON)).toBe(false);
    expect(matchesSelector(bare, { lists: { players: {} } }, ON)).toBe(false);
  });

  it('skips the player filter for a server without player status', () => {
    expect(matchesSelector(gameServer('bare'), { players: { minAvailable: 5, maxAvailable: 6 } }, ON)).toBe(true);
  });

  it('takes an Allocated server only when the selector asks for Allocated', () => {
    const allocated = gameServer('gs', { state: 'Allocated' });
    expect(matchesSelector(allocated, {}, OFF)).toBe(false);
    expect(matchesSelector(allocated, { gameServerState: 'Allocated' }, OFF)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('comparePriorities', () => {
  const roomy = gameServer('roomy', { counters: { rooms: { count: 1, capacity: 10 } }, lists: { p: { capacity: 5, values: [] } } });
  const tight = gameServer('tight', { counters: { rooms: { count: 9, capacity: 10 } }, lists: { p: { capacity: 5, values: ['a', 'b'] } } });
  const bare = gameServer('bare');

  const cases: Array<[string, GameServer, GameServer, Priority[], number]> = [
    ['Counter Ascending prefers less room', tight, roomy, [{ type: 'Counter', key: 'rooms', order: 'Ascending' }], -1],
    ['Counter Descending prefers more room', roomy, tight, [{ type: 'Counter', key: 'rooms', order: 'Descending' }], -1],
    ['order defaults to Ascending', roomy, tight, [{ type: 'Counter', key: 'rooms' }], 1],
    ['List Ascending', tight, roomy, [{ type: 'List', key: 'p', order: 'Ascending' }], -1],
    ['List Descending', tight, roomy, [{ type: 'List', key: 'p', order: 'Descending' }], 1],
    ['only one has the key: it goes first (Ascending)', roomy, bare, [{ type: 'Counter', key: 'rooms', order: 'Ascending' }], -1],
    ['only one has the key: it goes first (Descending)', bare, roomy, [{ type: 'Counter', key: 'rooms', order: 'Descending' }], 1],
    ['neither has the key: next priority decides', roomy, tight, [{ type: 'Counter', key: 'nope' }, { type: 'List', key: 'p', order: 'Descending' }], -1],
    ['nothing tells them apart', bare, bare, [{ type: 'Counter', key: 'rooms' }], 0],
    ['no priorities', tight, roomy, [], 0],
  ];
  it.each(cases)('%s', (_name, a, b, priorities, sign) => {
    expect(Math.sign(comparePriorities(a, b, priorities))).toBe(sign);
    if (sign !== 0) expect(Math.sign(comparePriorities(b, a, priorities))).toBe(-sign);
  });

  it('a tie on the first priority falls to the second', () => {
    const x = gameServer('x', { counters: { rooms: { count: 0, capacity: 4 } }, lists: { p: { capacity: 5, values: ['a'] } } });
    const y = gameServer('y', { counters: { rooms: { count: 1, capacity: 5 } }, lists: { p: { capacity: 5, values: [] } } });
    const priorities: Priority[] = [
      { type: 'Counter', key: 'rooms', order: 'Ascending' },
      { type: 'List', key: 'p', order: 'Ascending' },
    ];
    expect(Math.sign(comparePriorities(x, y, priorities))).toBe(-1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('comparePacked', () => {
  // W6: n1 {Allocated 3, Ready 1}, n2 {Allocated 3, Ready 4}, n3 {Allocated 0, Ready 5}; d has no entry.
  const nodeCounts = new Map<string, NodeCount>([
    ['n1', { allocated: 3, ready: 1 }],
    ['n2', { allocated: 3, ready: 4 }],
    ['n3', { allocated: 0, ready: 5 }],
  ]);
  const sortPacked = (list: GameServer[], priorities?: Priority[], gates: FeatureGates = OFF) =>
    [...list].sort((x, y) => comparePacked(x, y, nodeCounts, priorities, gates));

  it('W6: b (n2) -> a (n1) -> c (n3) -> d (no node entry)', () => {
    const list = [
      gameServer('d', { node: 'n9' }),
      gameServer('c', { node: 'n3' }),
      gameServer('a', { node: 'n1' }),
      gameServer('b', { node: 'n2' }),
    ];
    expect(names(sortPacked(list))).toEqual(['b', 'a', 'c', 'd']);
    expect(names(sortPacked([...list].reverse()))).toEqual(['b', 'a', 'c', 'd']);
  });

  it('puts Allocated servers first, even on an emptier node', () => {
    const list = [gameServer('ready', { node: 'n2' }), gameServer('alloc', { node: 'n3', state: 'Allocated' })];
    expect(names(sortPacked(list))).toEqual(['alloc', 'ready']);
  });

  it('an unscheduled server (no node name) sorts last', () => {
    const list = [gameServer('a-unscheduled'), gameServer('z', { node: 'n3' })];
    expect(names(sortPacked(list))).toEqual(['z', 'a-unscheduled']);
  });

  it('within a node: less player room first when PlayerAllocationFilter is on, else by name', () => {
    const list = [
      gameServer('a', { node: 'n1', players: { count: 1, capacity: 10, ids: [] } }),
      gameServer('b', { node: 'n1', players: { count: 8, capacity: 10, ids: [] } }),
    ];
    expect(names(sortPacked(list, undefined, ON))).toEqual(['b', 'a']);
    expect(names(sortPacked(list, undefined, OFF))).toEqual(['a', 'b']);
  });

  it('priorities break ties only with CountsAndLists on', () => {
    const list = [
      gameServer('a', { node: 'n1', counters: { rooms: { count: 0, capacity: 10 } } }),
      gameServer('b', { node: 'n1', counters: { rooms: { count: 9, capacity: 10 } } }),
      gameServer('c', { node: 'n1' }),
    ];
    const ascending: Priority[] = [{ type: 'Counter', key: 'rooms', order: 'Ascending' }];
    const descending: Priority[] = [{ type: 'Counter', key: 'rooms', order: 'Descending' }];
    expect(names(sortPacked(list, ascending, COUNTS_ONLY))).toEqual(['b', 'a', 'c']);
    expect(names(sortPacked(list, descending, COUNTS_ONLY))).toEqual(['a', 'b', 'c']);
    expect(names(sortPacked([...list].reverse(), descending, OFF))).toEqual(['a', 'b', 'c']);
  });

  it('node counts come before priorities', () => {
    const list = [
      gameServer('on-n3', { node: 'n3', counters: { rooms: { count: 9, capacity: 10 } } }),
      gameServer('on-n2', { node: 'n2', counters: { rooms: { count: 0, capacity: 10 } } }),
    ];
    expect(names(sortPacked(list, [{ type: 'Counter', key: 'rooms', order: 'Ascending' }], COUNTS_ONLY))).toEqual(['on-n2', 'on-n3']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('orderForAllocation and findGameServerForAllocation', () => {
  const nodeCounts = new Map<string, NodeCount>([
    ['n1', { allocated: 3, ready: 1 }],
    ['n2', { allocated: 3, ready: 4 }],
    ['n3', { allocated: 0, ready: 5 }],
  ]);
  const a = gameServer('a', { node: 'n1', labels: { fleet: 'blue' } });
  const b = gameServer('b', { node: 'n2', labels: { fleet: 'green' } });
  const c = gameServer('c', { node: 'n3', labels: { fleet: 'blue' } });
  const d = gameServer('d', { node: 'n9', labels: { fleet: 'green' } });
  const other = gameServer('a0', { node: 'n2', namespace: 'elsewhere', labels: { fleet: 'blue' } });
  const all = [d, c, other, a, b];

  it('Packed: the W6 order (a0 shares n2 with b and wins on its name)', () => {
    const ordered = orderForAllocation(all, allocation({ scheduling: 'Packed' }), nodeCounts, OFF, { int: () => 0 });
    expect(names(ordered)).toEqual(['a0', 'b', 'a', 'c', 'd']);
  });

  it('Distributed without priorities: a permutation drawn from the random source', () => {
    // Fisher-Yates from the end; always drawing 0 rotates the sorted list by one.
    const ordered = orderForAllocation([d, c, a, b], allocation({ scheduling: 'Distributed' }), nodeCounts, OFF, { int: () => 0 });
    expect(names(ordered)).toEqual(['a', 'c', 'd', 'b']);
    const identity = orderForAllocation([d, c, a, b], allocation({ scheduling: 'Distributed' }), nodeCounts, OFF, { int: (n) => n - 1 });
    expect(names(identity)).toEqual(['b', 'a', 'c', 'd']);
  });

  it('Distributed with priorities and CountsAndLists: priorities then name, no randomness, no node logic', () => {
    const x = gameServer('x', { node: 'n3', counters: { rooms: { count: 5, capacity: 10 } } });
    const y = gameServer('y', { node: 'n2', counters: { rooms: { count: 1, capacity: 10 } } });
    const z = gameServer('z', { node: 'n1' });
    const gsa = allocation({ scheduling: 'Distributed', priorities: [{ type: 'Counter', key: 'rooms', order: 'Descending' }] });
    const ordered = orderForAllocation([z, x, y], gsa, nodeCounts, COUNTS_ONLY, {
      int: () => {
        throw new Error('no randomness expected');
      },
    });
    expect(names(ordered)).toEqual(['y', 'x', 'z']);
  });

  it('the first selector with a match wins; a later selector is the fallback', () => {
    const ordered = orderForAllocation(all, allocation({}), nodeCounts, OFF, { int: () => 0 });
    const gsa = allocation({ selectors: [{ matchLabels: { fleet: 'blue' } }, { matchLabels: { fleet: 'green' } }] });
    expect(findGameServerForAllocation(ordered, gsa, OFF)).toMatchObject({ gameServer: { metadata: { name: 'a' } }, selectorIndex: 0, index: 2 });
    const fallback = allocation({ selectors: [{ matchLabels: { fleet: 'red' } }, { matchLabels: { fleet: 'green' } }] });
    expect(findGameServerForAllocation(ordered, fallback, OFF)).toMatchObject({ gameServer: { metadata: { name: 'b' } }, selectorIndex: 1 });
    expect(findGameServerForAllocation(ordered, allocation({ selectors: [{ matchLabels: { fleet: 'red' } }] }), OFF)).toBeUndefined();
  });

  it('only looks in the allocation namespace', () => {
    const gsa = allocation({ selectors: [{ matchLabels: { fleet: 'blue' } }] }, 'elsewhere');
    expect(findGameServerForAllocation(all, gsa, OFF)?.gameServer.metadata.name).toBe('a0');
  });

  it('deprecated fields: preferred selectors before required', () => {
    const gsa = allocation({ required: { matchLabels: { fleet: 'blue' } }, preferred: [{ matchLabels: { fleet: 'green' } }] });
    const ordered = orderForAllocation([a, c, d], gsa, nodeCounts, OFF, { int: () => 0 });
    expect(findGameServerForAllocation(ordered, gsa, OFF)).toMatchObject({ gameServer: { metadata: { name: 'd' } }, selectorIndex: 0 });
  });
});

// ---------------------------------------------------------------------------------------------

/** The GameServer as the decided event leaves it, with the event's action errors. */
function applyAllocationActions(gs: GameServer, gsa: GameServerAllocation, now: number, gates: FeatureGates) {
  const event = decideAllocation(gs, gsa, now, gates);
  return {
    gameServer: evolveGameServer(gs, { ...event, seq: 1, time: now, schemaVersion: 1 })!,
    counterErrors: event.payload.counterErrors ?? [],
    listErrors: event.payload.listErrors ?? [],
  };
}

describe('decideAllocation', () => {
  const NOW = Date.UTC(2026, 2, 4, 10, 20, 30, 123);

  it('formats last-allocated as RFC3339Nano', () => {
    expect(rfc3339Nano(NOW)).toBe('2026-03-04T10:20:30.123Z');
    expect(rfc3339Nano(Date.UTC(2026, 2, 4, 10, 20, 30, 0))).toBe('2026-03-04T10:20:30Z');
    expect(rfc3339Nano(Date.UTC(2026, 2, 4, 10, 20, 30, 120))).toBe('2026-03-04T10:20:30.12Z');
    expect(rfc3339Nano(Date.UTC(2026, 2, 4, 10, 20, 30, 5) + 0.25)).toBe('2026-03-04T10:20:30.00525Z');
  });

  it('merges metadata, stamps last-allocated and sets Allocated, without touching the input', () => {
    const gs = gameServer('gs-1', { labels: { game: 'g', mode: 'old' }, annotations: { keep: 'me', 'agones.dev/last-allocated': 'stale' } });
    const before = structuredClone(gs);
    const gsa = allocation({ metadata: { labels: { mode: 'deathmatch' }, annotations: { map: 'garden22', 'agones.dev/last-allocated': 'mine' } } });
    const { gameServer: out, counterErrors, listErrors } = applyAllocationActions(gs, gsa, NOW, OFF);
    expect(out.status.state).toBe('Allocated');
    expect(out.metadata.labels).toEqual({ game: 'g', mode: 'deathmatch' });
    expect(out.metadata.annotations).toEqual({ keep: 'me', map: 'garden22', 'agones.dev/last-allocated': '2026-03-04T10:20:30.123Z' });
    expect(counterErrors).toEqual([]);
    expect(listErrors).toEqual([]);
    expect(gs).toEqual(before);
  });

  it('re-allocating an Allocated server merges again, refreshes last-allocated and applies the actions again', () => {
    const gs = gameServer('gs-1', { state: 'Allocated', labels: { a: '1' }, counters: { rooms: { count: 1, capacity: 3 } } });
    const gsa = allocation({ metadata: { labels: { b: '2' } }, counters: { rooms: { action: 'Increment', amount: 1 } } });
    const first = applyAllocationActions(gs, gsa, NOW, ON).gameServer;
    const second = applyAllocationActions(first, gsa, NOW + 1000, ON).gameServer;
    expect(second.status.state).toBe('Allocated');
    expect(second.metadata.labels).toEqual({ a: '1', b: '2' });
    expect(second.metadata.annotations['agones.dev/last-allocated']).toBe('2026-03-04T10:20:31.123Z');
    expect(second.status.counters).toEqual({ rooms: { count: 3, capacity: 3 } });
  });

  const counterCases: Array<[string, CounterStatus, GameServerAllocationSpec['counters'], CounterStatus, string[]]> = [
    ['increment', { count: 2, capacity: 10 }, { rooms: { action: 'Increment', amount: 3 } }, { count: 5, capacity: 10 }, []],
    ['increment clamps at capacity', { count: 8, capacity: 10 }, { rooms: { action: 'Increment', amount: 5 } }, { count: 10, capacity: 10 }, []],
    ['decrement clamps at 0', { count: 2, capacity: 10 }, { rooms: { action: 'Decrement', amount: 5 } }, { count: 0, capacity: 10 }, []],
    ['capacity first, count clamped to it', { count: 8, capacity: 10 }, { rooms: { capacity: 5 } }, { count: 5, capacity: 5 }, []],
    [
      'capacity then increment',
      { count: 1, capacity: 10 },
      { rooms: { capacity: 3, action: 'Increment', amount: 5 } },
      { count: 3, capacity: 3 },
      [],
    ],
    [
      'negative amount is an error, count unchanged',
      { count: 2, capacity: 10 },
      { rooms: { action: 'Increment', amount: -1 } },
      { count: 2, capacity: 10 },
      ['unable to UpdateCount with Name rooms, Action Increment, Amount -1. Amount must be greater than 0'],
    ],
    [
      'unknown action is an error',
      { count: 2, capacity: 10 },
      { rooms: { action: 'Double', amount: 1 } },
      { count: 2, capacity: 10 },
      ['unable to UpdateCount with Name rooms, Action Double, Amount 1. Allocation action must be one of Increment or Decrement'],
    ],
    [
      'negative capacity is an error, the count action still runs',
      { count: 2, capacity: 10 },
      { rooms: { capacity: -1, action: 'Increment', amount: 1 } },
      { count: 3, capacity: 10 },
      ['unable to UpdateCounterCapacity: Name rooms, Capacity -1. Capacity must be greater than or equal to 0'],
    ],
    ['action without amount does nothing', { count: 2, capacity: 10 }, { rooms: { action: 'Increment' } }, { count: 2, capacity: 10 }, []],
  ];
  it.each(counterCases)('counter: %s', (_name, start, counters, expected, errors) => {
    const gs = gameServer('gs-1', { counters: { rooms: start } });
    const result = applyAllocationActions(gs, allocation({ counters }), NOW, COUNTS_ONLY);
    expect(result.gameServer.status.counters?.rooms).toEqual(expected);
    expect(result.counterErrors).toEqual(errors);
    expect(result.gameServer.status.state).toBe('Allocated');
  });

  it('counter: a missing key is reported for each operation', () => {
    const gs = gameServer('gs-1', { counters: { rooms: { count: 0, capacity: 1 } } });
    const result = applyAllocationActions(gs, allocation({ counters: { sessions: { capacity: 4, action: 'Increment', amount: 1 } } }), NOW, COUNTS_ONLY);
    expect(result.counterErrors).toEqual([
      'unable to UpdateCounterCapacity: Name sessions, Capacity 4. Counter not found in GameServer gs-1',
      'unable to UpdateCount with Name sessions, Action Increment, Amount 1. Counter not found in GameServer gs-1',
    ]);
    expect(result.gameServer.status.counters).toEqual({ rooms: { count: 0, capacity: 1 } });
  });

  const listCases: Array<[string, ListStatus, GameServerAllocationSpec['lists'], ListStatus, string[]]> = [
    ['add values', { capacity: 10, values: ['a'] }, { p: { addValues: ['b', 'c'] } }, { capacity: 10, values: ['a', 'b', 'c'] }, []],
    ['duplicate addValues are dropped', { capacity: 10, values: ['a'] }, { p: { addValues: ['a', 'b', 'b'] } }, { capacity: 10, values: ['a', 'b'] }, []],
    ['adds beyond capacity are cut', { capacity: 3, values: ['a', 'b'] }, { p: { addValues: ['c', 'd', 'e'] } }, { capacity: 3, values: ['a', 'b', 'c'] }, []],
    ['capacity truncates values', { capacity: 10, values: ['a', 'b', 'c'] }, { p: { capacity: 2 } }, { capacity: 2, values: ['a', 'b'] }, []],
    ['capacity 0 empties the list', { capacity: 10, values: ['a'] }, { p: { capacity: 0 } }, { capacity: 0, values: [] }, []],
    [
      'capacity then add then delete',
      { capacity: 10, values: ['alice', 'bob', 'carol'] },
      { p: { capacity: 4, addValues: ['x7un', '8inz'], deleteValues: ['alice', 'nobody'] } },
      { capacity: 4, values: ['bob', 'carol', 'x7un'] },
      [],
    ],
    [
      'capacity over 1000 is an error, the adds still run',
      { capacity: 10, values: [] },
      { p: { capacity: 1001, addValues: ['a'] } },
      { capacity: 10, values: ['a'] },
      ['unable to UpdateListCapacity: Name p, Capacity 1001. Capacity must be between 0 and 1000, inclusive'],
    ],
    [
      'negative capacity is an error',
      { capacity: 10, values: [] },
      { p: { capacity: -1 } },
      { capacity: 10, values: [] },
      ['unable to UpdateListCapacity: Name p, Capacity -1. Capacity must be between 0 and 1000, inclusive'],
    ],
  ];
  it.each(listCases)('list: %s', (_name, start, lists, expected, errors) => {
    const gs = gameServer('gs-1', { lists: { p: start } });
    const result = applyAllocationActions(gs, allocation({ lists }), NOW, COUNTS_ONLY);
    expect(result.gameServer.status.lists?.p).toEqual(expected);
    expect(result.listErrors).toEqual(errors);
  });

  it('list: a missing key is reported for each operation', () => {
    const gs = gameServer('gs-1', { lists: {} });
    const result = applyAllocationActions(gs, allocation({ lists: { p: { capacity: 5, addValues: ['a', 'b'], deleteValues: ['c'] } } }), NOW, COUNTS_ONLY);
    expect(result.listErrors).toEqual([
      'unable to UpdateListCapacity: Name p, Capacity 5. List not found in GameServer gs-1',
      'unable to AppendListValues: Name p, Values [a b]. List not found in GameServer gs-1',
      'unable to DeleteListValues: Name p, Values [c]. List not found in GameServer gs-1',
    ]);
    expect(result.gameServer.status.lists).toEqual({});
  });

  it('keys are applied in name order', () => {
    const gs = gameServer('gs-1', {});
    const result = applyAllocationActions(gs, allocation({ counters: { zeta: { capacity: 1 }, alpha: { capacity: 1 } } }), NOW, COUNTS_ONLY);
    expect(result.counterErrors.map((e) => e.split(',')[0])).toEqual(['unable to UpdateCounterCapacity: Name alpha', 'unable to UpdateCounterCapacity: Name zeta']);
  });

  it('ignores counter and list actions with CountsAndLists off', () => {
    const gs = gameServer('gs-1', { counters: { rooms: { count: 0, capacity: 5 } } });
    const result = applyAllocationActions(gs, allocation({ counters: { rooms: { action: 'Increment', amount: 1 } }, lists: { nope: { capacity: 2 } } }), NOW, OFF);
    expect(result.gameServer.status.counters).toEqual({ rooms: { count: 0, capacity: 5 } });
    expect(result.counterErrors).toEqual([]);
    expect(result.listErrors).toEqual([]);
  });
});
