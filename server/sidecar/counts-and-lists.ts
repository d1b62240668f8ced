import { LIST_MAX_CAPACITY, type CounterStatus, type ListStatus } from '../kinds/gameserver-types.js';
import { type Int64, addInt64, maxInt64, minInt64 } from '../int64.js';
import { sdkErrors } from './errors.js';

/*
 * The rules of the SDK's Counters and Lists (the CountsAndLists gate): what an update makes of a
 * counter or a list, or the error that refuses it. The sidecar reads the current one and commits
 * the result.
 */

export interface Counter {
  name: string;
  count: Int64;
  capacity: Int64;
}

export interface List {
  name: string;
  /** A request's capacity is int64 on the wire; a stored list's is at most 1000. */
  capacity: Int64;
  values: string[];
}

/** `count`/`capacity` absent = leave as is; `countDiff` 0 = no change (proto wrapper semantics). */
export interface CounterUpdate {
  name: string;
  count?: Int64;
  capacity?: Int64;
  countDiff: Int64;
}

export const LIST_FIELDS = ['name', 'capacity', 'values'] as const;

/**
 * Capacity, then count, then countDiff, each checked against the result of the one before; a
 * failing part rejects the whole request. A capacity below the count clamps the count, as the
 * real sidecar's write does.
 */
export function counterAfter(current: CounterStatus, update: CounterUpdate): CounterStatus {
  if (update.count === undefined && update.capacity === undefined && update.countDiff === 0) {
    throw sdkErrors.malformedCounterUpdate(`name:${JSON.stringify(update.name)}`);
  }
  const capacity = update.capacity ?? current.capacity;
  if (capacity < 0) throw sdkErrors.negativeCapacity(capacity);
  if (update.count !== undefined && (update.count < 0 || update.count > capacity)) {
    throw sdkErrors.countOutOfRange(update.count, capacity);
  }
  let count = update.count ?? current.count;
  if (update.countDiff !== 0) {
    count = addInt64(count, update.countDiff);
    if (count < 0 || count > capacity) throw sdkErrors.countOutOfRange(count, capacity);
  }
  return { count: minInt64(maxInt64(count, 0), capacity), capacity };
}

/** An UpdateList request's mask and sizes, checked before the list is looked up. */
export function checkListUpdate(list: List, mask: readonly string[]): void {
  const badPaths = mask.filter((p) => !(LIST_FIELDS as readonly string[]).includes(p));
  if (badPaths.length) throw sdkErrors.badMask(badPaths);
  if (list.capacity < 0 || list.capacity > LIST_MAX_CAPACITY) throw sdkErrors.listCapacityOutOfRange(list.capacity);
  if (list.values.length > LIST_MAX_CAPACITY) throw sdkErrors.listTooLong(list.name, list.values.length);
}

/**
 * Replaces the fields named by the mask. An empty mask merges as protobuf does (a non-zero
 * capacity overwrites, values are appended): the Node SDK's SetListCapacity relies on it.
 * Values stay unique and within the capacity.
 */
export function listAfterUpdate(current: ListStatus, list: List, mask: readonly string[]): ListStatus {
  let capacity = current.capacity;
  let values = current.values;
  if (mask.length === 0) {
    if (list.capacity !== 0) capacity = Number(list.capacity);
    values = [...values, ...list.values];
  } else {
    if (mask.includes('capacity')) capacity = Number(list.capacity);
    if (mask.includes('values')) values = list.values;
  }
  return { capacity, values: [...new Set(values)].slice(0, capacity) };
}

/** The list `name` with `value` added: refused when it is full or holds the value already. */
export function listWithValue(current: ListStatus, name: string, value: string): ListStatus {
  if (current.capacity <= current.values.length) throw sdkErrors.listFull(current.capacity, current.values.length);
  if (current.values.includes(value)) throw sdkErrors.valueExists(value, name);
  return { capacity: current.capacity, values: [...current.values, value] };
}

/** The list `name` without `value`: refused when it does not hold it. */
export function listWithoutValue(current: ListStatus, name: string, value: string): ListStatus {
  const index = current.values.indexOf(value);
  if (index < 0) throw sdkErrors.valueMissing(value, name);
  return { capacity: current.capacity, values: current.values.filter((_, i) => i !== index) };
}
