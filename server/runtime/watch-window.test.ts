import { describe, expect, it } from 'vitest';
import type { Change } from './read-model.js';
import { WatchWindow } from './watch-window.js';

const change = (seq: number, kind = 'Fleet', extra: Partial<Change> = {}): Change => ({ kind, namespace: 'default', name: `n${seq}`, seq, type: 'MODIFIED', ...extra });

describe('WatchWindow', () => {
  it('keeps the last `capacity` changes, oldest first, and gives back those of a kind after a point', () => {
    const window = new WatchWindow(3);
    expect(window.oldestSeq).toBeUndefined();
    window.push(change(1));
    window.push(change(2, 'GameServerSet', { derived: true }));
    expect(window.oldestSeq).toBe(1);
    expect([...window.since(0, 'Fleet')].map((c) => c.seq)).toEqual([1]);
    window.push(change(3, 'Fleet', { type: 'DELETED', last: { gone: true } }));
    window.push(change(4));
    window.push(change(5));
    expect(window.oldestSeq).toBe(3);
    expect([...window.since(0, 'Fleet')]).toEqual([change(3, 'Fleet', { type: 'DELETED', last: { gone: true } }), change(4), change(5)]);
    expect([...window.since(4, 'Fleet')].map((c) => c.seq)).toEqual([5]);
    window.push(change(6, 'GameServerSet', { derived: true }));
    expect([...window.since(0, 'GameServerSet')]).toEqual([change(6, 'GameServerSet', { derived: true })]);
  });
});
