import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Cause } from './cause.js';
import { parseJsonExact, stringifyJsonExact } from './json.js';
import { BLOCKS_TABLE, BLOCK_COLUMNS, BLOCK_EVENTS, BLOCK_LEVEL, EventBlocks, type EventRow as Row, INSERT_BLOCK, hasBlocks } from './event-blocks.js';
import { LogWriterThread } from './log-writer.js';
import { WalCheckpoints } from './wal-checkpoints.js';
import { ADD_INDEX_COLUMN, LINKS_COLUMNS, LINKS_TABLE, ObjectHeads, type ObjectEvents, SCAN_PAGE, nextOf } from './object-index.js';

/** What a command handler asks to append: the log adds the sequence number and the time. */
export interface NewEvent<P = unknown> {
  type: string;
  kind: string;
  namespace: string;
  name: string;
  payload: P;
}

export interface StoredEvent<P = unknown> extends NewEvent<P> {
  seq: number;
  /** Milliseconds since the epoch, from the injected clock. */
  time: number;
  schemaVersion: number;
  /** What caused the commit this event belongs to; absent in logs written before causes were kept. */
  cause?: Cause;
}

export const SCHEMA_VERSION = 1;

/** An append to a log already closed (the server stopping): refused, nothing written. */
export class LogClosedError extends Error {
  override readonly name = 'LogClosedError';
  constructor() {
    super('the event log is closed');
  }
}

export interface ReadOptions {
  /** First sequence number to read (inclusive). */
  fromSeq?: number;
  /** Last sequence number to read (inclusive). */
  toSeq?: number;
  /** Last event time to read (inclusive, ms since the epoch). */
  untilTime?: number;
  kind?: string;
  namespace?: string;
  name?: string;
}

/** An event without its payload: what a listing of the log shows. */
export type EventHeader = Omit<StoredEvent, 'payload' | 'schemaVersion'>;

/** A page of event headers: `fromSeq` pages forward from a point, otherwise back from `beforeSeq` (default: the newest). */
export interface HeaderQuery {
  fromSeq?: number;
  beforeSeq?: number;
  limit: number;
  kind?: string;
}


/** A row with its links (server/log/object-index.ts), those of a row from before the index read from event_links. */
interface LinkedRow extends Row {
  prev: number | null;
  member_prev: string | null;
}

/** `caused_by` with a reference followed (by primary key, in the same query). */
const CAUSE_RESOLVED = `CASE WHEN substr(caused_by, 1, 1) = '@'
  THEN (SELECT origin.caused_by FROM events AS origin WHERE origin.seq = CAST(substr(events.caused_by, 2) AS INTEGER))
  ELSE caused_by END`;

/**
 * The most frequent cause — a controller acting on one object's own change (the GameServer
 * controller's steps), committed alone — written short: `{"type":"sync","after":N}`, its
 * controller and object read back from the event's row. Undefined for any other cause.
 */
function ownSyncText(cause: Cause, event: NewEvent): string | undefined {
  if (cause.type !== 'sync' || cause.inputs !== undefined || cause.controller !== event.kind) return undefined;
  const { object } = cause;
  if (object.kind !== event.kind || object.namespace !== event.namespace || object.name !== event.name) return undefined;
  return cause.after === undefined ? '{"type":"sync"}' : `{"type":"sync","after":${cause.after}}`;
}

/** A cause read back; one referred to by many events is parsed once (`parsed`, by reference). */
function parseCause(written: string, text: string, parsed: Map<string, Cause>, row: Row): Cause {
  if (!written.startsWith('@')) {
    const cause = JSON.parse(text) as Cause;
    // Written short (see ownSyncText): the controller and the object are the event's own.
    if (cause.type === 'sync' && cause.object === undefined) {
      return { type: 'sync', controller: row.kind, object: { kind: row.kind, namespace: row.namespace, name: row.name }, ...(cause.after !== undefined && { after: cause.after }) };
    }
    return cause;
  }
  let cause = parsed.get(written);
  if (cause === undefined) {
    cause = JSON.parse(text) as Cause;
    parsed.set(written, cause);
  }
  return cause;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  type TEXT NOT NULL,
  kind TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  payload TEXT NOT NULL,
  schema_version INTEGER NOT NULL
);
DROP INDEX IF EXISTS events_by_object;
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
  BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
`;

/**
 * Each event's cause, in its own row: the cause as JSON on the first event that records it, and
 * `@<seq>` of that event on the others (a set's scale-down: many events, one cause), so a cause is
 * written once and costs no row of its own.
 */
const ADD_CAUSE_COLUMN = 'ALTER TABLE events ADD COLUMN caused_by TEXT';

const COLUMNS = '(seq, time, type, kind, namespace, name, payload, schema_version, caused_by, prev)';
const PARAMS_PER_ROW = 10;
const PAYLOAD_COLUMN = 6;
const CAUSE_COLUMN = 8;
const PREV_COLUMN = 9;

/**
 * How a write-behind log keeps what it writes: a row per event, the events in compressed blocks
 * (event-blocks.ts: a what-if run's compact log), or nothing at all (a run that needs no log).
 */
export type WriteBehind = 'rows' | 'blocks' | 'none';

/** What `caused_by` will hold: the cause (written as JSON), its text already, or none. */
type CauseColumn = Cause | string | null;
const EVENT_FIELDS = ['seq', 'time', 'type', 'kind', 'namespace', 'name', 'payload', 'schema_version'].map((f) => `events.${f}`).join(', ');


/**
 * Writes an event's row into `rows` from `at` on (`PARAMS_PER_ROW` values, in COLUMNS order), its
 * payload and a cause still objects, to be written as their JSON by `encodeJsonColumns` (here) or
 * by the writer thread. Handing the objects over costs the main thread no more than writing their
 * JSON and handing the text over, and the thread is idle. Written at `rows.length`, the values
 * append, so the array stays packed: a holey one (`new Array(n)`) is cloned element by element
 * with its index, a quarter slower.
 */
function setRow(e: StoredEvent, cause: CauseColumn, rows: unknown[], at: number): void {
  rows[at] = e.seq;
  rows[at + 1] = e.time;
  rows[at + 2] = e.type;
  rows[at + 3] = e.kind;
  rows[at + 4] = e.namespace;
  rows[at + 5] = e.name;
  rows[at + PAYLOAD_COLUMN] = e.payload;
  rows[at + 7] = e.schemaVersion;
  rows[at + CAUSE_COLUMN] = cause;
}

/** No payload yet: `PayloadTexts` starts with nothing remembered. */
const NO_PAYLOAD = Symbol('no payload');

/**
 * The JSON of a transaction's payloads, the last one remembered: events that share a payload
 * object (allocations of one instant) have it written once. Forgotten as each transaction starts:
 * the texts are those of the payloads as they stand when the transaction writes them.
 */
class PayloadTexts {
  private payload: unknown = NO_PAYLOAD;
  private text = '';

  of(payload: unknown): string {
    if (payload !== this.payload) {
      this.text = stringifyJsonExact(payload);
      this.payload = payload;
    }
    return this.text;
  }

  forget(): void {
    this.payload = NO_PAYLOAD;
    this.text = '';
  }
}

/** The row at `params[at]`: its payload and a cause given as an object, as their JSON. */
function encodeJsonColumns(params: unknown[], at: number, payloads: PayloadTexts): void {
  params[at + PAYLOAD_COLUMN] = payloads.of(params[at + PAYLOAD_COLUMN]);
  const cause = params[at + CAUSE_COLUMN];
  if (typeof cause === 'object' && cause !== null) params[at + CAUSE_COLUMN] = JSON.stringify(cause);
}

/** The `i`th (seq, prev, member_prev) of `triples` into `params` from `at`. */
function copyTriple(triples: unknown[], i: number, params: unknown[], at: number): void {
  params[at] = triples[i * 3];
  params[at + 1] = triples[i * 3 + 1];
  params[at + 2] = triples[i * 3 + 2];
}

/**
 * Rows per multi-row INSERT, largest first: a batch is written 64 rows a statement, the rest 16,
 * then 4, then one at a time. A group commit of a few dozen requests' events (a sidecar under
 * load) then costs a few native calls rather than one per row.
 */
const ROWS_PER_STATEMENT = [64, 16, 4, 1];

/**
 * Inserts `count` rows through the multi-row statements of ROWS_PER_STATEMENT.
 * `fill(i, params, at)` writes row i's values into `params` from index `at`.
 */
function rowInserter(db: Database.Database, into: string, width: number) {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  const statements = ROWS_PER_STATEMENT.map((rows) => ({
    rows,
    statement: db.prepare(`INSERT INTO ${into} VALUES ${Array.from({ length: rows }, () => row).join(', ')}`),
    params: new Array<unknown>(rows * width),
  }));
  return (count: number, fill: (i: number, params: unknown[], at: number) => void): void => {
    let i = 0;
    for (const { rows, statement, params } of statements) {
      for (; i + rows <= count; i += rows) {
        for (let j = 0; j < rows; j++) fill(i + j, params, j * width);
        statement.run(params);
      }
    }
  };
}

/** Most events one transaction takes before it is flushed without waiting for the loop to turn. */
const MAX_BATCH = 4096;

/**
 * Events a write-behind log gathers before it writes them, in one transaction. Few enough that
 * they are handed over before a young-generation collection must copy them (16,384 kept a rooms
 * day's scavenges 20 % longer), and that their rows' array stays below V8's large-object size
 * (128 KiB; 2,048 rows of 9 values were over it); the writer thread has time for the extra
 * transactions.
 */
const WRITE_BEHIND_EVENTS = 1024;

/**
 * The append-only event log: the source of truth (DESIGN §1).
 *
 * Group commit: `append` gives events their sequence numbers at once (so the read model can move
 * on) and queues them; every event queued during one turn of the event loop is written in a
 * single transaction, and `append`'s promise resolves only after that transaction commits. A
 * caller answers its client after the promise, so nothing acknowledged can be lost.
 */
export class EventLog {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly insertBatch: (events: StoredEvent[], causes: CauseColumn[], prevs: number[]) => void;
  /** Whether the file keeps causes (a log written before them, opened read-only, does not). */
  private readonly keepsCauses: boolean;
  /** Whether the file has the index columns (a log written before them, opened read-only, does not). */
  private readonly indexed: boolean;
  private readonly readonly: boolean;
  private readonly objectEvents: ObjectEvents | undefined;
  /** The newest event of each object, for the links of the rows this log writes and for `history`. */
  private readonly heads: ObjectHeads;
  /** The heads hold every row up to this one (see `learn`). */
  private learnedThrough = 0;
  /** The last row in the file when it was opened: the heads must learn up to it before use. */
  private readonly openedThrough: number;
  /** The last row of event_links (rows from before the index are linked up to it). */
  private linkedThrough = 0;
  /** Rows from before the index learned but not yet linked: (seq, prev, member_prev) triples. */
  private unlinked: unknown[] = [];
  /** event_links rows of the rows being written (batches whose members had earlier namesakes): triples too. */
  private newLinks: unknown[] = [];
  /** Statements reading one row by sequence number (prepared once: an explanation reads thousands). */
  private eventStatement: Database.Statement | undefined;
  private linkedRowStatement: Database.Statement | undefined;
  private nextSeq: number;
  private pending: StoredEvent[] = [];
  /** The `caused_by` of each pending event, in the same order. */
  private pendingCauses: CauseColumn[] = [];
  /** The `prev` of each pending event the caller gave (`follows`), in the same order; -1: the heads find it. */
  private pendingPrevs: number[] = [];
  /**
   * The newest event of an object whose events the caller links itself (`follows`): the objects
   * its store holds. Undefined for any other object, whose newest event the heads know.
   */
  liveHead: ((kind: string, namespace: string, name: string) => number | undefined) | undefined;
  /**
   * The cause written last and where: the events of one commit, and the commits one sync makes in
   * a row (a set's scale-down), refer to it. (Not a map of every cause: that cost more than it saved.)
   */
  private lastCause: Cause | undefined;
  private lastCauseSeq = 0;
  /** `@<lastCauseSeq>`, made when first referred to: most causes (a request's) are written once. */
  private lastCauseRef: string | undefined;
  /** The promise every append of the batch being gathered shares (one per transaction). */
  private batch: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;
  private flushScheduled = false;
  private closed = false;
  private readonly flushWhenFull: boolean;
  /** Write-behind: batches released but not yet written (see the constructor). */
  private readonly writeBehind: WriteBehind | undefined;
  private readonly writerThread: boolean;
  /** A compact log's blocks (event-blocks.ts), read in place of rows. */
  private readonly blocks: EventBlocks | undefined;
  /** Write-behind: the rows released but not yet handed to the writer (`setRow`'s). */
  private unwritten: unknown[] = [];
  /** Write-behind: the thread that inserts the gathered batches (started by the first). */
  private writer: LogWriterThread | undefined;
  /** A file written on this thread: its WAL checkpointed off the commit path. */
  private readonly checkpoints: WalCheckpoints | undefined;

  /**
   * Called synchronously after each transaction commits, before any append's promise resolves:
   * the one moment at which everything appended so far is durable and nothing newer is queued.
   */
  onCommitted: (() => void) | undefined;

  /**
   * Told, instead of a throw, when a transaction fails (SQLite has rolled it back): `firstLost` is
   * the first sequence number it held. The log then takes no more events; its holder stops.
   */
  onFailed: ((error: Error, firstLost: number) => void) | undefined;
  private failure: Error | undefined;

  /**
   * `flushWhenFull: false` leaves a full batch to the caller's `flushIfFull()`, for a caller that
   * has more to do with the records (project them) before they may commit.
   *
   * `objectEvents` tells the index by object which events create several objects and which end
   * one; `maxEndedHeads` how many ended objects it keeps the heads of (server/log/object-index.ts).
   *
   * `writeBehind` releases each batch at once and writes batches to the file together, many
   * thousands of events per transaction, on a thread of their own (and waits for it before
   * reading or closing): for a what-if run, whose log is its record rather than a promise made to
   * a client. A transaction per turn of the loop costs a page or two written per commit, however
   * few its events, and the inserts themselves took a quarter of a simulated day's time. Its
   * value says how the events are kept (`WriteBehind`). `writerThread: false` writes them on this
   * thread instead, as they are handed over: when other processes keep every core busy, copying
   * the rows to a thread costs more than writing them.
   */
  constructor(
    path: string,
    options: { readonly?: boolean; flushWhenFull?: boolean; writeBehind?: WriteBehind; writerThread?: boolean; objectEvents?: ObjectEvents; maxEndedHeads?: number } = {},
  ) {
    this.path = path;
    this.flushWhenFull = options.flushWhenFull ?? true;
    this.writeBehind = options.writeBehind;
    this.writerThread = options.writerThread ?? true;
    this.readonly = options.readonly ?? false;
    this.objectEvents = options.objectEvents;
    this.heads = new ObjectHeads(options.maxEndedHeads);
    if (options.readonly) {
      if (!existsSync(path)) throw new Error(`no event log at ${path}`);
      this.db = new Database(path, { readonly: true, fileMustExist: true });
    } else {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      this.db = new Database(path);
      this.db.pragma('journal_mode = WAL');
      // WAL + NORMAL: a commit is in the WAL file before we answer, which survives a killed process.
      this.db.pragma('synchronous = NORMAL');
      // SQLite's own default page cache (better-sqlite3 builds with 16 MB): appends touch only the
      // table's right edge and reads scan, so a bigger cache only grew a sidecar's resident memory.
      this.db.pragma('cache_size = -2000');
      // A log written behind is written by its writer thread's connection, which checkpoints as SQLite does.
      if (path !== ':memory:' && !options.writeBehind) this.checkpoints = new WalCheckpoints(this.db, `${path}-wal`);
      this.db.exec(SCHEMA);
      // A log from before causes were kept gains the column; its old events keep none.
      if (!this.hasColumn('caused_by')) this.db.exec(ADD_CAUSE_COLUMN);
      // Likewise the index's column; its old rows are linked in event_links (see `learn`).
      if (!this.hasColumn('prev')) this.db.exec(ADD_INDEX_COLUMN);
      this.db.exec(LINKS_TABLE);
      this.linkedThrough = (this.db.prepare('SELECT MAX(seq) AS seq FROM event_links').get() as { seq: number | null }).seq ?? 0;
      if (options.writeBehind === 'blocks') this.db.exec(BLOCKS_TABLE);
      else if (hasBlocks(this.db)) {
        this.db.close();
        throw new Error(`${path} is a compact log (a what-if run's record): it opens read-only (fleetsim replay, explain, serve --read-only)`);
      }
    }
    this.blocks = hasBlocks(this.db) ? new EventBlocks(this.db) : undefined;
    this.keepsCauses = this.hasColumn('caused_by');
    this.indexed = this.hasColumn('prev') && this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'event_links'").get() !== undefined;
    // A read-only log (perhaps from before causes) is never written: nothing to prepare.
    this.insertBatch = options.readonly
      ? () => {
          throw new Error('the event log is read-only');
        }
      : this.prepareInsertBatch();
    const last = this.blocks ? { seq: this.blocks.bounds()?.last.seq ?? null } : (this.db.prepare('SELECT MAX(seq) AS seq FROM events').get() as { seq: number | null });
    this.nextSeq = (last.seq ?? 0) + 1;
    this.openedThrough = last.seq ?? 0;
  }

  /** The transaction that writes a batch of events in this thread, each row straight into the statement's parameters. */
  private prepareInsertBatch(): (events: StoredEvent[], causes: CauseColumn[], prevs: number[]) => void {
    const insertEvents = rowInserter(this.db, `events ${COLUMNS}`, PARAMS_PER_ROW);
    const insertLinks = rowInserter(this.db, LINKS_COLUMNS, 3);
    const payloads = new PayloadTexts();
    return this.db.transaction((events: StoredEvent[], causes: CauseColumn[], prevs: number[]) => {
      payloads.forget();
      insertEvents(events.length, (i, params, p) => {
        setRow(events[i]!, causes[i]!, params, p);
        this.setLinks(events[i]!, prevs[i]!, params, p);
        encodeJsonColumns(params, p, payloads);
      });
      this.learnedThrough = events[events.length - 1]!.seq;
      if (this.newLinks.length === 0) return;
      const links = this.newLinks;
      this.newLinks = [];
      insertLinks(links.length / 3, (i, params, p) => copyTriple(links, i, params, p));
    });
  }

  private hasColumn(name: string): boolean {
    return this.db.prepare("SELECT 1 FROM pragma_table_info('events') WHERE name = ?").get(name) !== undefined;
  }

  /** Writes the event's link into its row (`rows` from `at`) and makes it its objects' newest event; `given`: its `prev` from `follows`, or -1. */
  private setLinks(e: StoredEvent, given: number, rows: unknown[], at: number): void {
    const prev = given < 0 ? this.advance(e) : this.followed(e, given);
    rows[at + PREV_COLUMN] = prev;
    if (e.name !== '') return;
    const memberPrev = this.advanceMembers(e);
    if (memberPrev !== null) this.newLinks.push(e.seq, prev, memberPrev);
  }

  /** Makes `e` its object's newest event (one that ends it, its last); returns the event it follows. */
  private advance(e: StoredEvent): number {
    const prev = this.heads.advance(e.kind, e.namespace, e.name, e.seq);
    if (e.name !== '' && this.objectEvents?.ends(e)) this.heads.end(e.kind, e.namespace, e.name, e.seq);
    return prev;
  }

  /**
   * An event whose `prev` the caller gave: its object's head is the caller's (`liveHead`), and the
   * heads take it only when the event ends the object, so that they know where its history ended.
   */
  private followed(e: StoredEvent, prev: number): number {
    if (this.objectEvents?.ends(e)) this.advance(e);
    return prev;
  }

  /** For an event under no name that creates objects: it becomes each one's newest; `member_prev` when any had a namesake. */
  private advanceMembers(e: StoredEvent): string | null {
    const members = this.objectEvents?.membersOf(e);
    return members === undefined ? null : this.heads.advanceMembers(e.kind, e.namespace, members, e.seq);
  }

  /**
   * Takes a row already in the file into the heads, in sequence order (the store's replay at
   * start, or `learnRest`). A row from before the index gets its links computed here, kept for
   * event_links.
   */
  private learn(event: StoredEvent, prevInFile: number | null): void {
    if (event.seq <= this.learnedThrough) return;
    const prev = this.advance(event);
    const memberPrev = event.name === '' ? this.advanceMembers(event) : null;
    if (prevInFile === null && event.seq > this.linkedThrough) this.unlinked.push(event.seq, prev, memberPrev);
    this.learnedThrough = event.seq;
  }

  /** The heads learn what the file held when opened and they have not seen yet; rows from before the index are linked. */
  private learnRest(): void {
    if (this.readonly || this.learnedThrough >= this.openedThrough) return;
    const rows = this.db
      .prepare(`SELECT seq, type, kind, namespace, name, CASE WHEN name = '' THEN payload END AS payload, prev FROM events WHERE seq > ? AND seq <= ? ORDER BY seq`)
      .iterate(this.learnedThrough, this.openedThrough) as IterableIterator<{ seq: number; type: string; kind: string; namespace: string; name: string; payload: string | null; prev: number | null }>;
    for (const row of rows) {
      const payload = row.payload === null ? null : parseJsonExact(row.payload);
      this.learn({ ...row, payload, time: 0, schemaVersion: SCHEMA_VERSION }, row.prev);
    }
    this.linkUnlinked();
  }

  /** Writes the links of rows from before the index into event_links, once. */
  private linkUnlinked(): void {
    if (this.unlinked.length === 0) return;
    const triples = this.unlinked;
    this.unlinked = [];
    const insert = rowInserter(this.db, LINKS_COLUMNS, 3);
    this.db.transaction(() => insert(triples.length / 3, (i, params, at) => copyTriple(triples, i, params, at)))();
    this.linkedThrough = triples[triples.length - 3] as number;
  }

  /** Sequence number of the last event appended (committed or queued); 0 for an empty log. */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Whether `close()` was called: the log takes no more events. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether events are queued that no transaction has committed yet. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /**
   * Numbers and queues events for the next group commit. The returned records are final; the
   * promise resolves once they are durable.
   */
  append(events: readonly NewEvent[], time: number, cause?: Cause): { records: StoredEvent[]; committed: Promise<void> } {
    if (this.closed) throw new LogClosedError();
    if (this.readonly) throw new Error(`the event log ${this.path} is open read-only`);
    if (this.failure) throw new Error(`the event log stopped at a failed write: ${this.failure.message}`);
    const records: StoredEvent[] = events.map((e) => ({
      seq: this.nextSeq++,
      time,
      type: e.type,
      kind: e.kind,
      namespace: e.namespace,
      name: e.name,
      payload: e.payload,
      schemaVersion: SCHEMA_VERSION,
      cause,
    }));
    const own = cause && records.length === 1 ? ownSyncText(cause, records[0]!) : undefined;
    if (own !== undefined) {
      this.pending.push(records[0]!);
      this.pendingCauses.push(own);
      this.pendingPrevs.push(-1);
    } else {
      for (const r of records) {
        this.pending.push(r);
        this.pendingCauses.push(cause ? this.causeColumn(cause, r.seq) : null);
        this.pendingPrevs.push(-1);
      }
    }
    if (!this.batch) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.batch = { promise, resolve, reject };
    }
    const committed = this.batch.promise;
    if (this.flushWhenFull) this.flushIfFull();
    else this.scheduleFlush();
    return { records, committed };
  }

  /**
   * The caller tells the index where the history of the object of `seq` (appended, not yet
   * written) goes on: `prev`, the object's event before it, which the caller holds (its store's
   * newest version of the object), so the heads need not find it. The caller then gives the `prev`
   * of every event of that object and answers `liveHead` for it, until an event ends it.
   */
  follows(seq: number, prev: number): void {
    this.pendingPrevs[seq - this.pending[0]!.seq] = prev;
  }

  /** Commits at once when a batch has reached its largest size; otherwise at the loop's next turn. */
  flushIfFull(): void {
    if (this.pending.length >= MAX_BATCH) this.flush();
    else this.scheduleFlush();
  }

  /** Writes every queued event in one transaction and releases the callers waiting on them. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const events = this.pending;
    const causes = this.pendingCauses;
    const prevs = this.pendingPrevs;
    const batch = this.batch;
    this.pending = [];
    this.pendingCauses = [];
    this.pendingPrevs = [];
    this.batch = undefined;
    try {
      this.learnRest();
      // Another thread cannot reach an in-memory database: such a log writes here, as it goes.
      if (this.writeBehind === 'none') {
        // Numbered and applied, kept nowhere.
      } else if (this.writeBehind && this.path !== ':memory:') this.gather(events, causes, prevs);
      else {
        this.insertBatch(events, causes, prevs);
        this.checkpoints?.committed();
      }
    } catch (error) {
      // The read model is already ahead of the log: the only safe way on is to stop and let a
      // restart rebuild state from what was committed. No caller was answered.
      this.failure = error instanceof Error ? error : new Error(String(error));
      batch?.reject(error);
      if (!this.onFailed) throw error;
      this.onFailed(this.failure, events[0]!.seq);
      return;
    }
    try {
      this.onCommitted?.();
    } finally {
      batch?.resolve();
    }
  }

  /** Write-behind: keeps a released batch, and writes what is kept once there is enough. */
  private gather(events: StoredEvent[], causes: CauseColumn[], prevs: number[]): void {
    const blocks = this.writeBehind === 'blocks';
    for (let i = 0; i < events.length; i++) {
      const at = this.unwritten.length;
      setRow(events[i]!, causes[i]!, this.unwritten, at);
      // Blocks are read by a scan: they need no index.
      if (blocks) this.unwritten[at + PREV_COLUMN] = null;
      else this.setLinks(events[i]!, prevs[i]!, this.unwritten, at);
    }
    this.learnedThrough = events[events.length - 1]!.seq;
    if (blocks) this.writeFullBlocks();
    else if (this.unwritten.length >= WRITE_BEHIND_EVENTS * PARAMS_PER_ROW) this.writeUnwritten();
  }

  /**
   * Hands each block that is complete to the writer: a block ends at every BLOCK_EVENTS-th event,
   * so the file depends on the events alone, not on how many a commit held.
   */
  private writeFullBlocks(): void {
    for (;;) {
      const first = this.unwritten[0] as number | undefined;
      if (first === undefined) return;
      const size = (BLOCK_EVENTS - ((first - 1) % BLOCK_EVENTS)) * PARAMS_PER_ROW;
      if (this.unwritten.length < size) return;
      this.writeRows(this.unwritten.length === size ? this.unwritten.splice(0) : this.unwritten.splice(0, size));
    }
  }

  /** Hands what a write-behind log has kept to its writer thread. */
  private writeUnwritten(): void {
    if (this.unwritten.length === 0) return;
    const rows = this.unwritten;
    this.unwritten = [];
    this.writeRows(rows);
  }

  private writeRows(rows: unknown[]): void {
    const links = this.newLinks;
    this.newLinks = [];
    const encode = { json: [PAYLOAD_COLUMN], jsonUnlessText: [CAUSE_COLUMN] };
    this.writer ??=
      this.writeBehind === 'blocks'
        ? new LogWriterThread(this.path, { sql: INSERT_BLOCK, width: PARAMS_PER_ROW }, { ...encode, block: { level: BLOCK_LEVEL, columns: BLOCK_COLUMNS } }, undefined, !this.writerThread)
        : new LogWriterThread(
            this.path,
            { sql: `INSERT INTO events ${COLUMNS} VALUES (${Array.from({ length: PARAMS_PER_ROW }, () => '?').join(', ')})`, width: PARAMS_PER_ROW },
            encode,
            { sql: `INSERT INTO ${LINKS_COLUMNS} VALUES (?, ?, ?)`, width: 3 },
            !this.writerThread,
          );
    this.writer.write(rows, links);
  }

  /** Before reading the file: everything appended is in it. */
  private written(): void {
    this.writeUnwritten();
    this.writer?.drain();
  }

  /** Events in sequence order, optionally bounded and filtered to one object. */
  *read(options: ReadOptions = {}): Generator<StoredEvent> {
    this.written();
    const where: string[] = ['seq >= @fromSeq'];
    const params: Record<string, string | number> = { fromSeq: options.fromSeq ?? 1 };
    if (options.toSeq !== undefined) {
      where.push('seq <= @toSeq');
      params.toSeq = options.toSeq;
    }
    if (options.untilTime !== undefined) {
      where.push('time <= @untilTime');
      params.untilTime = options.untilTime;
    }
    for (const key of ['kind', 'namespace', 'name'] as const) {
      const value = options[key];
      if (value !== undefined) {
        where.push(`events.${key} = @${key}`);
        params[key] = value;
      }
    }
    // A cause written once and referred to by later events is parsed once per read.
    const parsed = new Map<string, Cause>();
    const rows = this.blocks
      ? this.blockRows(options)
      : (this.db.prepare(`${this.selectEvents('none')} WHERE ${where.join(' AND ')} ORDER BY seq`).iterate(params) as IterableIterator<Row>);
    for (const row of rows) yield this.storedEvent(row, parsed);
  }

  /** A compact log's rows that `read` asks for. */
  private *blockRows(options: ReadOptions): Generator<Row> {
    for (const row of this.blocks!.rows(options.fromSeq ?? 1, options.toSeq ?? Infinity)) {
      if (options.untilTime !== undefined && row.time > options.untilTime) continue;
      if (options.kind !== undefined && row.kind !== options.kind) continue;
      if (options.namespace !== undefined && row.namespace !== options.namespace) continue;
      if (options.name !== undefined && row.name !== options.name) continue;
      yield row;
    }
  }

  /** One committed event; undefined when the log has none with this sequence number. */
  eventAt(seq: number): StoredEvent | undefined {
    this.written();
    if (this.blocks) {
      for (const event of this.read({ fromSeq: seq, toSeq: seq })) return event;
      return undefined;
    }
    this.eventStatement ??= this.db.prepare(`${this.selectEvents('none')} WHERE seq = ?`);
    const row = this.eventStatement.get(seq) as Row | undefined;
    return row && this.storedEvent(row, new Map());
  }

  /**
   * Every event in sequence order, for the store's start. The index learns each row as it passes,
   * at no cost beyond the read; rows from before the index are linked once all have passed.
   */
  *replay(): Generator<StoredEvent> {
    this.written();
    // A compact log has no index to learn.
    if (this.blocks) {
      yield* this.read();
      return;
    }
    const parsed = new Map<string, Cause>();
    const statement = this.db.prepare(`${this.selectEvents(this.readonly ? 'none' : 'raw')} ORDER BY seq`);
    for (const row of statement.iterate() as IterableIterator<LinkedRow>) {
      const event = this.storedEvent(row, parsed);
      if (!this.readonly) this.learn(event, row.prev);
      yield event;
    }
    if (!this.readonly) this.linkUnlinked();
  }

  /**
   * One object's committed events, newest first (from `fromSeq`, one of them, when given): its
   * own, and those written under no name that created it (a set's batch of GameServers, named by
   * `objectEvents`). A log that writes walks its index back, one row by primary key at a time, so a
   * caller may stop or pause between them; a log opened read-only scans the file a page at a time.
   */
  *history(kind: string, namespace: string, name: string, fromSeq?: number): Generator<StoredEvent> {
    this.written();
    if (this.readonly || !this.indexed || this.blocks) {
      yield* this.scanHistory(kind, namespace, name, (fromSeq ?? this.lastSeq) + 1);
      return;
    }
    this.learnRest();
    const parsed = new Map<string, Cause>();
    const rowAt = (this.linkedRowStatement ??= this.db.prepare(`${this.selectEvents('resolved')} WHERE events.seq = ?`));
    let seq = fromSeq ?? this.newest(kind, namespace, name);
    // No head: no such object, unless its head was forgotten (it ended long ago); a scan finds it.
    if (seq === 0 && this.heads.forgot) {
      yield* this.scanHistory(kind, namespace, name, this.lastSeq + 1);
      return;
    }
    while (seq > 0) {
      const row = rowAt.get(seq) as LinkedRow | undefined;
      if (row === undefined) return;
      yield this.storedEvent(row, parsed);
      const next = nextOf(row, name);
      // Only a row that neither the file nor event_links links: read the rest the slow way.
      if (next === null) {
        yield* this.scanHistory(kind, namespace, name, seq);
        return;
      }
      seq = next;
    }
  }

  /**
   * The newest event of an object (0: none): the caller's live head when it has one, else the
   * heads'. What is pending is written first: a live head may be an event not written yet, and
   * the heads learn an object's end (`followed`) only as its last event is written.
   */
  private newest(kind: string, namespace: string, name: string): number {
    if (this.pending.length > 0) this.flush();
    return this.liveHead?.(kind, namespace, name) ?? this.heads.get(kind, namespace, name);
  }

  /** `history` without the index: pages of rows back from `beforeSeq`, the object's own and those under no name whose payload names it. */
  private *scanHistory(kind: string, namespace: string, name: string, beforeSeq: number): Generator<StoredEvent> {
    if (this.blocks) {
      yield* this.scanBlocks(kind, namespace, name, beforeSeq);
      return;
    }
    const first = (this.db.prepare('SELECT MIN(seq) AS seq FROM events').get() as { seq: number | null }).seq;
    if (first === null) return;
    const parsed = new Map<string, Cause>();
    const page = this.db.prepare(
      `${this.selectEvents('none')} WHERE seq >= @lo AND seq < @hi AND kind = @kind AND namespace = @namespace
        AND (events.name = @name OR (@batches AND events.name = '' AND instr(payload, @needle) > 0)) ORDER BY seq DESC`,
    );
    const batches = this.objectEvents === undefined ? 0 : 1;
    for (let hi = beforeSeq; hi > first; hi -= SCAN_PAGE) {
      const rows = page.all({ lo: Math.max(first, hi - SCAN_PAGE), hi, kind, namespace, name, batches, needle: JSON.stringify(name) }) as Row[];
      for (const row of rows) {
        const event = this.storedEvent(row, parsed);
        if (row.name === name || this.objectEvents?.membersOf(event)?.includes(name)) yield event;
      }
    }
  }

  /** `scanHistory` of a compact log: its blocks read back from `beforeSeq`. */
  private *scanBlocks(kind: string, namespace: string, name: string, beforeSeq: number): Generator<StoredEvent> {
    const parsed = new Map<string, Cause>();
    const needle = JSON.stringify(name);
    for (const row of this.blocks!.rows(1, beforeSeq - 1, true)) {
      if (row.kind !== kind || row.namespace !== namespace) continue;
      if (row.name === name) yield this.storedEvent(row, parsed);
      else if (row.name === '' && this.objectEvents && row.payload.includes(needle)) {
        const event = this.storedEvent(row, parsed);
        if (this.objectEvents.membersOf(event)?.includes(name)) yield event;
      }
    }
  }

  /** The SELECT of whole events with their causes, and `prev` as written (`raw`) or with event_links' (`resolved`: old rows' prev, batches' member_prev). */
  private selectEvents(links: 'none' | 'raw' | 'resolved'): string {
    const cause = this.keepsCauses ? `caused_by, ${CAUSE_RESOLVED} AS cause` : 'NULL AS caused_by, NULL AS cause';
    if (links === 'none') return `SELECT ${EVENT_FIELDS}, ${cause} FROM events`;
    if (!this.indexed) return `SELECT ${EVENT_FIELDS}, ${cause}, NULL AS prev, NULL AS member_prev FROM events`;
    if (links === 'raw') return `SELECT ${EVENT_FIELDS}, ${cause}, events.prev AS prev, NULL AS member_prev FROM events`;
    return `SELECT ${EVENT_FIELDS}, ${cause}, COALESCE(events.prev, links.prev) AS prev, links.member_prev AS member_prev FROM events LEFT JOIN event_links AS links ON links.seq = events.seq`;
  }

  private storedEvent(row: Row, parsed: Map<string, Cause>): StoredEvent {
    return {
      seq: row.seq,
      time: row.time,
      type: row.type,
      kind: row.kind,
      namespace: row.namespace,
      name: row.name,
      payload: parseJsonExact(row.payload),
      schemaVersion: row.schema_version,
      cause: row.cause === null ? undefined : parseCause(row.caused_by!, row.cause, parsed, row),
    };
  }

  /**
   * Committed events' headers, in sequence order, without reading their payloads (a batch
   * creation's payload holds a whole set's GameServers).
   */
  headers(query: HeaderQuery): EventHeader[] {
    this.written();
    if (this.blocks) return this.blockHeaders(query);
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: query.limit };
    if (query.fromSeq !== undefined) {
      where.push('seq >= @fromSeq');
      params.fromSeq = query.fromSeq;
    } else if (query.beforeSeq !== undefined) {
      where.push('seq < @beforeSeq');
      params.beforeSeq = query.beforeSeq;
    }
    if (query.kind !== undefined) {
      where.push('kind = @kind');
      params.kind = query.kind;
    }
    const order = query.fromSeq !== undefined ? 'ASC' : 'DESC';
    const sql = `SELECT seq, time, type, kind, namespace, name FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq ${order} LIMIT @limit`;
    const rows = this.db.prepare(sql).all(params) as EventHeader[];
    return order === 'ASC' ? rows : rows.reverse();
  }

  /** `headers` of a compact log: its blocks read forward from `fromSeq`, or back from `beforeSeq`. */
  private blockHeaders(query: HeaderQuery): EventHeader[] {
    const headers: EventHeader[] = [];
    const forward = query.fromSeq !== undefined;
    const rows = forward ? this.blocks!.rows(query.fromSeq!, Infinity) : this.blocks!.rows(1, (query.beforeSeq ?? Infinity) - 1, true);
    for (const { seq, time, type, kind, namespace, name } of rows) {
      if (headers.length >= query.limit) break;
      if (query.kind === undefined || kind === query.kind) headers.push({ seq, time, type, kind, namespace, name });
    }
    return forward ? headers : headers.reverse();
  }

  /** The first and the last committed event's sequence number and time; undefined for an empty log. */
  bounds(): { first: { seq: number; time: number }; last: { seq: number; time: number } } | undefined {
    this.written();
    if (this.blocks) return this.blocks.bounds();
    const first = this.db.prepare('SELECT seq, time FROM events ORDER BY seq ASC LIMIT 1').get() as { seq: number; time: number } | undefined;
    const last = this.db.prepare('SELECT seq, time FROM events ORDER BY seq DESC LIMIT 1').get() as { seq: number; time: number } | undefined;
    return first && last ? { first, last } : undefined;
  }

  /** Raw access for the log benchmark's baseline; not for domain code. */
  get database(): Database.Database {
    return this.db;
  }

  close(): void {
    if (this.closed) return;
    // After a failed write nothing more is written: what was queued since was never answered.
    if (!this.failure) this.flush();
    this.writeUnwritten();
    this.closed = true;
    this.checkpoints?.close();
    try {
      this.writer?.close();
    } finally {
      this.db.close();
    }
  }

  /** The cause itself the first time, then a reference to the event that wrote it. Causes are never changed once given. */
  private causeColumn(cause: Cause, seq: number): CauseColumn {
    // A block is read alone: its causes are written whole (deflate folds the repeats).
    if (this.writeBehind === 'blocks') return cause;
    if (cause === this.lastCause) return (this.lastCauseRef ??= `@${this.lastCauseSeq}`);
    this.lastCause = cause;
    this.lastCauseSeq = seq;
    this.lastCauseRef = undefined;
    return cause;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      if (!this.closed) this.flush();
    });
  }
}
