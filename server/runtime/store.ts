import { Observable, type Subject } from 'rxjs';
import type { Clock } from '../clock.js';
import type { FeatureGates } from '../features.js';
import type { Cause } from '../log/cause.js';
import { EventLog, LogClosedError, type NewEvent, type StoredEvent, type WriteBehind } from '../log/event-log.js';
import type { ObjectEvents } from '../log/object-index.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { batchMemberNames } from '../kinds/gameserver/events.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import type { Resource } from '../kinds/resource.js';
import { objectKey } from '../kinds/meta.js';
import { ChangeSubject } from './change-subject.js';
import { NodeCounter } from './node-counter.js';
import type { ObjectChange, ObjectStore, StoreEntry } from './object-store.js';
import type { Projection, ProjectionDefinition } from './projection.js';
import { type ApplySink, type Change, IGNORE_CHANGES, ReadModel } from './read-model.js';

export interface StoreOptions {
  /** SQLite file of the event log, or `:memory:`. */
  db: string;
  /** Stamps each record with the time it was appended. */
  clock: Clock;
  gates: FeatureGates;
  /** How long Kubernetes Events are kept (kube-apiserver's --event-ttl); default one hour. */
  eventTtlMs?: number;
  /** Writes the log behind, many commits at a time, kept as EventLog's `writeBehind` says: what-if runs only. */
  writeBehind?: WriteBehind;
  /** Whether a log written behind is written on a thread of its own (the default) or by this one: see EventLog. */
  writerThread?: boolean;
  /** How many committed changes a watch can resume from; default WATCH_WINDOW (a run with no API keeps few). */
  watchWindow?: number;
  /** Opens the log read-only (`serve --read-only`): the store serves it as it is, and a commit throws. */
  readonly?: boolean;
}

export type GameServerChange = ObjectChange<GameServer>;

/** What one group commit changed, released to watchers once it is durable. */
interface ReleaseBatch {
  gameServerChanges: GameServerChange[];
  changes: Change[];
  /** Status changes of sets and fleets, one per object per batch (the last one). */
  derived: Map<string, Change>;
  lastSeq: number;
  sink: ApplySink;
}

/**
 * For a commit no caller waits for (a timer's, a controller's step): a log closed meanwhile (the
 * server stopping) refuses it, which is no failure. Any other failure stays unhandled and stops
 * the process, as a failed transaction must.
 */
export function unawaited(committed: Promise<void> | undefined): void {
  committed?.catch((error: unknown) => {
    if (!(error instanceof LogClosedError)) throw error;
  });
}

/** What the log's index by object needs to know of events (server/log/object-index.ts). */
export const OBJECT_EVENTS: ObjectEvents = {
  membersOf: batchMemberNames,
  ends: (event) => event.type === 'GameServerDeleted' || event.type === 'ResourceDeleted',
};

/** How many committed changes a watch can resume from (Kubernetes's watch cache window). */
export const WATCH_WINDOW = 100_000;

/**
 * The store: the event log, the projections that fold it into the read model, and the change
 * feeds. It decides nothing; everything mutating goes through `commit`.
 *
 *   command -> actor/controller decides -> commit(events) -> log (group commit)
 *           -> reducers (pure) -> read model -> registered projections (indexes, the node counter)
 *           -> resourceApplied$, gameServerApplied$
 *           -> (after the transaction commits) changesOf(kind) -> watches, responses
 */
export class Store {
  readonly log: EventLog;
  readonly clock: Clock;
  readonly gates: FeatureGates;
  readonly readModel: ReadModel;
  readonly gameServers: ObjectStore<GameServer>;
  /** GameServers per node: the first registered projection, so every index after it reads it current. */
  readonly nodes: NodeCounter;

  /**
   * Every event of a kind other than GameServer, in sequence order, as it is applied (before it
   * is durable). GameServer events, the bulk of the log, come as changes on gameServerApplied$.
   */
  readonly resourceApplied$ = new ChangeSubject<StoredEvent>();
  /** GameServer changes as they are applied (before they are durable): for indexes deciders use. */
  readonly gameServerApplied$ = new ChangeSubject<GameServerChange>();
  /** GameServer changes, released only once the transaction holding them has committed. */
  readonly gameServerChanges$: Observable<GameServerChange>;

  private readonly committedGameServers = new ChangeSubject<GameServerChange>();
  /** The registered projections, in the order they hear each change (see `register`). */
  private readonly projections: Projection[] = [];
  private gameServerProjections: Projection[] = [];
  private eventProjections: Projection[] = [];
  /** Committed changes by kind: a controller or a watch hears only the kind it follows. */
  private readonly committedByKind = new Map<string, Subject<Change>>();
  private readonly watchers = new Map<string, Subject<GameServerChange>>();
  private gameServerWatches = 0;
  /**
   * The last committed changes, for watches that resume from a resourceVersion: at least
   * `watchWindow` of them, trimmed back to that once twice as many have gathered.
   */
  private readonly recent: Change[] = [];
  private readonly watchWindow: number;
  /** What the events applied since the last transaction changed, released when it commits. */
  private pendingBatch: ReleaseBatch | undefined;
  /** Readers waiting for the read model to hold only durable state. */
  private waitingReaders: Array<() => void> = [];
  /** Depth of `commit` calls (a projection's subscriber may commit in turn). */
  private committing = 0;
  private committedSeq = 0;
  private readonly stops: Array<() => void> = [];

  /**
   * Told of every commit as it is made (its events, its cause, the promise of its durability):
   * for the metrics, which count the controllers' writes as the API requests they would be.
   */
  commitObserver: ((events: readonly NewEvent[], cause: Cause | undefined, committed: Promise<void>) => void) | undefined;

  constructor(options: StoreOptions) {
    this.clock = options.clock;
    this.gates = options.gates;
    this.log = new EventLog(options.db, { flushWhenFull: false, writeBehind: options.writeBehind, writerThread: options.writerThread, readonly: options.readonly, objectEvents: OBJECT_EVENTS });
    this.watchWindow = options.watchWindow ?? WATCH_WINDOW;
    this.log.onCommitted = () => this.committed();
    this.readModel = new ReadModel(options.gates, { eventTtlMs: options.eventTtlMs });
    this.gameServers = this.readModel.gameServers;
    // Subjects multicast already: asObservable only hides `next` (share() would add a hop per change).
    this.gameServerChanges$ = this.committedGameServers.asObservable();

    const replayed: ApplySink = { ...IGNORE_CHANGES, resource: (event) => this.resourceApplied$.next(event) };
    for (const event of this.log.replay()) this.readModel.apply(event, replayed);
    // From here on the log's index links the GameServers the store holds from their entries (see `commit`).
    this.log.liveHead = (kind, namespace, name) => (kind === GAMESERVER_KIND ? this.gameServers.seqOf(namespace, name) : undefined);
    this.committedSeq = this.log.lastSeq;
    this.nodes = this.register(new NodeCounter(this.gameServers));
  }

  /**
   * Registers a projection under its name: it is built from the read model now, then hears every
   * change as it is applied, after those registered before it and before any subscriber of the
   * change feeds. Released when the store closes.
   */
  register<P extends Projection>(projection: P): P {
    if (this.projection(projection.name)) throw new Error(`a projection named ${projection.name} is registered already`);
    projection.rebuild(this.readModel);
    this.projections.push(projection);
    if (projection.gameServerApplied) this.gameServerProjections.push(projection);
    if (projection.eventApplied) this.eventProjections.push(projection);
    return projection;
  }

  /** The projection a definition names, registered the first time it is asked for: one per store, shared by its readers. */
  use<P extends Projection>(definition: ProjectionDefinition<P, Store>): P {
    return (this.projection(definition.name) as P | undefined) ?? this.register(definition.create(this));
  }

  projection(name: string): Projection | undefined {
    return this.projections.find((projection) => projection.name === name);
  }

  /** The registered projections, in the order they hear a change. */
  get registered(): readonly Projection[] {
    return this.projections;
  }

  /**
   * Appends events: the read model moves at once (so the next decision sees it) and the promise
   * resolves when the events are durable. Answer clients only after it resolves. `cause` is
   * recorded with them: what `fleetsim explain` follows back. `entry`: the store's entry of the
   * GameServer the events change, when the committer read it (a machine's decision).
   */
  commit(events: readonly NewEvent[], cause?: Cause, entry?: StoreEntry<GameServer>): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    // After close (the server stopping) a late writer's events are refused, and nothing is applied.
    if (this.log.isClosed) return Promise.reject(new LogClosedError());
    const { records, committed } = this.log.append(events, this.clock.now(), cause);
    this.commitObserver?.(events, cause, committed);
    // Everything applied until the transaction commits is released together, once it is durable.
    const batch = (this.pendingBatch ??= this.newBatch());
    this.committing++;
    try {
      for (const record of records) {
        // A GameServer the store held: the log is told where its history goes on, rather than finding it.
        const prev = this.readModel.apply(record, batch.sink, entry);
        if (prev !== undefined) this.log.follows(record.seq, prev);
      }
    } finally {
      this.committing--;
    }
    batch.lastSeq = records[records.length - 1]!.seq;
    // A full batch commits now, but only once every record queued has been projected into it.
    if (this.committing === 0) this.log.flushIfFull();
    return committed;
  }

  /**
   * Commits `events`, then answers with `read()` as it stood right after them: that state is
   * durable once the commit resolves, while the read model may by then hold newer, uncommitted
   * events of other writers that a crash could take back.
   */
  async commitAndRead<T>(events: readonly NewEvent[], read: () => T, cause?: Cause): Promise<T> {
    const committed = this.commit(events, cause);
    let value: T;
    try {
      value = read();
    } catch (error) {
      committed.catch(() => undefined); // the read's error is the answer
      throw error;
    }
    await committed;
    return value;
  }

  /**
   * Runs `read` when the read model holds only durable state — at once when nothing is queued,
   * otherwise right after the next transaction commits, before any writer resumes — so a reader
   * never sees what a crash could take back. `read` must read synchronously.
   */
  readCommitted<T>(read: () => T): Promise<T> {
    if (!this.log.hasPending) {
      try {
        return Promise.resolve(read());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.waitingReaders.push(() => {
        try {
          resolve(read());
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /**
   * Resolves once everything applied so far is durable: for an answer that commits nothing itself
   * (a write that changes nothing) but rests on what the read model holds.
   */
  settled(): Promise<void> {
    return this.readCommitted(() => undefined);
  }

  /** A batch of notifications, gathered as its events are applied. */
  private newBatch(): ReleaseBatch {
    const batch: ReleaseBatch = { gameServerChanges: [], changes: [], derived: new Map(), lastSeq: 0, sink: undefined! };
    batch.sink = {
      gameServer: (change) => {
        batch.gameServerChanges.push(change);
        const projections = this.gameServerProjections;
        for (let i = 0; i < projections.length; i++) projections[i]!.gameServerApplied!(change);
        this.gameServerApplied$.next(change);
      },
      change: (change) => batch.changes.push(change),
      resource: (event) => {
        for (const projection of this.eventProjections) projection.eventApplied!(event);
        this.resourceApplied$.next(event);
      },
      // A set's status moves with each of its GameServers: watchers need its last state once.
      derived: (key, kind, namespace, name, seq) => {
        const known = batch.derived.get(key);
        if (known) known.seq = seq;
        else batch.derived.set(key, { kind, namespace, name, seq, type: 'MODIFIED', derived: true });
      },
    };
    return batch;
  }

  /** Synchronously after each transaction commits: watchers hear what it changed, then readers read. */
  private committed(): void {
    const batch = this.pendingBatch;
    this.pendingBatch = undefined;
    if (batch) this.release(batch);
    // A watcher may have committed in turn: its events are not durable yet, so readers wait on.
    if (this.log.hasPending || this.waitingReaders.length === 0) return;
    const readers = this.waitingReaders;
    this.waitingReaders = [];
    for (const read of readers) read();
  }

  /** After a transaction commits: what it changed goes out to watchers, in order. */
  private release(batch: ReleaseBatch): void {
    this.committedSeq = Math.max(this.committedSeq, batch.lastSeq);
    for (const change of batch.gameServerChanges) {
      this.committedGameServers.next(change);
      this.watchers.get(change.key)?.next(change);
    }
    for (const change of batch.changes) {
      this.recent.push(change);
      this.committedByKind.get(change.kind)?.next(change);
    }
    for (const change of batch.derived.values()) {
      this.recent.push(change);
      this.committedByKind.get(change.kind)?.next(change);
    }
    if (this.recent.length > this.watchWindow * 2) this.recent.splice(0, this.recent.length - this.watchWindow);
  }

  /** Sequence number of the last committed event: the list resourceVersion. */
  get resourceVersion(): number {
    return this.committedSeq;
  }

  /** Every committed change of one kind (sets' and fleets' derived status included). */
  changesOf(kind: string): Observable<Change> {
    let subject = this.committedByKind.get(kind);
    if (!subject) {
      subject = new ChangeSubject<Change>();
      this.committedByKind.set(kind, subject);
    }
    return subject.asObservable();
  }

  /**
   * Committed changes of one kind after `fromSeq`, then live ones. Undefined when `fromSeq` is
   * older than the watch window (the API answers 410 Gone, and the client lists again).
   */
  changesSince(fromSeq: number, kind: string): Observable<Change> | undefined {
    const oldest = this.recent[0]?.seq ?? this.committedSeq + 1;
    if (fromSeq < this.committedSeq && fromSeq < oldest - 1) return undefined;
    return new Observable<Change>((subscriber) => {
      for (const change of this.recent) if (change.seq > fromSeq && change.kind === kind) subscriber.next(change);
      const last = this.committedSeq;
      return this.changesOf(kind).subscribe({
        next: (change) => {
          if (change.seq > last) subscriber.next(change);
        },
      });
    });
  }

  /** Subscriptions to `watchGameServer` open now: each closed watch must give its own back. */
  get openGameServerWatches(): number {
    return this.gameServerWatches;
  }

  /** Committed changes of one GameServer (cheap per watcher: no scan of other objects). */
  watchGameServer(namespace: string, name: string): Observable<GameServerChange> {
    const key = objectKey(namespace, name);
    return new Observable<GameServerChange>((subscriber) => {
      let subject = this.watchers.get(key);
      if (!subject) {
        subject = new ChangeSubject<GameServerChange>();
        this.watchers.set(key, subject);
      }
      const subscription = subject.subscribe(subscriber);
      this.gameServerWatches++;
      return () => {
        this.gameServerWatches--;
        subscription.unsubscribe();
        if (!subject.observed) this.watchers.delete(key);
      };
    });
  }

  /** The object of any kind as the API serves it. */
  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.readModel.get(kind, namespace, name);
  }

  /** Something built on the store (a runner, a loop) that must stop before the store closes: stopped first, last added first. */
  onClose(stop: () => void): void {
    this.stops.push(stop);
  }

  /** Stops what was built on it, releases the projections, flushes what is queued and closes the log. */
  close(): void {
    for (const stop of this.stops.splice(0).reverse()) stop();
    for (const projection of this.projections) projection.close?.();
    this.projections.length = 0;
    this.gameServerProjections = [];
    this.eventProjections = [];
    this.log.close();
  }
}
