import { describe, expect, it } from 'vitest';
import { quantityValue } from './quantity.js';

describe('quantityValue', () => {
  it.each<[unknown, number | undefined]>([
    ['1', 1],
    ['500m', 0.5],
    ['1Gi', 2 ** 30],
    ['1024Mi', 2 ** 30],
    ['2k', 2000],
    ['1e3', 1000],
    ['1.5', 1.5],
    ['.5', 0.5],
    ['-1', -1],
    ['+2M', 2e6],
    [' 3 ', 3],
    [4, 4],
    [0.25, 0.25],
    ['1Ki', 1024],
    ['10u', 1e-5],
    ['abc', undefined],
    ['1KB', undefined],
    ['', undefined],
    ['1.2.3', undefined],
    [true, undefined],
    [null, undefined],
  ])('%j', (raw, expected) => {
    expect(quantityValue(raw)).toBe(expected);
  });
});
