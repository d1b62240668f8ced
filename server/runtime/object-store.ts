import type { StoredEvent } from '../log/event-log.js';
import { objectKey } from '../kinds/meta.js';

export type Reducer<T> = (object: T | undefined, event: StoredEvent) => T | undefined;

/** One change of one object, as a projection applied it. */
export interface ObjectChange<T> {
  event: StoredEvent;
  key: string;
  previous: T | undefined;
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
}

/**
 * The read model of one kind: objects by `ns/name`, changed only by the kind's pure reducer.
 * Reducers are per object, so applying an event costs the same whatever the fleet size.
 */
export class ObjectStore<T> {
  /** Every slot by key, in the order first stored (the order every listing and scan keeps). */
  private readonly slots = new Map<string, Slot<T>>();
  /**
   * The same slots by namespace, then name: what an event or a caller names an object by. A
   * lookup builds no `ns/name` string to hash, and the names it is given are mostly the very
   * strings stored (taken from the object), compared by pointer with their hash kept: the key
   * built afresh for each event and each read was a tenth of a simulated day's time.
   */
  private readonly byName = new Map<string, Map<string, Slot<T>>>();

  constructor(
    readonly kind: string,
    private readonly reduce: Reducer<T>,
  ) {}

  apply(event: StoredEvent): ObjectChange<T> {
    const slot = this.byName.get(event.namespace)?.get(event.name);
    const previous = slot?.object;
    const object = this.reduce(previous, event);
    if (slot) {
      if (object === undefined) this.drop(slot.key, event.namespace, event.name);
      else slot.object = object;
      return { event, key: slot.key, previous, object };
    }
    const key = objectKey(event.namespace, event.name);
    if (object !== undefined) this.insert(key, event.namespace, event.name, object);
    return { event, key, previous, object };
  }

  /** Puts an object made by a multi-object event (a batch creation). */
  put(event: StoredEvent, key: string, object: T): ObjectChange<T> {
    const slot = this.slots.get(key);
    const previous = slot?.object;
    if (slot) slot.object = object;
    else this.insert(key, ...namesOf(key), object);
    return { event, key: slot?.key ?? key, previous, object };
  }

  /**
   * Drops an object a projection rule retires without an event of its own (an Event past its
   * TTL, decided by the time of the event being applied). Returns what was removed.
   */
  remove(key: string): T | undefined {
    const slot = this.slots.get(key);
    if (slot) this.drop(slot.key, ...namesOf(key));
    return slot?.object;
  }

  get(namespace: string, name: string): T | undefined {
    return this.byName.get(namespace)?.get(name)?.object;
  }

  getByKey(key: string): T | undefined {
    return this.slots.get(key)?.object;
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
    this.slots.clear();
    this.byName.clear();
    for (const { key, object } of other.slots.values()) this.insert(key, ...namesOf(key), object);
  }

  private insert(key: string, namespace: string, name: string, object: T): void {
    const slot = { key, object };
    this.slots.set(key, slot);
    let names = this.byName.get(namespace);
    if (!names) {
      names = new Map();
      this.byName.set(namespace, names);
    }
    names.set(name, slot);
  }

  private drop(key: string, namespace: string, name: string): void {
    this.slots.delete(key);
    const names = this.byName.get(namespace);
    names?.delete(name);
    if (names?.size === 0) this.byName.delete(namespace);
  }
}

/** A key's namespace and name (`objectKey`'s inverse: a namespace never holds a slash). */
function namesOf(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
