import { FEATURE_DEFAULTS, type FeatureGates } from '../features.js';
import type { StoredEvent } from '../log/event-log.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { evolveGameServer, gameServersOfBatch } from '../kinds/gameserver/events.js';
import { KIND_DEFINITIONS } from '../kinds/definitions.js';
import { EVENT_KIND } from '../kinds/event/event.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import { GAMESERVERSET_KIND } from '../kinds/gameserverset/gameserverset.js';
import { objectKey } from '../kinds/meta.js';
import { type Resource, evolveResource } from '../kinds/resource.js';
import { type ObjectChange, ObjectStore, type StoreEntry } from './object-store.js';
import { SetStatusProjection, type TemplateKeys } from './set-status.js';
import { RecentGameServerEvents } from './recent-events.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** A change of one object as a watcher sees it (the resource API's watch, kubectl -w). */
export interface Change {
  kind: string;
  namespace: string;
  name: string;
  seq: number;
  type: WatchEventType;
  /** For DELETED: the object as it last was. */
  last?: unknown;
  /** A set's or fleet's status moved with one of its GameServers (`seq` is that GameServer's event). */
  derived?: boolean;
}

/** Where `apply` reports what an event changed (the commit gathering its notifications). */
export interface ApplySink {
  gameServer(change: ObjectChange<GameServer>): void;
  change(change: Change): void;
  /** A set's or fleet's status moved; `key` is `Kind/namespace/name`. */
  derived(key: string, kind: string, namespace: string, name: string, seq: number): void;
  /** An event of any kind but GameServer was applied (GameServers' come as their changes). */
  resource(event: StoredEvent): void;
}

export const IGNORE_CHANGES: ApplySink = { gameServer: () => undefined, change: () => undefined, derived: () => undefined, resource: () => undefined };

/** How long a Kubernetes Event lives after its last write: kube-apiserver's --event-ttl default. */
export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;

/**
 * An event (kind Event) that changes nothing but carries a time: appended when Events are due to
 * expire and nothing else is being written, so the read model retires them on an idle cluster too.
 */
export const EVENTS_EXPIRED = 'EventsExpired';

export interface ReadModelOptions {
  /** Events older than this (since their last write, by the log's time) are dropped. */
  eventTtlMs?: number;
}

/** A stored Event's last write, in the order written. */
interface EventWrite {
  key: string;
  seq: number;
  time: number;
}

/**
 * Kinds stored whole, each in its store: every kind the API can read that is written by Resource
 * events (a GameServer has its own events and store; a GameServer's Pod is built on read, Agones's
 * own are stored; a GameServerAllocation, create-only, is never stored).
 */
const STORED_KINDS = KIND_DEFINITIONS.filter((d) => d.verbs.includes('get') && !d.writes && (!d.projected || d.alsoStored)).map((d) => d.kind);

/** Kinds whose status the set-status projection folds from their GameServers. */
const DERIVED_STATUS_KINDS = new Set(KIND_DEFINITIONS.filter((d) => d.derivedStatus).map((d) => d.kind));

/**
 * Every projection of the log, in one place: the live cluster and `fleetsim replay` fold
 * events through the same reducers, so a replay rebuilds exactly the live state.
 */
export class ReadModel {
  readonly gameServers = new ObjectStore<GameServer>(GAMESERVER_KIND, evolveGameServer);
  readonly resources = new Map<string, ObjectStore<Resource>>(
    STORED_KINDS.map((kind) => [kind, new ObjectStore<Resource>(kind, evolveResource)]),
  );
  readonly setStatus = new SetStatusProjection();
  readonly gameServerEvents = new RecentGameServerEvents();
  /** Where `get` and `list` find each kind's objects. */
  private readonly sources = new Map<string, ObjectSource>();
  /** Sequence number of the last event applied. */
  lastSeq = 0;
  readonly eventTtlMs: number;
  /**
   * Writes of stored Events in log order (so in time order): expiry pops from the front, so an
   * applied event costs O(1) however many Events are kept. `eventHead` is the front.
   */
  private readonly eventWrites: EventWrite[] = [];
  private eventHead = 0;

  constructor(
    readonly gates: FeatureGates = FEATURE_DEFAULTS,
    options: ReadModelOptions = {},
  ) {
    this.eventTtlMs = options.eventTtlMs ?? DEFAULT_EVENT_TTL_MS;
    for (const [kind, store] of this.resources) this.sources.set(kind, store);
    this.sources.set(GAMESERVER_KIND, this.gameServers as unknown as ObjectSource);
    // Events are those written, and those derived from GameServers' changes.
    this.sources.set(EVENT_KIND, bothSources(this.resources.get(EVENT_KIND)!, this.gameServerEvents));
  }

  /**
   * Applies one event, telling `sink` (the commit in progress) what changed: GameServer changes,
   * watch changes, and the sets and fleets whose status moved. `entry`: the store's entry of the
   * GameServer the event is about, when the committer holds it (see `ObjectStore.apply`).
   * Returns, for an event of a GameServer the store held, the event before it in that GameServer's
   * history (its `prev` in the log, server/log/object-index.ts); undefined for any other event.
   */
  apply(event: StoredEvent, sink: ApplySink = IGNORE_CHANGES, entry?: StoreEntry<GameServer>): number | undefined {
    this.lastSeq = event.seq;
    this.expireEvents(event, sink);
    if (event.kind === GAMESERVER_KIND) {
      if (event.type === 'GameServersCreated') {
        for (const gs of gameServersOfBatch(event)) {
          this.gameServerChanged(event, this.gameServers.put(event, objectKey(gs.metadata.namespace, gs.metadata.name), gs), sink);
        }
        return undefined;
      }
      const held = entry !== undefined && entry.object.metadata.name === event.name && entry.object.metadata.namespace === event.namespace ? entry : undefined;
      const change = this.gameServers.apply(event, held);
      this.gameServerChanged(event, change, sink);
      return change.previous === undefined ? undefined : change.previousSeq;
    }
    const store = event.type === EVENTS_EXPIRED ? undefined : this.resources.get(event.kind);
    if (store) {
      const change = store.apply(event);
      sink.change(watchChange(event, change));
      if (event.kind === EVENT_KIND && change.object) this.eventWrites.push({ key: change.key, seq: event.seq, time: event.time });
    }
    sink.resource(event);
    return undefined;
  }

  /**
   * An independent copy of the model as it stands (for time travel: a replay resumed from a
   * checkpoint). Objects are shared, since reducers never change one in place; the rest is copied.
   */
  clone(): ReadModel {
    const copy = new ReadModel(this.gates, { eventTtlMs: this.eventTtlMs });
    copy.gameServers.copyFrom(this.gameServers);
    for (const [kind, store] of this.resources) copy.resources.get(kind)!.copyFrom(store);
    copy.setStatus.copyFrom(this.setStatus);
    copy.gameServerEvents.copyFrom(this.gameServerEvents);
    copy.lastSeq = this.lastSeq;
    for (let i = this.eventHead; i < this.eventWrites.length; i++) copy.eventWrites.push(this.eventWrites[i]!);
    return copy;
  }

  /** When the oldest Event, stored or derived, expires (epoch ms), or undefined when none is kept. */
  nextEventExpiry(): number | undefined {
    const derived = this.gameServerEvents.oldestTime();
    const stored = this.oldestStoredEventTime();
    const oldest = derived === undefined ? stored : stored === undefined ? derived : Math.min(stored, derived);
    return oldest === undefined ? undefined : oldest + this.eventTtlMs;
  }

  private oldestStoredEventTime(): number | undefined {
    const store = this.resources.get(EVENT_KIND)!;
    while (this.eventHead < this.eventWrites.length) {
      const write = this.eventWrites[this.eventHead]!;
      if (isLastWrite(store.getByKey(write.key), write)) return write.time;
      this.eventHead++; // A later write or a deletion superseded it.
    }
    return undefined;
  }

  /**
   * Drops stored Events whose last write is a TTL older than `event` (the time comes from the
   * log, never a clock, so a replay drops the same ones at the same point), telling watchers.
   * Derived GameServer Events are hidden past the same horizon.
   */
  private expireEvents(event: StoredEvent, sink: ApplySink): void {
    const horizon = event.time - this.eventTtlMs;
    this.gameServerEvents.horizon = horizon;
    const writes = this.eventWrites;
    if (this.eventHead >= writes.length || writes[this.eventHead]!.time > horizon) return;
    const store = this.resources.get(EVENT_KIND)!;
    while (this.eventHead < writes.length && writes[this.eventHead]!.time <= horizon) {
      const write = writes[this.eventHead++]!;
      const object = store.getByKey(write.key);
      if (!isLastWrite(object, write)) continue;
      store.remove(write.key);
      const { namespace, name } = object!.metadata;
      sink.change({ kind: EVENT_KIND, namespace, name, seq: event.seq, type: 'DELETED', last: object });
    }
    // Drop the expired front now and then, so the array does not grow with the log.
    if (this.eventHead > 1024 && this.eventHead * 2 > writes.length) {
      writes.splice(0, this.eventHead);
      this.eventHead = 0;
    }
  }

  private gameServerChanged(event: StoredEvent, change: ObjectChange<GameServer>, sink: ApplySink): void {
    // The Event it derives is kept before anyone hears of the change (EventExpiry asks for it).
    if (change.object) this.gameServerEvents.apply(event, change.object);
    sink.gameServer(change);
    sink.change(watchChange(event, change));
    const touched = this.setStatus.apply(change.previous, change.object, event.seq);
    if (touched.set) sink.derived(touched.setKey!, GAMESERVERSET_KIND, touched.namespace!, touched.set, event.seq);
    if (touched.fleet) sink.derived(touched.fleetKey!, FLEET_KIND, touched.namespace!, touched.fleet, event.seq);
  }

  store(kind: string): ObjectStore<Resource> | undefined {
    return this.resources.get(kind);
  }

  /** The object as the API serves it: sets and fleets carry their derived status. */
  get(kind: string, namespace: string, name: string): Resource | undefined {
    const object = this.sources.get(kind)?.get(namespace, name);
    return object && this.present(object);
  }

  list(kind: string, namespace?: string): Resource[] {
    const out: Resource[] = [];
    for (const object of this.sources.get(kind)?.values() ?? []) {
      if (namespace === undefined || object.metadata.namespace === namespace) out.push(this.present(object));
    }
    return out;
  }

  /** The object as the API serves it: a set's or fleet's status is folded from its GameServers. */
  present(object: Resource): Resource {
    if (!DERIVED_STATUS_KINDS.has(object.kind)) return object;
    const { kind, metadata } = object;
    const { namespace, name } = metadata;
    const status = this.setStatus.status(kind, namespace, name, templateKeys(object), this.gates);
    const seq = this.setStatus.seq(kind, namespace, name);
    const resourceVersion = String(Math.max(Number(object.metadata.resourceVersion), seq));
    return { ...object, metadata: { ...object.metadata, resourceVersion }, status };
  }
}

/** Where objects of one kind are read from. */
interface ObjectSource {
  get(namespace: string, name: string): Resource | undefined;
  values(): Iterable<Resource>;
}

/** The objects of `first` and of `second` (a name in both is `first`'s); `second`'s listed first. */
function bothSources(first: ObjectSource, second: ObjectSource): ObjectSource {
  return {
    get: (namespace, name) => first.get(namespace, name) ?? second.get(namespace, name),
    values: () => [...second.values(), ...first.values()],
  };
}

function isLastWrite(object: Resource | undefined, write: EventWrite): boolean {
  return object !== undefined && object.metadata.resourceVersion === String(write.seq);
}

function templateKeys(object: Resource): TemplateKeys {
  const spec = object.spec as { template?: { spec?: { counters?: object; lists?: object } } } | undefined;
  return {
    counters: Object.keys(spec?.template?.spec?.counters ?? {}),
    lists: Object.keys(spec?.template?.spec?.lists ?? {}),
  };
}

function watchChange<T>(event: StoredEvent, change: ObjectChange<T>): Change {
  const type: WatchEventType = change.object === undefined ? 'DELETED' : change.previous === undefined ? 'ADDED' : 'MODIFIED';
  // A batch event names no single object: its objects' keys do.
  const slash = event.name === '' ? change.key.indexOf('/') : -1;
  return {
    kind: event.kind,
    namespace: slash < 0 ? event.namespace : change.key.slice(0, slash),
    name: slash < 0 ? event.name : change.key.slice(slash + 1),
    seq: event.seq,
    type,
    ...(type === 'DELETED' && { last: change.previous }),
  };
}

