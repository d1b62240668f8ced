import type { EventLog, StoredEvent } from '../log/event-log.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { evolveGameServer } from '../kinds/gameserver/events.js';
import { type Resource, evolveResource } from '../kinds/resource.js';
import { recordKey } from './observe.js';

/** One object as last recorded: the object, and its resourceVersion on the cluster (the log's is its own). */
export interface RecordedObject {
  kind: string;
  object: Resource;
  resourceVersion: string;
}

/**
 * What a recording holds of each object, folded from its events by the kinds' reducers: what a
 * watch event or a list is compared with, so nothing is recorded twice and a list finds what
 * changed, appeared or went while no watch was open (a 410, a restart of the recorder).
 */
export class RecordedState {
  private readonly objects = new Map<string, RecordedObject>();

  /** The state a recording ends with (an empty log: nothing). */
  static fromLog(log: EventLog): RecordedState {
    const state = new RecordedState();
    for (const event of log.read()) state.apply(event);
    return state;
  }

  get size(): number {
    return this.objects.size;
  }

  get(kind: string, namespace: string, name: string): RecordedObject | undefined {
    return this.objects.get(recordKey(kind, namespace, name));
  }

  /** The objects of a kind, in one namespace or all. */
  *ofKind(kind: string, namespace?: string): Generator<RecordedObject> {
    for (const recorded of this.objects.values()) {
      if (recorded.kind === kind && (namespace === undefined || recorded.object.metadata.namespace === namespace)) yield recorded;
    }
  }

  /** Folds one event of the recording (the markers change nothing). */
  apply(event: StoredEvent): void {
    const key = recordKey(event.kind, event.namespace, event.name);
    const known = this.objects.get(key);
    const object =
      event.kind === GAMESERVER_KIND
        ? (evolveGameServer(known?.object as unknown as GameServer | undefined, event) as unknown as Resource | undefined)
        : evolveResource(known?.object, event);
    if (object === undefined) {
      this.objects.delete(key);
      return;
    }
    if (object === known?.object) return;
    const resourceVersion = event.cause?.type === 'observed' ? event.cause.resourceVersion : (known?.resourceVersion ?? '');
    this.objects.set(key, { kind: event.kind, object, resourceVersion });
  }
}

/**
 * Whether a version seen is older than (or the same as) the one recorded. resourceVersions are
 * opaque to clients, but etcd's (and fleetsim's) are numbers that grow: where both are numbers a
 * stale replay (a watch resumed from an older list) is told apart; otherwise only equality is.
 */
export function notNewer(seen: string, recorded: string): boolean {
  if (seen === recorded) return true;
  if (!/^\d+$/.test(seen) || !/^\d+$/.test(recorded)) return false;
  return BigInt(seen) <= BigInt(recorded);
}
