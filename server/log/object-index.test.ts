import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { EventLog, type NewEvent } from './event-log.js';
import type { ObjectEvents } from './object-index.js';

/**
 * The log's index by object: a history walked back through the rows' links equals what a scan of
 * the whole file finds (a read-only log scans), for objects with one life or several, created
 * one by one or in a batch under no name, and for a log written before the index existed.
 */

const tempDb = () => join(tempDir('fleetsim-index-'), 'events.db');

const objectEvents: ObjectEvents = {
  membersOf: (event) => (event.type === 'Batch' ? (event.payload as { members: string[] }).members : undefined),
  ends: (event) => event.type === 'Deleted',
};
const changed = (name: string, n: number): NewEvent => ({ type: 'Changed', kind: 'Thing', namespace: 'default', name, payload: { n } });
const batch = (...members: string[]): NewEvent => ({ type: 'Batch', kind: 'Thing', namespace: 'default', name: '', payload: { members } });
const other = (name: string): NewEvent => ({ type: 'Changed', kind: 'Other', namespace: 'default', name, payload: {} });

/** A history of `a` (made alone), of `x` (made in a batch, deleted, made again in a later batch) and `y` (a batch-mate that never changed). */
const EVENTS: NewEvent[][] = [
  [changed('a', 1), other('a')],
  [batch('x', 'y')],
  [changed('x', 2), changed('a', 3)],
  [{ ...changed('x', 4), type: 'Deleted' }],
  [other('x'), batch('x', 'z')],
  [changed('x', 5)],
];

const seqsOf = (log: EventLog, name: string, kind = 'Thing') => [...log.history(kind, 'default', name)].map((e) => e.seq);

describe('the index by object', () => {
  it("walks an object's history back through its links, batches and earlier namesakes included, as a scan of the file finds it", async () => {
    const path = tempDb();
    const log = new EventLog(path, { objectEvents });
    for (const events of EVENTS) await log.append(events, 1000).committed;
    // 1 a, 2 other a, 3 batch x y, 4 x, 5 a, 6 x deleted, 7 other x, 8 batch x z, 9 x.
    const expected = { a: [5, 1], x: [9, 8, 6, 4, 3], y: [3], z: [8], nobody: [] };
    for (const [name, seqs] of Object.entries(expected)) expect(seqsOf(log, name), name).toEqual(seqs);
    expect(seqsOf(log, 'x', 'Other')).toEqual([7]);
    expect([...log.history('Thing', 'default', 'x')][1]!.payload).toEqual({ members: ['x', 'z'] });
    // Only the batch whose member had an earlier namesake needs a link outside its row.
    expect(log.database.prepare('SELECT seq, prev, member_prev FROM event_links').all()).toEqual([{ seq: 8, prev: 3, member_prev: '{"x":6}' }]);
    log.close();

    const reader = new EventLog(path, { readonly: true, objectEvents });
    for (const [name, seqs] of Object.entries(expected)) expect(seqsOf(reader, name), name).toEqual(seqs);
    reader.close();

    // Started again, the log learns its heads from the store's replay and goes on linking.
    const again = new EventLog(path, { objectEvents });
    expect([...again.replay()]).toHaveLength(9);
    await again.append([changed('y', 6)], 2000).committed;
    expect(seqsOf(again, 'y')).toEqual([10, 3]);
    again.close();
    // Or without a replay: the heads are learned from the file before the first write.
    const unreplayed = new EventLog(path, { objectEvents });
    await unreplayed.append([changed('z', 7)], 3000).committed;
    expect(seqsOf(unreplayed, 'z')).toEqual([11, 8]);
    unreplayed.close();
  });

  it('links a log written before the index once, when it is first opened to write, and walks it as it walks new rows', async () => {
    const path = tempDb();
    const old = new Database(path);
    old.exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT NOT NULL, kind TEXT NOT NULL,
      namespace TEXT NOT NULL, name TEXT NOT NULL, payload TEXT NOT NULL, schema_version INTEGER NOT NULL, caused_by TEXT)`);
    const insert = old.prepare('INSERT INTO events VALUES (?, 1000, ?, ?, ?, ?, ?, 1, NULL)');
    let seq = 0;
    for (const events of EVENTS) for (const e of events) insert.run(++seq, e.type, e.kind, e.namespace, e.name, JSON.stringify(e.payload));
    old.close();

    const reader = new EventLog(path, { readonly: true, objectEvents });
    expect(seqsOf(reader, 'x')).toEqual([9, 8, 6, 4, 3]);
    reader.close();

    const writer = new EventLog(path, { objectEvents });
    expect([...writer.replay()]).toHaveLength(9);
    expect(writer.database.prepare('SELECT COUNT(*) FROM event_links').pluck().get()).toBe(9);
    await writer.append([changed('x', 6)], 2000).committed;
    expect(seqsOf(writer, 'x')).toEqual([10, 9, 8, 6, 4, 3]);
    expect(seqsOf(writer, 'a')).toEqual([5, 1]);
    writer.close();
    // Linked once: a second start finds nothing left to link.
    const second = new EventLog(path, { objectEvents });
    [...second.replay()].forEach(() => undefined);
    expect(second.database.prepare('SELECT COUNT(*) FROM event_links').pluck().get()).toBe(9);
    second.close();
  });

  it('indexes a log written behind (what-if runs) the same way', async () => {
    const path = tempDb();
    const log = new EventLog(path, { writeBehind: 'rows', objectEvents });
    for (const events of EVENTS) await log.append(events, 1000).committed;
    expect(seqsOf(log, 'x')).toEqual([9, 8, 6, 4, 3]);
    log.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT seq, prev FROM events ORDER BY seq').all().map((r) => Object.values(r as object))).toEqual([
      [1, 0], [2, 0], [3, 0], [4, 3], [5, 1], [6, 4], [7, 0], [8, 3], [9, 8],
    ]);
    expect(db.prepare('SELECT seq, member_prev FROM event_links').all()).toEqual([{ seq: 8, member_prev: '{"x":6}' }]);
    db.close();
  });

  it('keeps the heads of the last objects that ended only, and finds an older one by a scan', async () => {
    const log = new EventLog(':memory:', { objectEvents, maxEndedHeads: 2 });
    const ended = (name: string) => ({ ...changed(name, 0), type: 'Deleted' });
    await log.append([changed('a', 1), ended('a'), changed('b', 2), ended('b'), changed('c', 3), ended('c'), changed('d', 4)], 1000).committed;
    // a ended first and is forgotten; its history is still found, by a scan of the file.
    expect(seqsOf(log, 'a')).toEqual([2, 1]);
    expect(seqsOf(log, 'c')).toEqual([6, 5]);
    // Used again after it was forgotten, its name starts a history of its own.
    await log.append([changed('a', 5)], 2000).committed;
    expect(seqsOf(log, 'a')).toEqual([8]);
    expect(log.database.prepare('SELECT prev FROM events WHERE seq = 8').pluck().get()).toBe(0);
    log.close();
  });
});
