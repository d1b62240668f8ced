import type Database from 'better-sqlite3';
import { inflateRawSync } from 'node:zlib';

/**
 * A compact log's storage (`fleetsim simulate --log compact`, the default for what-if runs): the
 * events in blocks of BLOCK_EVENTS, each one row of `event_blocks` holding the JSON of their rows,
 * compressed. A row of its own costs an event some 80 bytes before its payload (a simulated day
 * has 870,000 of them), and a day's events repeat a few shapes that deflate folds twelvefold: the
 * diurnal day's 370 MB become about 30. Every event is kept, so replay, explain and the dashboard
 * read a compact log as they read any other (EventLog reads blocks where it would read rows).
 *
 * A block's text is a JSON array of rows, each `[seq, time, type, kind, namespace, name, payload,
 * schema_version, caused_by]` with payload and caused_by as the events table holds them (JSON
 * text; caused_by written whole, never as a reference to another row). The writer thread packs
 * them (log-writer.ts, at `BLOCK_LEVEL`); this module reads them back.
 *
 * A compact log is the record of a finished run: once written, it is opened read-only.
 */

export const BLOCKS_TABLE = `CREATE TABLE IF NOT EXISTS event_blocks (
  first_seq INTEGER PRIMARY KEY,
  last_seq INTEGER NOT NULL,
  first_time INTEGER NOT NULL,
  last_time INTEGER NOT NULL,
  events BLOB NOT NULL
)`;

export const INSERT_BLOCK = 'INSERT INTO event_blocks (first_seq, last_seq, first_time, last_time, events) VALUES (?, ?, ?, ?, ?)';

/** Events a block holds: block n holds events n × BLOCK_EVENTS + 1 to (n + 1) × BLOCK_EVENTS (a log read before its run ended may hold a shorter one). */
export const BLOCK_EVENTS = 1024;

/** The columns of a row a block keeps (the events table's, without the index's). */
export const BLOCK_COLUMNS = 9;

/** deflate's fastest level: 12× on a simulated day's rows (the slowest gives 16× for five times the time, on the writer's core). */
export const BLOCK_LEVEL = 1;

/** An event as a row of the events table holds it, and as a block gives it back. */
export interface EventRow {
  seq: number;
  time: number;
  type: string;
  kind: string;
  namespace: string;
  name: string;
  payload: string;
  schema_version: number;
  /** As written: the cause's JSON, or `@<seq>` of the event holding it (never in a block). */
  caused_by: string | null;
  /** The cause's JSON, the reference followed. */
  cause: string | null;
}

/** Blocks kept unpacked: an explanation goes back and forth among a few (an event, its causes nearby). */
const CACHED_BLOCKS = 8;

type PackedRow = [number, number, string, string, string, string, string, number, string | null];

interface BlockSpan {
  first: number;
  last: number;
  firstTime: number;
  lastTime: number;
}

/** Whether a log file holds blocks (is compact). */
export function hasBlocks(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_blocks'").get() !== undefined;
}

/** The blocks of a compact log, read back: rows by sequence number, the log's bounds. */
export class EventBlocks {
  private readonly spansStatement: Database.Statement;
  private readonly blockStatement: Database.Statement;
  /** The blocks read last, unpacked, newest last: readers go through a log in order, or ask for events near each other. */
  private readonly cached = new Map<number, EventRow[]>();

  constructor(db: Database.Database) {
    this.spansStatement = db.prepare('SELECT first_seq AS first, last_seq AS last, first_time AS firstTime, last_time AS lastTime FROM event_blocks ORDER BY first_seq');
    this.blockStatement = db.prepare('SELECT events FROM event_blocks WHERE first_seq = ?').pluck();
  }

  private spans(): BlockSpan[] {
    return this.spansStatement.all() as BlockSpan[];
  }

  private unpack(first: number): EventRow[] {
    const known = this.cached.get(first);
    if (known) return known;
    const packed = JSON.parse(inflateRawSync(this.blockStatement.get(first) as Buffer).toString('utf8')) as PackedRow[];
    const rows = packed.map(([seq, time, type, kind, namespace, name, payload, schemaVersion, causedBy]) => ({
      seq,
      time,
      type,
      kind,
      namespace,
      name,
      payload,
      schema_version: schemaVersion,
      caused_by: causedBy,
      cause: causedBy,
    }));
    this.cached.set(first, rows);
    if (this.cached.size > CACHED_BLOCKS) this.cached.delete(this.cached.keys().next().value!);
    return rows;
  }

  /** Rows with `from <= seq <= to`, in order, or newest first with `descending`. */
  *rows(from: number, to: number, descending = false): Generator<EventRow> {
    const spans = this.spans().filter((s) => s.last >= from && s.first <= to);
    if (descending) spans.reverse();
    for (const span of spans) {
      const rows = this.unpack(span.first);
      const start = descending ? rows.length - 1 : 0;
      for (let i = start; descending ? i >= 0 : i < rows.length; i += descending ? -1 : 1) {
        const row = rows[i]!;
        if (row.seq >= from && row.seq <= to) yield row;
      }
    }
  }

  /** The first and the last event's sequence number and time; undefined when there is none. */
  bounds(): { first: { seq: number; time: number }; last: { seq: number; time: number } } | undefined {
    const spans = this.spans();
    if (spans.length === 0) return undefined;
    const first = spans[0]!;
    const last = spans[spans.length - 1]!;
    return { first: { seq: first.first, time: first.firstTime }, last: { seq: last.last, time: last.lastTime } };
  }
}
