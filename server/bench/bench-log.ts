import { rawInsertRate, sampleEvent, temporaryLog } from './calibration.js';
import { BenchRun } from './record.js';

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
const TARGET = 0.5;

/** Group commit: CONCURRENCY callers, each appending one event at a time and awaiting its commit. */
async function groupCommitted(): Promise<{ rate: number; meanBatch: number }> {
  const { log, cleanup } = temporaryLog();
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
  cleanup();
  return { rate: EVENTS / seconds, meanBatch: EVENTS / transactions };
}

async function main(): Promise<void> {
  const run = BenchRun.start('bench:log');
  console.log(`bench:log — ${EVENTS} events, ${CONCURRENCY} concurrent callers, best of ${ROUNDS} rounds`);
  let best = { group: 0, raw: 0, batch: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    const group = await groupCommitted();
    // The baseline uses the batch size group commit achieved, so the ratio measures the log's overhead.
    const raw = rawInsertRate(EVENTS, Math.max(1, Math.round(group.meanBatch)));
    console.log(
      `round ${round}: group commit ${Math.round(group.rate)} ev/s (mean batch ${group.meanBatch.toFixed(0)}), raw batched inserts ${Math.round(raw)} ev/s, ratio ${(group.rate / raw).toFixed(2)}`,
    );
    if (group.rate / raw > best.group / (best.raw || 1)) best = { group: group.rate, raw, batch: group.meanBatch };
  }
  run.figure({ name: 'committed events/s through group commit', value: best.group, unit: '/s', note: `mean transaction ${Math.round(best.batch)} events` });
  run.figure({ name: 'raw batched inserts of the same rows, same batch size', value: best.raw, unit: '/s' });
  run.figure({
    name: 'group commit / raw inserts (best round)',
    value: best.group / best.raw,
    unit: '×',
    target: { bound: 'min', value: TARGET, basis: 'the log may cost at most half of what SQLite alone takes' },
  });
  if (!run.finish().record.pass) process.exitCode = 1;
}

await main();
