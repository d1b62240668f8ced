import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { EventLog } from './event-log.js';
import { COMMITS_PER_CHECKPOINT } from './wal-checkpoints.js';
import { waitFor } from '../../test/helpers/wait.js';

const event = (name: string, n: number) => ({
  type: 'TestHappened',
  kind: 'Test',
  namespace: 'default',
  name,
  payload: { n },
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-log-'));
  dirs.push(dir);
  return join(dir, 'events.db');
}

describe('EventLog', () => {
  it('numbers events in order and commits a whole turn of the loop in one transaction', async () => {
    const log = new EventLog(':memory:');
    const commits = [1, 2, 3].map((n) => log.append([event('a', n)], 1000));
    expect(commits.map((c) => c.records[0]!.seq)).toEqual([1, 2, 3]);
    // Nothing is written until the loop turns; then all three land together.
    expect([...log.read()]).toHaveLength(0);
    await Promise.all(commits.map((c) => c.committed));
    expect([...log.read()].map((e) => e.payload)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    log.close();
  });

  it('writes a commit of any size whole and in order, each event with its own cause', async () => {
    const log = new EventLog(':memory:');
    // 64 + 16 + 4 + 3: every size of multi-row statement, and single rows after them.
    const commits = Array.from({ length: 87 }, (_, n) => log.append([event(`gs-${n % 5}`, n)], 1000 + n, { type: 'startup', detail: `call ${n}` }));
    await Promise.all(commits.map((c) => c.committed));
    const read = [...log.read()];
    expect(read.map((e) => [e.seq, e.time, e.name, e.payload, e.cause])).toEqual(
      Array.from({ length: 87 }, (_, n) => [n + 1, 1000 + n, `gs-${n % 5}`, { n }, { type: 'startup', detail: `call ${n}` }]),
    );
    log.close();
  });

  it('writes a payload shared by several events with each, as it stands when its transaction writes it', async () => {
    const log = new EventLog(':memory:');
    const shared = { n: 1 };
    const first = [log.append([{ ...event('a', 0), payload: shared }], 1000), log.append([event('b', 2)], 1000), log.append([{ ...event('c', 0), payload: shared }], 1000)];
    await Promise.all(first.map((c) => c.committed));
    // The same object, changed before a later transaction: that one writes it as it is then.
    shared.n = 3;
    await log.append([{ ...event('d', 0), payload: shared }], 1000).committed;
    expect([...log.read()].map((e) => [e.name, e.payload])).toEqual([
      ['a', { n: 1 }],
      ['b', { n: 2 }],
      ['c', { n: 1 }],
      ['d', { n: 3 }],
    ]);
    log.close();
  });

  it('resolves an append only after its events are readable from another connection', async () => {
    const path = tempDb();
    const log = new EventLog(path);
    const { committed } = log.append([event('a', 1)], 1000);
    const reader = new EventLog(path, { readonly: true });
    expect([...reader.read()]).toHaveLength(0);
    await committed;
    expect([...reader.read()]).toHaveLength(1);
    reader.close();
    log.close();
  });

  it('carries on numbering after a restart', async () => {
    const path = tempDb();
    const first = new EventLog(path);
    await first.append([event('a', 1), event('a', 2)], 1000).committed;
    first.close();
    const second = new EventLog(path);
    expect(second.lastSeq).toBe(2);
    const { records, committed } = second.append([event('b', 3)], 2000);
    await committed;
    expect(records[0]!.seq).toBe(3);
    expect([...second.read({ name: 'b' })].map((e) => e.seq)).toEqual([3]);
    second.close();
  });

  it('filters by object, sequence range and time', async () => {
    const log = new EventLog(':memory:');
    await log.append([event('a', 1)], 1000).committed;
    await log.append([event('b', 2)], 2000).committed;
    await log.append([event('a', 3)], 3000).committed;
    expect([...log.read({ name: 'a' })].map((e) => e.seq)).toEqual([1, 3]);
    expect([...log.read({ toSeq: 2 })].map((e) => e.seq)).toEqual([1, 2]);
    expect([...log.read({ untilTime: 2000 })].map((e) => e.seq)).toEqual([1, 2]);
    expect([...log.read({ fromSeq: 2 })].map((e) => e.seq)).toEqual([2, 3]);
    log.close();
  });

  it('lists committed headers a page at a time: the newest, back from a point, or on from one; bounds name the first and last', async () => {
    const log = new EventLog(':memory:');
    expect(log.bounds()).toBeUndefined();
    for (let n = 1; n <= 5; n++) await log.append([{ ...event(n % 2 ? 'a' : 'b', n), kind: n === 4 ? 'Other' : 'Test' }], n * 1000).committed;
    log.append([event('queued', 6)], 6000);
    const seqs = (headers: Array<{ seq: number }>) => headers.map((h) => h.seq);
    expect(log.headers({ limit: 2 })).toEqual([
      { seq: 4, time: 4000, type: 'TestHappened', kind: 'Other', namespace: 'default', name: 'b' },
      { seq: 5, time: 5000, type: 'TestHappened', kind: 'Test', namespace: 'default', name: 'a' },
    ]);
    expect(seqs(log.headers({ beforeSeq: 4, limit: 2 }))).toEqual([2, 3]);
    expect(seqs(log.headers({ fromSeq: 2, limit: 2 }))).toEqual([2, 3]);
    expect(seqs(log.headers({ fromSeq: 9, limit: 2 }))).toEqual([]);
    expect(seqs(log.headers({ kind: 'Other', limit: 10 }))).toEqual([4]);
    expect(log.bounds()).toEqual({ first: { seq: 1, time: 1000 }, last: { seq: 5, time: 5000 } });
    log.close();
  });

  it('refuses to change or delete what was written', async () => {
    const log = new EventLog(':memory:');
    await log.append([event('a', 1)], 1000).committed;
    expect(() => log.database.exec("UPDATE events SET type = 'x'")).toThrow(/append-only/);
    expect(() => log.database.exec('DELETE FROM events')).toThrow(/append-only/);
    log.close();
  });

  it('keeps one cause per commit, written once and referred to by its other events, and reads it back with each', async () => {
    const path = tempDb();
    const log = new EventLog(path);
    const cause = { type: 'request', method: 'POST', path: '/apis/x', client: '127.0.0.1:5000', requestId: 'r-1' } as const;
    await log.append([event('a', 1), event('b', 2)], 1000, cause).committed;
    await log.append([event('c', 3)], 1000).committed;
    // The same cause committed again (one sync, two commits) is still written once.
    await log.append([event('d', 4)], 1000, cause).committed;
    log.close();
    const reader = new EventLog(path, { readonly: true });
    expect([...reader.read()].map((e) => e.cause?.type ?? null)).toEqual(['request', 'request', null, 'request']);
    // Read alone, an event whose cause another event holds still has it.
    expect([...reader.read({ name: 'd' })][0]!.cause).toEqual(cause);
    const written = reader.database.prepare('SELECT caused_by FROM events ORDER BY seq').pluck().all();
    expect(written).toEqual([JSON.stringify(cause), '@1', null, '@1']);
    reader.close();
  });

  it('reads a log written before causes were kept, and adds causes to it when it is written again', async () => {
    const path = tempDb();
    const old = new Database(path);
    old.exec(`CREATE TABLE events (seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT NOT NULL, kind TEXT NOT NULL,
      namespace TEXT NOT NULL, name TEXT NOT NULL, payload TEXT NOT NULL, schema_version INTEGER NOT NULL)`);
    old.prepare('INSERT INTO events VALUES (1, 1000, ?, ?, ?, ?, ?, 1)').run('TestHappened', 'Test', 'default', 'a', '{"n":1}');
    old.close();
    const reader = new EventLog(path, { readonly: true });
    expect([...reader.read()].map((e) => [e.seq, e.payload, e.cause])).toEqual([[1, { n: 1 }, undefined]]);
    reader.close();
    const writer = new EventLog(path);
    await writer.append([event('b', 2)], 2000, { type: 'timer', timer: 'test' }).committed;
    expect([...writer.read()].map((e) => e.cause?.type ?? null)).toEqual([null, 'timer']);
    writer.close();
  });

  it("writes a controller's step on its own object short, and reads it back whole", async () => {
    const path = tempDb();
    const log = new EventLog(path);
    const own = { type: 'sync', controller: 'Test', object: { kind: 'Test', namespace: 'default', name: 'a' }, after: 7 } as const;
    const other = { type: 'sync', controller: 'Test', object: { kind: 'Test', namespace: 'default', name: 'b' }, after: 7 } as const;
    await log.append([event('a', 1)], 1000, own).committed;
    await log.append([event('a', 2)], 1000, other).committed;
    log.close();
    const reader = new EventLog(path, { readonly: true });
    expect([...reader.read()].map((e) => e.cause)).toEqual([own, other]);
    expect(reader.database.prepare('SELECT caused_by FROM events ORDER BY seq').pluck().all()).toEqual(['{"type":"sync","after":7}', JSON.stringify(other)]);
    reader.close();
  });
});

/** Events in the database file itself, WAL left aside: what checkpoints have copied into it. */
function eventsInDatabaseFile(path: string): number {
  const copy = `${path}.copy-${Date.now()}`;
  copyFileSync(path, copy);
  const db = new Database(copy);
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events'").get();
    return table ? (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n : 0;
  } finally {
    db.close();
  }
}

describe('EventLog checkpoints', () => {
  it('copies its WAL into the database every COMMITS_PER_CHECKPOINT commits, after they are answered', async () => {
    const path = tempDb();
    const log = new EventLog(path);
    // One event a commit: far fewer WAL pages than SQLite's own checkpoint waits for.
    for (let n = 1; n <= COMMITS_PER_CHECKPOINT; n++) await log.append([event('a', n)], 1000).committed;
    await waitFor(() => eventsInDatabaseFile(path) === COMMITS_PER_CHECKPOINT, { what: 'the WAL checkpointed into the database file' });
    expect([...log.read()]).toHaveLength(COMMITS_PER_CHECKPOINT);
    log.close();
  });
});

describe('EventLog written behind (what-if runs)', () => {
  it('releases each batch at once, writes on its own thread, and has everything in the file when read or closed', async () => {
    const path = tempDb();
    const log = new EventLog(path, { writeBehind: 'rows' });
    const causes = { type: 'startup', detail: 'test' } as const;
    for (let n = 1; n <= 20_000; n++) await log.append([event(`gs-${n % 7}`, n)], 1000 + n, n % 3 === 0 ? causes : undefined).committed;
    // Reading waits for the writer: every event, in order, with its cause.
    const read = [...log.read({ fromSeq: 19_998 })];
    expect(read.map((e) => e.payload)).toEqual([{ n: 19_998 }, { n: 19_999 }, { n: 20_000 }]);
    expect(read.map((e) => e.cause?.type)).toEqual(['startup', undefined, undefined]);
    for (let n = 20_001; n <= 20_010; n++) log.append([event('late', n)], 1000 + n);
    log.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT COUNT(*) AS n, MAX(seq) AS last FROM events').get()).toEqual({ n: 20_010, last: 20_010 });
    db.close();
  });

  it('has the thread write payloads and causes as the same JSON text the main thread writes, int64 past 2^53 exact', async () => {
    const behind = tempDb();
    const inline = tempDb();
    const payload = { count: 2n ** 62n + 1n, capacity: 9_007_199_254_740_993n, labels: { a: 'b' }, absent: undefined, list: [1, 'two'] };
    const cause = { type: 'request', method: 'POST', path: '/x', client: 'c', requestId: 'r' } as const;
    for (const [path, writeBehind] of [[behind, 'rows'], [inline, undefined]] as const) {
      const log = new EventLog(path, { writeBehind });
      await log.append([event('a', 1), { ...event('b', 2), payload }], 1000, cause).committed;
      log.close();
    }
    const rows = (path: string) => {
      const db = new Database(path, { readonly: true });
      const all = db.prepare('SELECT payload, caused_by FROM events ORDER BY seq').all();
      db.close();
      return all;
    };
    expect(rows(behind)).toEqual(rows(inline));
    expect(rows(behind)).toEqual([
      { payload: '{"n":1}', caused_by: JSON.stringify(cause) },
      { payload: '{"count":4611686018427387905,"capacity":9007199254740993,"labels":{"a":"b"},"list":[1,"two"]}', caused_by: '@1' },
    ]);
  });

  it('gives a writer failure to the next reader instead of losing it', async () => {
    const path = tempDb();
    const log = new EventLog(path, { writeBehind: 'rows' });
    // Another connection holds an event with the sequence number the log will use next.
    const other = new Database(path);
    other.prepare("INSERT INTO events (seq, time, type, kind, namespace, name, payload, schema_version) VALUES (1, 0, 'X', 'X', '', 'x', '{}', 1)").run();
    other.close();
    await log.append([event('a', 1)], 1000).committed;
    expect(() => [...log.read()]).toThrow(/the event log's writer failed: UNIQUE constraint failed: events.seq/);
    expect(() => log.close()).toThrow(/writer failed/);
  });
});

describe('EventLog after a failed write', () => {
  it('tells its holder of a failed transaction instead of throwing, then takes no more events and closes without writing', async () => {
    const path = tempDb();
    const log = new EventLog(path);
    await log.append([event('a', 1)], 1000).committed;
    // Another connection takes the sequence numbers the log uses next.
    const other = new Database(path);
    other.prepare("INSERT INTO events (seq, time, type, kind, namespace, name, payload, schema_version) VALUES (2, 0, 'X', 'X', '', 'x', '{}', 1)").run();
    other.close();
    const failures: Array<[string, number]> = [];
    log.onFailed = (error, firstLost) => failures.push([error.message, firstLost]);
    await expect(log.append([event('b', 2), event('b', 3)], 2000).committed).rejects.toThrow(/UNIQUE constraint failed: events.seq/);
    expect(failures).toEqual([['UNIQUE constraint failed: events.seq', 2]]);
    expect(() => log.append([event('c', 4)], 3000)).toThrow('the event log stopped at a failed write: UNIQUE constraint failed: events.seq');
    log.close();
    const file = new Database(path, { readonly: true });
    expect(file.prepare('SELECT seq, type FROM events ORDER BY seq').all()).toEqual([
      { seq: 1, type: 'TestHappened' },
      { seq: 2, type: 'X' },
    ]);
    file.close();
  });
});

describe('a compact log (what-if runs): the events in compressed blocks', () => {
  /** The same events into a log kept as `writeBehind` says, committed `perCommit` at a time. */
  async function written(writeBehind: 'rows' | 'blocks', perCommit: number, timed = true, writerThread = true): Promise<string> {
    const path = tempDb();
    const log = new EventLog(path, { writeBehind, writerThread });
    const cause = { type: 'startup', detail: 'test' } as const;
    for (let n = 1; n <= 3000; n += perCommit) {
      const events = Array.from({ length: Math.min(perCommit, 3001 - n) }, (_, i) => ({ ...event(`gs-${(n + i) % 7}`, n + i), kind: (n + i) % 5 ? 'Test' : 'Other' }));
      // Untimed: every event the same time and cause, whatever commit it is in.
      await log.append(events, timed ? 1000 + n : 1000, !timed || n % 3 === 1 ? cause : undefined).committed;
    }
    log.close();
    return path;
  }

  it('reads back every event as a log of rows does, and opens read-only', async () => {
    const rows = new EventLog(await written('rows', 4), { readonly: true });
    const path = await written('blocks', 4);
    const blocks = new EventLog(path, { readonly: true });
    for (const options of [{}, { fromSeq: 1000, toSeq: 2100 }, { untilTime: 2500 }, { kind: 'Other' }, { namespace: 'default', name: 'gs-3' }]) {
      expect([...blocks.read(options)], JSON.stringify(options)).toEqual([...rows.read(options)]);
    }
    for (const query of [{ limit: 5 }, { limit: 5, fromSeq: 1020 }, { limit: 50, beforeSeq: 1030, kind: 'Other' }, { limit: 2000, fromSeq: 1 }]) {
      expect(blocks.headers(query), JSON.stringify(query)).toEqual(rows.headers(query));
    }
    expect(blocks.bounds()).toEqual(rows.bounds());
    expect([...blocks.history('Test', 'default', 'gs-3')]).toEqual([...rows.history('Test', 'default', 'gs-3')]);
    expect([...blocks.history('Test', 'default', 'gs-3', 2000)]).toEqual([...rows.history('Test', 'default', 'gs-3', 2000)]);
    expect(blocks.eventAt(1500)).toEqual(rows.eventAt(1500));
    expect([...blocks.replay()]).toEqual([...rows.replay()]);
    expect(blocks.lastSeq).toBe(3000);
    // Three blocks of 1,024 events at most, a twelfth of the rows' bytes or so.
    const file = new Database(path, { readonly: true });
    expect(file.prepare('SELECT first_seq, last_seq FROM event_blocks ORDER BY first_seq').raw().all()).toEqual([
      [1, 1024],
      [1025, 2048],
      [2049, 3000],
    ]);
    expect(file.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(0);
    file.close();
    rows.close();
    blocks.close();
    expect(() => new EventLog(path)).toThrow(/is a compact log \(a what-if run's record\): it opens read-only/);
  });

  it('ends its blocks at the same events however they were committed', async () => {
    const blocksOf = (path: string) => {
      const file = new Database(path, { readonly: true });
      const all = file.prepare('SELECT * FROM event_blocks ORDER BY first_seq').all();
      file.close();
      return all;
    };
    expect(blocksOf(await written('blocks', 1, false))).toEqual(blocksOf(await written('blocks', 7, false)));
  });

  it('writes the same file on the thread that appends as on a writer thread, each block as soon as it is complete', async () => {
    const contents = (path: string) => {
      const file = new Database(path, { readonly: true });
      const tables = file.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
      const all = tables.map((table) => [table, file.prepare(`SELECT * FROM ${table}`).raw().all()]);
      file.close();
      return all;
    };
    for (const writeBehind of ['blocks', 'rows'] as const) {
      expect(contents(await written(writeBehind, 5, true, false)), writeBehind).toEqual(contents(await written(writeBehind, 5, true, true)));
    }
    // No thread to wait for: a complete block is in the file once its commit is released.
    const path = tempDb();
    const log = new EventLog(path, { writeBehind: 'blocks', writerThread: false });
    await log.append(Array.from({ length: 1030 }, (_, i) => event(`gs-${i}`, i + 1)), 1000).committed;
    const file = new Database(path, { readonly: true });
    expect(file.prepare('SELECT first_seq, last_seq FROM event_blocks').raw().all()).toEqual([[1, 1024]]);
    file.close();
    log.close();
  });

  it('keeps nothing when told to keep none', async () => {
    const log = new EventLog(':memory:', { writeBehind: 'none' });
    await log.append([event('a', 1), event('b', 2)], 1000).committed;
    expect(log.lastSeq).toBe(2);
    expect([...log.read()]).toEqual([]);
    log.close();
  });
});
