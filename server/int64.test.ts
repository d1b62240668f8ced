import { describe, expect, it } from 'vitest';
import { INT64_MAX, addInt64, inInt64Range, maxInt64, minInt64, sameInt64, subInt64, toInt64 } from './int64.js';

describe('Int64: a number while safe, a bigint past 2^53', () => {
  it('keeps sums and differences exact and canonical', () => {
    expect(addInt64(1, 2)).toBe(3);
    expect(addInt64(Number.MAX_SAFE_INTEGER, 1)).toBe(9007199254740992n);
    expect(subInt64(INT64_MAX, 1)).toBe(9223372036854775806n);
    expect(subInt64(9007199254740993n, 2)).toBe(9007199254740991);
    expect(toInt64(5n)).toBe(5);
  });

  it('compares across forms', () => {
    expect(minInt64(INT64_MAX, 3)).toBe(3);
    expect(maxInt64(0, INT64_MAX)).toBe(INT64_MAX);
    expect(sameInt64(1n, 1)).toBe(true);
    expect(inInt64Range(INT64_MAX)).toBe(true);
    expect(inInt64Range(INT64_MAX + 1n)).toBe(false);
  });
});
