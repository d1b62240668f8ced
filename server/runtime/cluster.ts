import { Observable, Subject, share } from 'rxjs';
import type { Clock } from '../clock.js';
import { SeededRandom } from '../clock.js';
import type { FeatureGates } from '../features.js';
import { EventLog, type NewEvent, type StoredEvent } from '../log/event-log.js';
import { GAMESERVER_KIND, type GameServer } from '../kinds/gameserver.js';
import { objectKey } from '../kinds/meta.js';
import type { ObjectChange, ObjectStore } from './object-store.js';
import { ReadModel } from './read-model.js';
import { GameServerActors } from './gameserver-actors.js';

export interface ClusterOptions {
  /** SQLite file of the event log, or `:memory:`. */
  db: string;
  clock: Clock;
  gates: FeatureGates;
  /** Seed of every random choice (uids, names, ports), so a run can be repeated. */
  seed?: number;
}

export type GameServerChange = ObjectChange<GameServer>;

/**
 * The core of fleetsim: the event log, the projections that fold it into the read model, and
 * the per-GameServer actors that decide. Everything mutating goes through `commit`.
 *
 *   command -> actor/controller decides -> commit(events) -> log (group commit)
 *           -> applied$ -> projections (pure reducers) -> read model
 *           -> (after the transaction commits) changes$ -> watches, responses
 */
export class Cluster {
  readonly log: EventLog;
  readonly clock: Clock;
  readonly gates: FeatureGates;
  readonly rng: SeededRandom;
  readonly readModel = new ReadModel();
  readonly gameServers: ObjectStore<GameServer> = this.readModel.gameServers;
  readonly actors: GameServerActors;

  /** Every event, in sequence order, as it is appended (before it is durable). */
  readonly applied$ = new Subject<StoredEvent>();
  /** GameServer changes, released only once the transaction holding them has committed. */
  readonly gameServerChanges$: Observable<GameServerChange>;

  private readonly committedChanges = new Subject<GameServerChange>();
  private readonly watchers = new Map<string, Subject<GameServerChange>>();

  constructor(options: ClusterOptions) {
    this.clock = options.clock;
    this.gates = options.gates;
    this.rng = new SeededRandom(options.seed ?? 1);
    this.log = new EventLog(options.db);
    this.gameServerChanges$ = this.committedChanges.pipe(share());

    // Projections: pure reducers fed from the one stream of events.
    this.applied$.subscribe((e) => this.readModel.apply(e));

    for (const event of this.log.read()) this.applied$.next(event);
    this.actors = new GameServerActors(this);
    this.actors.start();
  }

  /**
   * Appends events: the read model moves at once (so the next decision sees it) and the promise
   * resolves when the events are durable. Answer clients only after it resolves.
   */
  commit(events: readonly NewEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    const { records, committed } = this.log.append(events, this.clock.now());
    const changes: GameServerChange[] = [];
    for (const record of records) {
      if (record.kind === GAMESERVER_KIND) {
        // Apply through the projection, and keep the object as of this event for the watchers.
        const previous = this.gameServers.get(record.namespace, record.name);
        this.applied$.next(record);
        const object = this.gameServers.get(record.namespace, record.name);
        changes.push({ event: record, key: objectKey(record.namespace, record.name), previous, object });
      } else {
        this.applied$.next(record);
      }
    }
    return committed.then(() => {
      for (const change of changes) {
        this.committedChanges.next(change);
        this.watchers.get(change.key)?.next(change);
      }
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

  /** Flushes what is queued and closes the log. */
  close(): void {
    this.actors.stopAll();
    this.log.close();
  }
}
