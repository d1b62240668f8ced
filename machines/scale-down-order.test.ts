import { describe, expect, it } from 'vitest';
import type { GameServer, GameServerState } from '../server/kinds/gameserver-types.js';
import { type NodeCount, countPerNode, firstForScaleDown, scaleDownOrder, sortForScaleDown } from './scale-down-order.js';
import { gameServer as buildGameServer } from '../test/helpers/gameservers.js';

interface Options {
  state?: GameServerState;
  node?: string;
  created?: string;
  counters?: Record<string, { count: number; capacity: number }>;
  lists?: Record<string, { capacity: number; values: string[] }>;
}

function gameServer(name: string, options: Options = {}): GameServer {
  return buildGameServer(name, {
    state: options.state,
    node: options.node,
    metadata: { creationTimestamp: options.created ?? '2026-01-01T00:00:00Z' },
    status: {
      ...(options.counters && { counters: options.counters }),
      ...(options.lists && { lists: options.lists }),
    },
  });
}

const names = (list: GameServer[]) => list.map((gs) => gs.metadata.name);

describe('scale-down order, Packed', () => {
  // W7: n1 {Allocated 3, Ready 1}, n2 {Allocated 3, Ready 4}, n3 {Allocated 0, Ready 5}; d has no node entry.
  const nodeCounts = new Map<string, NodeCount>([
    ['n1', { allocated: 3, ready: 1 }],
    ['n2', { allocated: 3, ready: 4 }],
    ['n3', { allocated: 0, ready: 5 }],
  ]);
  const a = gameServer('a', { node: 'n1' });
  const b = gameServer('b', { node: 'n2' });
  const c = gameServer('c', { node: 'n3' });
  const d = gameServer('d', { node: 'n9' });

  it('W7: unknown node first, then the least-full node', () => {
    const order = sortForScaleDown([a, b, c, d], { scheduling: 'Packed', nodeCounts });
    expect(names(order)).toEqual(['d', 'a', 'c', 'b']);
    expect(names(sortForScaleDown([b, c, d, a], { scheduling: 'Packed', nodeCounts }))).toEqual(['d', 'a', 'c', 'b']);
  });

  it('puts an unscheduled server first when counts come from the servers given', () => {
    const ready = [1, 2, 3].map((i) => gameServer(`full-${i}`, { node: 'busy' }));
    const lone = gameServer('lone', { node: 'quiet' });
    const unscheduled = gameServer('zz-starting', { state: 'Creating' });
    const counts = countPerNode([...ready, lone, unscheduled]);
    expect(counts.get('busy')).toEqual({ ready: 3, allocated: 0 });
    expect(counts.has('')).toBe(false);
    expect(names(sortForScaleDown([...ready, lone, unscheduled], { scheduling: 'Packed' }))).toEqual([
      'zz-starting',
      'lone',
      'full-1',
      'full-2',
      'full-3',
    ]);
  });

  it('on one node, a server that is not Ready yet goes before a Ready one; then by name', () => {
    const counts = new Map([['n1', { ready: 2, allocated: 0 }]]);
    const list = [
      gameServer('a-ready', { node: 'n1' }),
      gameServer('b-ready', { node: 'n1' }),
      gameServer('c-scheduled', { node: 'n1', state: 'Scheduled' }),
      gameServer('d-requestready', { node: 'n1', state: 'RequestReady' }),
    ];
    expect(names(sortForScaleDown(list, { scheduling: 'Packed', nodeCounts: counts }))).toEqual([
      'c-scheduled',
      'd-requestready',
      'a-ready',
      'b-ready',
    ]);
  });

  it('empties one node at a time when totals tie (node name ascending)', () => {
    const counts = new Map([
      ['n2', { ready: 2, allocated: 0 }],
      ['n1', { ready: 2, allocated: 0 }],
    ]);
    const list = [gameServer('x', { node: 'n2' }), gameServer('y', { node: 'n1' }), gameServer('z', { node: 'n2' }), gameServer('w', { node: 'n1' })];
    expect(names(sortForScaleDown(list, { scheduling: 'Packed', nodeCounts: counts }))).toEqual(['w', 'y', 'x', 'z']);
  });

  it('uses Counts/Lists priorities within a node only when the gate is on', () => {
    const counts = new Map([['n1', { ready: 3, allocated: 0 }]]);
    const roomy = gameServer('a-roomy', { node: 'n1', counters: { rooms: { count: 1, capacity: 10 } } });
    const full = gameServer('b-full', { node: 'n1', counters: { rooms: { count: 9, capacity: 10 } } });
    const none = gameServer('c-none', { node: 'n1' });
    const priorities = [{ type: 'Counter' as const, key: 'rooms', order: 'Ascending' as const }];
    const base = { scheduling: 'Packed' as const, nodeCounts: counts, priorities };
    expect(names(sortForScaleDown([none, roomy, full], { ...base, countsAndLists: true }))).toEqual(['b-full', 'a-roomy', 'c-none']);
    expect(names(sortForScaleDown([none, roomy, full], { ...base, countsAndLists: false }))).toEqual(['a-roomy', 'b-full', 'c-none']);
    const descending = [{ type: 'Counter' as const, key: 'rooms', order: 'Descending' as const }];
    expect(names(sortForScaleDown([none, full, roomy], { ...base, priorities: descending, countsAndLists: true }))).toEqual([
      'a-roomy',
      'b-full',
      'c-none',
    ]);
  });
});

describe('scale-down order, Distributed', () => {
  it('deletes the oldest first, name breaking ties', () => {
    const list = [
      gameServer('new', { created: '2026-01-01T00:00:30Z', node: 'n1' }),
      gameServer('old-b', { created: '2026-01-01T00:00:10Z', node: 'n2' }),
      gameServer('old-a', { created: '2026-01-01T00:00:10Z', node: 'n3' }),
      gameServer('mid', { created: '2026-01-01T00:00:20Z' }),
    ];
    expect(names(sortForScaleDown(list, { scheduling: 'Distributed' }))).toEqual(['old-a', 'old-b', 'mid', 'new']);
  });

  it('puts List priorities before age when the gate is on', () => {
    const young = gameServer('young', { created: '2026-01-01T00:00:30Z', lists: { players: { capacity: 4, values: ['p1', 'p2', 'p3'] } } });
    const old = gameServer('old', { created: '2026-01-01T00:00:10Z', lists: { players: { capacity: 4, values: [] } } });
    const priorities = [{ type: 'List' as const, key: 'players' }];
    expect(names(sortForScaleDown([old, young], { scheduling: 'Distributed', priorities, countsAndLists: true }))).toEqual(['young', 'old']);
    expect(names(sortForScaleDown([old, young], { scheduling: 'Distributed', priorities, countsAndLists: false }))).toEqual(['old', 'young']);
  });
});

describe('firstForScaleDown and scaleDownOrder', () => {
  it('give the full order (or its head), whatever the input order', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const states: GameServerState[] = ['Ready', 'Ready', 'Scheduled', 'Creating', 'RequestReady'];
    const list = Array.from({ length: 500 }, (_, i) =>
      gameServer(`gs-${String(i).padStart(4, '0')}`, {
        node: random() < 0.1 ? '' : `n${Math.floor(random() * 12)}`,
        state: states[Math.floor(random() * states.length)]!,
        created: `2026-01-01T00:0${Math.floor(random() * 10)}:00Z`,
      }),
    );
    for (const scheduling of ['Packed', 'Distributed'] as const) {
      const full = names(sortForScaleDown(list, { scheduling }));
      for (const count of [1, 7, 64, 200, 500, 600]) {
        expect(names(firstForScaleDown(list, count, { scheduling }))).toEqual(full.slice(0, count));
      }
      expect(names([...scaleDownOrder(list, { scheduling })])).toEqual(full);
    }
  });
});
