import type { StoredEvent } from '../log/event-log.js';
import { objectKey } from '../kinds/meta.js';

export type Reducer<T> = (object: T | undefined, event: StoredEvent) => T | undefined;

/** One change of one object, as a projection applied it. */
export interface ObjectChange<T> {
  event: StoredEvent;
  key: string;
  previous: T | undefined;
  /** The sequence number of the event that made `previous` (0: none). */
  previousSeq: number;
  object: T | undefined;
}

/**
 * An object and its key. The key is the string the object was first stored under, and every
 * later change carries that same string: the indexes and controllers that follow the changes
 * key their maps by it, and a lookup with the very string a map holds is a pointer comparison,
 * where an equal string made afresh for each event is compared character by character (and
 * those comparisons, cache misses mostly, were a tenth of a simulated day).
 */
interface Slot<T> {
  readonly key: string;
  object: T;
  /** The last event applied to the object: where the log's index links the next one (`ObjectChange.previousSeq`). */
  seq: number;
  /** Set when the object is deleted: an entry held past that no longer stands for a stored object. */
  gone?: true;
}

/** An object's entry in its store, live (see `ObjectStore.entry`). */
export interface StoreEntry<T> {
  readonly key: string;
  readonly object: T;
}

/**
 * The read model of one kind: objects by `ns/name`, changed only by the kind's pure reducer.
 * Reducers are per object, so applying an event costs the same whatever the fleet size.
 */
export class ObjectStore<T> {
  private readonly slots = new Map<string, Slot<T>>();

  constructor(
    readonly kind: string,
    private readonly reduce: Reducer<T>,
  ) {}

  /**
   * Applies an event to its object. `entry`: the object's entry, from a caller that holds it (the
   * one whose machine decided the event), so that it is not found again by name in a store of the
   * whole fleet; one deleted since is found by name.
   */
  apply(event: StoredEvent, entry?: StoreEntry<T>): ObjectChange<T> {
    const held = entry as Slot<T> | undefined;
    const slot = held !== undefined && held.gone === undefined ? held : this.slots.get(objectKey(event.namespace, event.name));
    const object = this.reduce(slot?.object, event);
    return this.settle(event, slot, slot?.key ?? objectKey(event.namespace, event.name), object);
  }

  /** Puts an object made by a multi-object event (a batch creation). */
  put(event: StoredEvent, key: string, object: T): ObjectChange<T> {
    const slot = this.slots.get(key);
    return this.settle(event, slot, slot?.key ?? key, object);
  }

  /** Makes `object` (undefined: deleted) what `event` left under `key`, in its slot when it has one. */
  private settle(event: StoredEvent, slot: Slot<T> | undefined, key: string, object: T | undefined): ObjectChange<T> {
    const previous = slot?.object;
    const previousSeq = slot?.seq ?? 0;
    if (object === undefined) {
      if (slot) this.delete(slot);
    } else if (slot) {
      slot.object = object;
      slot.seq = event.seq;
    } else {
      this.slots.set(key, { key, object, seq: event.seq });
    }
    return { event, key, previous, previousSeq, object };
  }

  /**
   * Drops an object a projection rule retires without an event of its own (an Event past its
   * TTL, decided by the time of the event being applied). Returns what was removed.
   */
  remove(key: string): T | undefined {
    const slot = this.slots.get(key);
    if (slot) this.delete(slot);
    return slot?.object;
  }

  private delete(slot: Slot<T>): void {
    this.slots.delete(slot.key);
    slot.gone = true;
  }

  get(namespace: string, name: string): T | undefined {
    return this.slots.get(objectKey(namespace, name))?.object;
  }

  /** The last event applied to the object (its head in the log's index); undefined when it is not stored. */
  seqOf(namespace: string, name: string): number | undefined {
    return this.slots.get(objectKey(namespace, name))?.seq;
  }

  getByKey(key: string): T | undefined {
    return this.slots.get(key)?.object;
  }

  /**
   * The entry of `key`, live: its `object` is the current version for as long as the object
   * exists, so a caller that commits a change reads the new version from it without a lookup.
   */
  entry(key: string): StoreEntry<T> | undefined {
    return this.slots.get(key);
  }

  get size(): number {
    return this.slots.size;
  }

  /** Every object, without the generator `values()` needs (a scan of a whole fleet per autoscaler sync). */
  forEach(visit: (object: T) => void): void {
    for (const slot of this.slots.values()) visit(slot.object);
  }

  *values(): IterableIterator<T> {
    for (const slot of this.slots.values()) yield slot.object;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const slot of this.slots.values()) yield [slot.key, slot.object];
  }

  /** Makes this store hold what `other` holds. Reducers never change an object in place, so the objects are shared. */
  copyFrom(other: ObjectStore<T>): void {
    for (const slot of this.slots.values()) slot.gone = true;
    this.slots.clear();
    for (const { key, object, seq } of other.slots.values()) this.slots.set(key, { key, object, seq });
  }
}
