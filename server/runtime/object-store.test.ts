import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../log/event-log.js';
import { ObjectStore } from './object-store.js';

let seq = 0;
const event = (namespace: string, name: string, payload: number | null): StoredEvent => ({
  seq: ++seq, time: 0, type: 'T', kind: 'Thing', namespace, name, payload, schemaVersion: 1,
});
// The reducer keeps the payload as the object; null deletes it.
const store = () => new ObjectStore<number>('Thing', (_previous, e) => (e.payload === null ? undefined : (e.payload as number)));

describe('ObjectStore', () => {
  it('finds an object by its names and by its key, and lists in the order first stored', () => {
    const s = store();
    s.apply(event('a', 'x', 1));
    s.apply(event('b', 'x', 2));
    s.apply(event('', 'node-1', 3));
    s.apply(event('a', 'x', 4));
    expect(s.get('a', 'x')).toBe(4);
    expect(s.get('b', 'x')).toBe(2);
    expect(s.get('', 'node-1')).toBe(3);
    expect(s.getByKey('/node-1')).toBe(3);
    expect(s.get('a', 'y')).toBeUndefined();
    expect([...s.entries()]).toEqual([['a/x', 4], ['b/x', 2], ['/node-1', 3]]);
  });

  it('gives every change of an object the key string it was first stored under, until it goes', () => {
    const s = store();
    const first = s.apply(event('a', 'x', 1));
    const second = s.apply(event('a', `${'x'}`, 2));
    expect(second.key).toBe(first.key);
    expect(second.previous).toBe(1);
    const gone = s.apply(event('a', 'x', null));
    expect(gone).toMatchObject({ key: 'a/x', previous: 2, object: undefined });
    expect(s.get('a', 'x')).toBeUndefined();
    expect(s.getByKey('a/x')).toBeUndefined();
    expect(s.size).toBe(0);
    // Made again: a new object, stored last.
    s.apply(event('b', 'y', 5));
    expect(s.apply(event('a', 'x', 3)).previous).toBeUndefined();
    expect([...s.values()]).toEqual([5, 3]);
  });

  it('puts, removes and copies by key, keeping both lookups in step', () => {
    const s = store();
    s.put(event('a', 'batch', 0), 'a/one', 1);
    s.put(event('a', 'batch', 0), 'a/two', 2);
    expect(s.get('a', 'one')).toBe(1);
    expect(s.remove('a/one')).toBe(1);
    expect(s.get('a', 'one')).toBeUndefined();
    expect(s.remove('a/one')).toBeUndefined();
    const copy = store();
    copy.apply(event('z', 'old', 9));
    copy.copyFrom(s);
    expect(copy.get('z', 'old')).toBeUndefined();
    expect(copy.get('a', 'two')).toBe(2);
    expect([...copy.entries()]).toEqual([['a/two', 2]]);
  });

  it('applies to the entry a caller holds, and finds by name an object whose held entry went', () => {
    const s = store();
    s.apply(event('a', 'x', 1));
    const held = s.entry('a/x')!;
    expect(s.apply(event('a', 'x', 2), held)).toMatchObject({ key: 'a/x', previous: 1, object: 2 });
    expect(held.object).toBe(2);
    expect(s.get('a', 'x')).toBe(2);
    // Deleted, then made again: the entry held from before stands for no stored object.
    s.apply(event('a', 'x', null), held);
    s.apply(event('a', 'x', 3));
    expect(s.apply(event('a', 'x', 4), held)).toMatchObject({ previous: 3, object: 4 });
    expect(s.get('a', 'x')).toBe(4);
    // Removed by key, and replaced by a copy: likewise.
    const again = s.entry('a/x')!;
    s.remove('a/x');
    expect(s.apply(event('a', 'x', 5), again).previous).toBeUndefined();
    expect(s.get('a', 'x')).toBe(5);
    const replaced = s.entry('a/x')!;
    const other = store();
    other.apply(event('a', 'x', 6));
    s.copyFrom(other);
    expect(s.apply(event('a', 'x', 7), replaced).previous).toBe(6);
    expect(s.get('a', 'x')).toBe(7);
  });
});
