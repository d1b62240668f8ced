/**
 * The log's index by object, so that one object's history costs what it holds rather than a scan
 * of the whole log (`fleetsim explain`).
 *
 * Each row carries `prev`: the sequence number of the same object's event before it (0: none).
 * An object's history is then a walk back from its newest event, one row by primary key per
 * event. A batch creation (a set's new GameServers, one row under no name) is each member's first
 * event: a member's next event points back to it. Should a member's name have been used before
 * (an earlier GameServer of that name), event_links holds for the batch's row, in `member_prev`,
 * where that one's history ended. Written in the row the transaction inserts anyway, the index
 * costs an integer per event: a separate B-tree keyed by object costs a random page write per
 * event instead (three to ten times the insert, measured).
 *
 * The newest event of every object (the heads) is kept in memory by the log that writes: learned
 * once when the store replays the log at start, then kept as events are written. A GameServer the
 * store holds has its head in its store entry instead (the last event applied to it): the store
 * gives the log each of its events' `prev` (`EventLog.follows`), so that an event costs no lookup
 * in a map of the whole fleet, and the heads learn where its history went only when it ends.
 * Those of objects that ended (deleted) are kept for the last MAX_ENDED_HEADS of them, so memory follows the
 * cluster, not the length of its history: an object that ended before them is found by a scan,
 * and a name used again after its namesake was forgotten starts a history of its own. Rows written
 * before the index existed have no `prev`: the first writer to open such a log links them in
 * `event_links`, once. A log opened read-only (the CLI) has no heads: it finds an object's events
 * with one scan of the file in SQLite.
 */

/** What the index must know of an event beyond its kind, namespace and name: the kinds answer it. */
export interface ObjectEvents {
  /** The names of the objects an event written under no name creates (a set's batch of GameServers); undefined for any other event. */
  membersOf(event: { type: string; kind: string; payload: unknown }): readonly string[] | undefined;
  /** Whether the event ends its object (a deletion). */
  ends(event: { type: string }): boolean;
}

/** Objects that ended whose heads are kept: explaining one of the last hundred thousand deleted costs no scan. */
export const MAX_ENDED_HEADS = 100_000;

export const ADD_INDEX_COLUMN = 'ALTER TABLE events ADD COLUMN prev INTEGER';

/**
 * Links a row cannot hold: those of rows written before the index (filled once, by the first
 * writer to open the log), and `member_prev` of a batch whose members had earlier namesakes
 * (written with the batch).
 */
export const LINKS_TABLE = 'CREATE TABLE IF NOT EXISTS event_links (seq INTEGER PRIMARY KEY, prev INTEGER NOT NULL, member_prev TEXT)';
export const LINKS_COLUMNS = 'event_links (seq, prev, member_prev)';

/** Rows a scan reads per query: a few milliseconds of SQLite's time, so a reader that pauses between pages never holds the loop long. */
export const SCAN_PAGE = 16_384;

/**
 * The newest event of each object, by kind, namespace and name (nested maps share the names' strings
 * with the events). The sequence number is the map's value itself, not a box in it: moving it on
 * costs a second lookup of the name, just made and so in the cache, where a box is one more
 * object to read, cold in a large fleet, and kept per object.
 */
export class ObjectHeads {
  private readonly byKind = new Map<string, Map<string, Map<string, number>>>();
  /** Objects that ended, oldest first from `endedFrom`: the map holding each, its name and its head then. */
  private ended: Array<{ names: Map<string, number>; name: string; seq: number }> = [];
  private endedFrom = 0;
  /** Whether a head was ever forgotten: an object without one may then have events. */
  forgot = false;

  constructor(private readonly maxEnded = MAX_ENDED_HEADS) {}
  /** The map used last: appends come in runs of one kind and namespace. */
  private lastKind: string | undefined;
  private lastNamespace: string | undefined;
  private lastNames: Map<string, number> | undefined;

  /** Newest event of the object; 0 when it has none. */
  get(kind: string, namespace: string, name: string): number {
    return this.byKind.get(kind)?.get(namespace)?.get(name) ?? 0;
  }

  /** Makes `seq` the object's newest event and returns the one it follows (0: none). */
  advance(kind: string, namespace: string, name: string, seq: number): number {
    const names = this.namesOf(kind, namespace);
    const prev = names.get(name) ?? 0;
    names.set(name, seq);
    return prev;
  }

  /** The object's newest event, `seq`, ended it: its head is kept for the last `maxEnded` objects that ended. */
  end(kind: string, namespace: string, name: string, seq: number): void {
    const names = this.namesOf(kind, namespace);
    if (!names.has(name)) return;
    this.ended.push({ names, name, seq });
    if (this.ended.length - this.endedFrom <= this.maxEnded) return;
    const oldest = this.ended[this.endedFrom++]!;
    // Not forgotten if the name lives again (its head has moved on since).
    if (oldest.names.get(oldest.name) === oldest.seq) {
      oldest.names.delete(oldest.name);
      this.forgot = true;
    }
    if (this.endedFrom * 2 > this.ended.length) {
      this.ended = this.ended.slice(this.endedFrom);
      this.endedFrom = 0;
    }
  }

  /**
   * For an event under no name that creates `members`: each member's newest event becomes `seq`.
   * Returns `member_prev` (the members with an earlier event, as JSON), or null.
   */
  advanceMembers(kind: string, namespace: string, members: readonly string[], seq: number): string | null {
    let earlier: Record<string, number> | undefined;
    for (const member of members) {
      const prev = this.advance(kind, namespace, member, seq);
      if (prev > 0) (earlier ??= {})[member] = prev;
    }
    return earlier === undefined ? null : JSON.stringify(earlier);
  }

  private namesOf(kind: string, namespace: string): Map<string, number> {
    if (kind === this.lastKind && namespace === this.lastNamespace) return this.lastNames!;
    let byNamespace = this.byKind.get(kind);
    if (!byNamespace) this.byKind.set(kind, (byNamespace = new Map()));
    let names = byNamespace.get(namespace);
    if (!names) byNamespace.set(namespace, (names = new Map()));
    this.lastKind = kind;
    this.lastNamespace = namespace;
    this.lastNames = names;
    return names;
  }
}

/** Where the history of `name` goes on from a row of it: its `prev`, or for a batch that created it, its life before (0: none); null when the row has no link (written before the index). */
export function nextOf(row: { name: string; prev: number | null; member_prev: string | null }, name: string): number | null {
  if (row.name === name) return row.prev;
  if (row.prev === null) return null;
  return row.member_prev === null ? 0 : ((JSON.parse(row.member_prev) as Record<string, number>)[name] ?? 0);
}
