import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A thread that writes a write-behind log's rows into its SQLite file, on the machine's other
 * core: a what-if run's main thread then spends nothing on inserts (a quarter of a simulated
 * day's time when they ran inline). Rows arrive as flat arrays of column values; `drain()` blocks
 * until every batch sent is in the file, for a reader or for closing.
 *
 * The thread's code is given as source (`eval`), so it runs the same from the compiled build and
 * from the TypeScript sources the tests import; it finds better-sqlite3 where this module does.
 */
const WRITER_SOURCE = `
const progress = new Int32Array(workerData.progress);
const failure = new Uint8Array(workerData.failure);
// A failure (here or in a write) is kept for the main thread, which may be blocked waiting: every
// message is still counted, so it never waits forever.
const fail = (error) => {
  if (Atomics.load(progress, 1) !== 0) return;
  failure.set(new TextEncoder().encode(String((error && error.message) || error)).subarray(0, failure.length));
  Atomics.store(progress, 1, 1);
};
let db;
let write;
try {
  const Database = require(workerData.sqlite);
  db = new Database(workerData.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare(workerData.rows.sql);
  const width = workerData.rows.width;
  const { json, jsonUnlessText } = workerData;
  const insertExtra = workerData.extra && db.prepare(workerData.extra.sql);
  // As stringifyJsonExact (server/log/json.ts): JSON.stringify, or lossless-json when there is a bigint.
  let lossless;
  const exact = (value) => {
    try {
      return JSON.stringify(value);
    } catch (error) {
      if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error;
      lossless ??= require(workerData.losslessJson);
      return lossless.stringify(value) ?? 'null';
    }
  };
  // The row's first \`columns\` values (a block keeps fewer than the table has), its JSON columns as text.
  const rowAt = (values, i, columns) => {
    const row = values.slice(i, i + columns);
    for (const column of json) row[column] = exact(row[column]);
    for (const column of jsonUnlessText) if (typeof row[column] === 'object' && row[column] !== null) row[column] = exact(row[column]);
    return row;
  };
  // A block (event-blocks.ts): the rows' first block.columns columns as JSON, deflated, in one row of first and last seq and time.
  const { deflateRawSync } = require('node:zlib');
  const { block } = workerData;
  const insertRows = block
    ? (values) => {
        const rows = [];
        for (let i = 0; i < values.length; i += width) rows.push(rowAt(values, i, block.columns));
        const first = rows[0];
        const last = rows[rows.length - 1];
        insert.run(first[0], last[0], first[1], last[1], deflateRawSync(JSON.stringify(rows), { level: block.level }));
      }
    : (values) => {
        for (let i = 0; i < values.length; i += width) insert.run(rowAt(values, i, width));
      };
  write = db.transaction(([values, extra]) => {
    insertRows(values);
    for (let i = 0; i < extra.length; i += workerData.extra.width) insertExtra.run(extra.slice(i, i + workerData.extra.width));
  });
} catch (error) {
  fail(error);
}
const handle = (values) => {
  try {
    if (values === null) db && db.close();
    else if (Atomics.load(progress, 1) === 0) write(values);
  } catch (error) {
    fail(error);
  }
  Atomics.add(progress, 0, 1);
  Atomics.notify(progress, 0);
};
`;

const THREAD_SOURCE = `const { parentPort, workerData } = require('node:worker_threads');
${WRITER_SOURCE}
parentPort.on('message', handle);
`;

export class LogWriterThread {
  /** The thread, or undefined when the writer runs on the caller's thread (`inline`). */
  private readonly worker: Worker | undefined;
  private readonly handle: ((message: [unknown[], unknown[]] | null) => void) | undefined;
  /** [0]: messages handled; [1]: 1 once a write failed (its message in `failure`). */
  private readonly progress = new Int32Array(new SharedArrayBuffer(8));
  private readonly failure = new Uint8Array(new SharedArrayBuffer(1024));
  private sent = 0;

  /**
   * `rows.sql` inserts one row of `rows.width` values. The columns in `json` are sent as values and
   * written as their exact JSON; those in `jsonUnlessText` likewise, unless text or null already.
   * `extra` inserts rows of another table that go with them, written as they are, in the same transaction.
   * With `encode.block`, the rows of each batch are packed into one block (event-blocks.ts), which
   * `rows.sql` inserts as (first seq, last seq, first time, last time, packed rows).
   * `inline` runs the same writer on the caller's thread, at each write: when every core is busy
   * anyway, handing rows to a thread costs more (copying them there) than writing them.
   */
  constructor(
    path: string,
    rows: { sql: string; width: number },
    encode: { json: number[]; jsonUnlessText: number[]; block?: { level: number; columns: number } } = { json: [], jsonUnlessText: [] },
    extra?: { sql: string; width: number },
    inline = false,
  ) {
    const require = createRequire(import.meta.url);
    const workerData = {
      sqlite: require.resolve('better-sqlite3'),
      losslessJson: require.resolve('lossless-json'),
      ...encode,
      path,
      rows,
      extra,
      progress: this.progress.buffer,
      failure: this.failure.buffer,
    };
    if (inline) {
      // The thread's own code, given the require and workerData it would have.
      this.handle = new Function('require', 'workerData', `${WRITER_SOURCE}\nreturn handle;`)(require, workerData) as LogWriterThread['handle'];
      return;
    }
    this.worker = new Worker(THREAD_SOURCE, { eval: true, workerData });
    this.worker.unref();
  }

  /** Queues rows (`width` values each, in column order), and the extra rows that go with them, for one transaction. */
  write(values: unknown[], extra: unknown[] = []): void {
    this.check();
    this.sent++;
    if (this.handle) this.handle([values, extra]);
    else this.worker!.postMessage([values, extra]);
  }

  /** Blocks until every batch sent is written; throws the writer's error, if one failed. */
  drain(): void {
    for (;;) {
      const done = Atomics.load(this.progress, 0);
      if (done >= this.sent) break;
      Atomics.wait(this.progress, 0, done);
    }
    this.check();
  }

  /** Writes what is queued, closes the thread's connection, and ends the thread. */
  close(): void {
    this.sent++;
    if (this.handle) this.handle(null);
    else this.worker!.postMessage(null);
    try {
      this.drain();
    } finally {
      void this.worker?.terminate();
    }
  }

  private check(): void {
    if (Atomics.load(this.progress, 1) === 0) return;
    const end = this.failure.indexOf(0);
    throw new Error(`the event log's writer failed: ${new TextDecoder().decode(this.failure.slice(0, end < 0 ? undefined : end))}`);
  }
}
