import { Observable, Subject } from 'rxjs';
import type { Clock } from '../clock.js';
import { SeededRandom } from '../clock.js';
import type { FeatureGates } from '../features.js';
import { EventLog, type NewEvent, type StoredEvent } from '../log/event-log.js';
import { GAMESERVER_KIND, type GameServer } from '../kinds/gameserver.js';
import type { Resource } from '../kinds/resource.js';
import { objectKey } from '../kinds/meta.js';
import type { ObjectChange, ObjectStore } from './object-store.js';
import { type ApplySink, type Change, ReadModel } from './read-model.js';
import { GameServerActors } from './gameserver-actors.js';
import { HealthMonitor } from './health-monitor.js';

export interface ClusterOptions {
  /** SQLite file of the event log, or `:memory:`. */
  db: string;
  clock: Clock;
  gates: FeatureGates;
  /** Seed of every random choice (uids, names, ports), so a run can be repeated. */
  seed?: number;
  /** How long Kubernetes Events are kept (kube-apiserver's --event-ttl); default one hour. */
  eventTtlMs?: number;
}

export type GameServerChange = ObjectChange<GameServer>;

/** What one group commit changed, released to watchers once it is durable. */
interface ReleaseBatch {
  committed: Promise<void>;
  gameServerChanges: GameServerChange[];
  changes: Change[];
  /** Status changes of sets and fleets, one per object per batch (the last one). */
  derived: Map<string, Change>;
  lastSeq: number;
  sink: ApplySink;
}

/** How many committed changes a watch can resume from (Kubernetes's watch cache window). */
const WATCH_WINDOW = 100_000;

/**
 * The core of fleetsim: the event log, the projections that fold it into the read model, and
 * the per-GameServer actors that decide. Everything mutating goes through `commit`.
 *
 *   command -> actor/controller decides -> commit(events) -> log (group commit)
 *           -> projections (pure reducers) -> read model -> resourceApplied$, gameServerApplied$
 *           -> (after the transaction commits) changesOf(kind) -> watches, responses
 */
export class Cluster {
  readonly log: EventLog;
  readonly clock: Clock;
  readonly gates: FeatureGates;
  readonly rng: SeededRandom;
  readonly readModel: ReadModel;
  readonly gameServers: ObjectStore<GameServer>;
  readonly actors: GameServerActors;
  readonly health: HealthMonitor;

  /**
   * Every event of a kind other than GameServer, in sequence order, as it is applied (before it
   * is durable). GameServer events, the bulk of the log, come as changes on gameServerApplied$.
   */
  readonly resourceApplied$ = new Subject<StoredEvent>();
  /** GameServer changes as they are applied (before they are durable): for indexes deciders use. */
  readonly gameServerApplied$ = new Subject<GameServerChange>();
  /** GameServer changes, released only once the transaction holding them has committed. */
  readonly gameServerChanges$: Observable<GameServerChange>;

  private readonly committedGameServers = new Subject<GameServerChange>();
  /** Committed changes by kind: a controller or a watch hears only the kind it follows. */
  private readonly committedByKind = new Map<string, Subject<Change>>();
  private readonly watchers = new Map<string, Subject<GameServerChange>>();
  private readonly recent: Change[] = [];
  private released: ReleaseBatch | undefined;
  private committedSeq = 0;

  constructor(options: ClusterOptions) {
    this.clock = options.clock;
    this.gates = options.gates;
    this.rng = new SeededRandom(options.seed ?? 1);
    this.log = new EventLog(options.db);
    this.readModel = new ReadModel(options.gates, { eventTtlMs: options.eventTtlMs });
    this.gameServers = this.readModel.gameServers;
    // Subjects multicast already: asObservable only hides `next` (share() would add a hop per change).
    this.gameServerChanges$ = this.committedGameServers.asObservable();

    for (const event of this.log.read()) {
      this.readModel.apply(event);
      if (event.kind !== GAMESERVER_KIND) this.resourceApplied$.next(event);
    }
    this.committedSeq = this.log.lastSeq;
    this.actors = new GameServerActors(this);
    this.actors.start();
    this.health = new HealthMonitor(this);
    this.health.start();
  }

  /**
   * Appends events: the read model moves at once (so the next decision sees it) and the promise
   * resolves when the events are durable. Answer clients only after it resolves.
   */
  commit(events: readonly NewEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    const { records, committed } = this.log.append(events, this.clock.now());
    // Every commit of one group commit shares its promise: the batch's notifications are
    // released once, before any caller waiting on the commit resumes.
    if (this.released?.committed !== committed) {
      const batch = this.newBatch(committed);
      this.released = batch;
      committed.then(() => this.release(batch), () => undefined);
    }
    const batch = this.released;
    for (const record of records) {
      this.readModel.apply(record, batch.sink);
      if (record.kind !== GAMESERVER_KIND) this.resourceApplied$.next(record);
    }
    batch.lastSeq = records[records.length - 1]!.seq;
    return committed;
  }

  /** A batch of notifications, gathered as its events are applied. */
  private newBatch(committed: Promise<void>): ReleaseBatch {
    const batch: ReleaseBatch = { committed, gameServerChanges: [], changes: [], derived: new Map(), lastSeq: 0, sink: undefined! };
    batch.sink = {
      gameServer: (change) => {
        batch.gameServerChanges.push(change);
        this.gameServerApplied$.next(change);
      },
      change: (change) => batch.changes.push(change),
      // A set's status moves with each of its GameServers: watchers need its last state once.
      derived: (key, kind, namespace, name, seq) => {
        const known = batch.derived.get(key);
        if (known) known.seq = seq;
        else batch.derived.set(key, { kind, namespace, name, seq, type: 'MODIFIED' });
      },
    };
    return batch;
  }

  /** After a transaction commits: what it changed goes out to watchers, in order. */
  private release(batch: ReleaseBatch): void {
    if (this.released === batch) this.released = undefined;
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
    if (this.recent.length > WATCH_WINDOW * 2) this.recent.splice(0, this.recent.length - WATCH_WINDOW);
  }

  /** Sequence number of the last committed event: the list resourceVersion. */
  get resourceVersion(): number {
    return this.committedSeq;
  }

  /** Every committed change of one kind (sets' and fleets' derived status included). */
  changesOf(kind: string): Observable<Change> {
    let subject = this.committedByKind.get(kind);
    if (!subject) {
      subject = new Subject<Change>();
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

  /** Committed changes of one GameServer (cheap per watcher: no scan of other objects). */
  watchGameServer(namespace: string, name: string): Observable<GameServerChange> {
    const key = objectKey(namespace, name);
    return new Observable<GameServerChange>((subscriber) => {
      let subject = this.watchers.get(key);
      if (!subject) {
        subject = new Subject<GameServerChange>();
        this.watchers.set(key, subject);
      }
      const subscription = subject.subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        if (!subject.observed) this.watchers.delete(key);
      };
    });
  }

  /** The object of any kind as the API serves it. */
  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.readModel.get(kind, namespace, name);
  }

  /** Flushes what is queued and closes the log. */
  close(): void {
    this.actors.stopAll();
    this.health.stopAll();
    this.log.close();
  }
}
