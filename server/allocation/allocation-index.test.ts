import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../clock.js';
import type { StoredEvent } from '../log/event-log.js';
import type { GameServer, GameServerState } from '../kinds/gameserver-types.js';
import { evolveGameServer } from '../kinds/gameserver/events.js';
import { ObjectStore } from '../runtime/object-store.js';
import { AllocationIndex } from './allocation-index.js';
import { gameServer } from '../../test/helpers/gameservers.js';
import { withNodeCounter } from '../../test/helpers/node-counter.js';

let seq = 0;
function gs(name: string, node: string, state: GameServerState, labels: Record<string, string> = { 'agones.dev/fleet': 'f' }): GameServer {
  return gameServer(name, { state, node, metadata: { uid: name, labels } });
}

function setup(servers: GameServer[]) {
  const store = new ObjectStore<GameServer>('GameServer', evolveGameServer);
  const put = (object: GameServer) => store.apply({ seq: ++seq, time: 0, type: 'GameServerCreated', kind: 'GameServer', namespace: 'default', name: object.metadata.name, payload: { object }, schemaVersion: 1 } as StoredEvent);
  for (const s of servers) put(s);
  const { index, count } = withNodeCounter(store, (nodes) => new AllocationIndex(store, nodes));
  const change = (next: GameServer) => {
    const previous = store.get('default', next.metadata.name);
    const { key } = put(next);
    count(previous, next);
    index.update(previous, next, key);
  };
  return { store, index, change };
}

const byName = (a: GameServer, b: GameServer) => a.metadata.name.localeCompare(b.metadata.name);
const any = () => true;

describe('AllocationIndex', () => {
  it('orders Packed by node Allocated desc, then Ready desc (W6)', () => {
    const servers = [
      ...['x1', 'x2', 'x3'].map((n) => gs(n, 'n1', 'Allocated')),
      gs('a', 'n1', 'Ready'),
      ...['y1', 'y2', 'y3'].map((n) => gs(n, 'n2', 'Allocated')),
      gs('b', 'n2', 'Ready'),
      ...['b2', 'b3', 'b4'].map((n) => gs(n, 'n2', 'Ready')),
      gs('c', 'n3', 'Ready'),
      ...['c2', 'c3', 'c4', 'c5'].map((n) => gs(n, 'n3', 'Ready')),
      gs('d', '', 'Ready'),
    ];
    const { index } = setup(servers);
    const pick = (accept: (g: GameServer) => boolean) => index.findPacked('default', 'Ready', { 'agones.dev/fleet': 'f' }, accept, byName)?.metadata.name;
    // b (n2: 3 allocated, 4 ready) -> a (n1: 3 allocated, 1 ready) -> c (n3) -> d (no node).
    expect(pick(any)).toBe('b');
    expect(pick((g) => g.status.nodeName !== 'n2')).toBe('a');
    expect(pick((g) => g.status.nodeName === 'n3' || g.status.nodeName === '')).toBe('c');
    expect(pick((g) => g.status.nodeName === '')).toBe('d');
  });

  it('moves a node up as its servers are allocated, and forgets servers that leave the pool', () => {
    const { index, change } = setup([gs('a1', 'n1', 'Ready'), gs('a2', 'n1', 'Ready'), gs('b1', 'n2', 'Ready'), gs('b2', 'n2', 'Ready'), gs('b3', 'n2', 'Ready')]);
    const first = index.findPacked('default', 'Ready', {}, any, byName)!;
    expect(first.metadata.name).toBe('b1');
    change({ ...first, status: { ...first.status, state: 'Allocated' } });
    expect(index.findPacked('default', 'Ready', {}, any, byName)!.metadata.name).toBe('b2');
    expect(index.findPacked('default', 'Allocated', {}, any, byName)!.metadata.name).toBe('b1');
    expect(index.nodeCounts('n2')).toEqual({ ready: 2, allocated: 1 });
  });

  it('narrows by label and finds nothing when a label has no candidate', () => {
    const { index } = setup([gs('a', 'n1', 'Ready', { team: 'red' }), gs('b', 'n1', 'Ready', { team: 'blue' })]);
    expect(index.findPacked('default', 'Ready', { team: 'blue' }, any, byName)!.metadata.name).toBe('b');
    expect(index.findPacked('default', 'Ready', { team: 'green' }, any, byName)).toBeUndefined();
    expect(index.findPacked('other', 'Ready', {}, any, byName)).toBeUndefined();
    expect(index.findPacked('default', 'Ready', {}, (g) => g.metadata.name === 'a', byName)!.metadata.name).toBe('a');
  });

  it('picks Distributed candidates at random, only among matches', () => {
    const servers = Array.from({ length: 20 }, (_, i) => gs(`g${i}`, `n${i % 4}`, 'Ready'));
    const { index } = setup(servers);
    const rng = new SeededRandom(3);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const pick = index.findRandom('default', 'Ready', {}, (g) => g.metadata.name !== 'g0', rng)!;
      seen.add(pick.metadata.name);
    }
    expect(seen.has('g0')).toBe(false);
    expect(seen.size).toBe(19);
  });

  it('treats nodes with equal counts as one rank: the best server across them wins, not the first node', () => {
    // n1 and n2 each hold one Allocated and two Ready servers; n3 is less busy.
    const servers = [
      gs('x1', 'n1', 'Allocated'),
      gs('m', 'n1', 'Ready'),
      gs('z', 'n1', 'Ready'),
      gs('x2', 'n2', 'Allocated'),
      gs('b', 'n2', 'Ready'),
      gs('y', 'n2', 'Ready'),
      gs('a', 'n3', 'Ready'),
    ];
    const { index } = setup(servers);
    // By name alone: b (on n2) before m (on n1), though n1 sorts first; never a on the less busy n3.
    expect(index.findPacked('default', 'Ready', {}, any)?.metadata.name).toBe('b');
    // A tie-break ranks across the tied nodes too: here it prefers z.
    const preferZ = (p: GameServer, q: GameServer) => (p.metadata.name === 'z' ? -1 : q.metadata.name === 'z' ? 1 : byName(p, q));
    expect(index.findPacked('default', 'Ready', {}, any, preferZ)?.metadata.name).toBe('z');
    expect(index.findPacked('default', 'Ready', {}, (g) => g.status.nodeName !== 'n2')?.metadata.name).toBe('m');
  });

  it('keeps the matches of a reused test, follows changes the pools do not see, and drops the least recently used', () => {
    const { index, change, store } = setup([gs('a', 'n1', 'Allocated'), gs('b', 'n1', 'Allocated'), gs('c', 'n2', 'Allocated')]);
    const free = (g: GameServer) => g.metadata.annotations?.full !== 'yes';
    const fill = (name: string, full: string) => {
      const g = store.get('default', name)!;
      change({ ...g, metadata: { ...g.metadata, annotations: { full } } });
    };
    const pick = (key: object) => index.findPacked('default', 'Allocated', {}, free, undefined, key)?.metadata.name;
    const keys = Array.from({ length: 40 }, () => ({}));
    expect(pick(keys[0]!)).toBe('a');
    expect(pick(keys[0]!)).toBe('a'); // now from its view
    fill('a', 'yes'); // no pool, node or label moves: only the view sees it
    expect(pick(keys[0]!)).toBe('b');
    for (const key of keys.slice(1)) {
      pick(key);
      pick(key);
    }
    fill('b', 'yes');
    fill('a', 'no');
    expect(pick(keys[0]!)).toBe('a'); // dropped and built again
    fill('a', 'yes');
    expect(pick(keys[0]!)).toBe('c');
    expect(pick(keys[39]!)).toBe('c');
  });
});
