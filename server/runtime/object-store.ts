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
 * The read model of one kind: objects by `ns/name`, changed only by the kind's pure reducer.
 * Reducers are per object, so applying an event costs the same whatever the fleet size.
 */
export class ObjectStore<T> {
  private readonly objects = new Map<string, T>();

  constructor(
    readonly kind: string,
    private readonly reduce: Reducer<T>,
  ) {}

  apply(event: StoredEvent): ObjectChange<T> {
    const key = objectKey(event.namespace, event.name);
    const previous = this.objects.get(key);
    const object = this.reduce(previous, event);
    if (object === undefined) this.objects.delete(key);
    else if (object !== previous) this.objects.set(key, object);
    return { event, key, previous, object };
  }

  /** Puts an object made by a multi-object event (a batch creation). */
  put(event: StoredEvent, key: string, object: T): ObjectChange<T> {
    const previous = this.objects.get(key);
    this.objects.set(key, object);
    return { event, key, previous, object };
  }

  /**
   * Drops an object a projection rule retires without an event of its own (an Event past its
   * TTL, decided by the time of the event being applied). Returns what was removed.
   */
  remove(key: string): T | undefined {
    const object = this.objects.get(key);
    this.objects.delete(key);
    return object;
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  getByKey(key: string): T | undefined {
    return this.objects.get(key);
  }

  get size(): number {
    return this.objects.size;
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  entries(): IterableIterator<[string, T]> {
    return this.objects.entries();
  }

  /** Makes this store hold what `other` holds. Reducers never change an object in place, so the objects are shared. */
  copyFrom(other: ObjectStore<T>): void {
    this.objects.clear();
    for (const [key, object] of other.objects) this.objects.set(key, object);
  }
}
