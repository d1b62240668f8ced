import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventLog } from './event-log.js';

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

  it('refuses to change or delete what was written', async () => {
    const log = new EventLog(':memory:');
    await log.append([event('a', 1)], 1000).committed;
    expect(() => log.database.exec("UPDATE events SET type = 'x'")).toThrow(/append-only/);
    expect(() => log.database.exec('DELETE FROM events')).toThrow(/append-only/);
    log.close();
  });
});
