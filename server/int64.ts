/**
 * Agones's int64 fields (counters' count and capacity, player tracking, counter actions and
 * selectors, their sums) must stay exact past 2^53. They are held as an `Int64`: a JS number
 * while it is a safe integer, a bigint beyond that. The common case stays a plain number, so
 * code without big values pays nothing; the exact JSON parser (`server/log/json.ts`) produces
 * the same form, and every sum or difference goes through the helpers below so that it is exact
 * and comes back in that form. Relational operators (`<`, `>`) compare numbers and bigints
 * exactly as they are; `===` is only meaningful between values in this canonical form.
 */
export type Int64 = number | bigint;

export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;

/** The canonical form: a number when it is a safe integer, the bigint otherwise. */
export function toInt64(value: bigint): Int64 {
  return value >= -9007199254740991n && value <= 9007199254740991n ? Number(value) : value;
}

/** An integer, number or bigint (not a float, not NaN). */
export function isInteger(value: unknown): value is Int64 {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
}

export function inInt64Range(value: Int64): boolean {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return true;
  const big = BigInt(value);
  return big >= INT64_MIN && big <= INT64_MAX;
}

export function addInt64(a: Int64, b: Int64): Int64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  return toInt64(BigInt(a) + BigInt(b));
}

export function subInt64(a: Int64, b: Int64): Int64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const difference = a - b;
    if (Number.isSafeInteger(difference)) return difference;
  }
  return toInt64(BigInt(a) - BigInt(b));
}

export function mulInt64(a: Int64, b: Int64): Int64 {
  if (typeof a === 'number' && typeof b === 'number') {
    const product = a * b;
    if (Number.isSafeInteger(product)) return product;
  }
  return toInt64(BigInt(a) * BigInt(b));
}

export function minInt64(a: Int64, b: Int64): Int64 {
  return b < a ? b : a;
}

export function maxInt64(a: Int64, b: Int64): Int64 {
  return b > a ? b : a;
}

/** Equality across forms (a value not yet canonical, such as `1n`, equals `1`). */
export function sameInt64(a: Int64, b: Int64): boolean {
  return typeof a === typeof b ? a === b : BigInt(a) === BigInt(b);
}
