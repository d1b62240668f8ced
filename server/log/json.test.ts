import { describe, expect, it } from 'vitest';
import { parseJsonExact, parseYamlExact, stringifyJsonExact } from './json.js';

describe('exact JSON text (int64 past 2^53)', () => {
  it('reads an integer past 2^53 as a bigint and a safe one as a number, as JSON.parse otherwise', () => {
    expect(parseJsonExact('{"a":9223372036854775807,"b":9007199254740991,"c":1.5,"d":"12345678901234567890"}')).toEqual({
      a: 9223372036854775807n,
      b: 9007199254740991,
      c: 1.5,
      d: '12345678901234567890',
    });
    expect(parseJsonExact('{"a":-9223372036854775808}')).toEqual({ a: -9223372036854775808n });
    // A long digit run that is not an integer past 2^53 reads as before.
    expect(parseJsonExact('{"a":0.1234567890123456,"b":1,"b":2}')).toEqual({ a: 0.1234567890123456, b: 2 });
    expect(() => parseJsonExact('{"a":12345678901234567890,')).toThrow(SyntaxError);
  });

  it('writes a bigint as exact digits, and anything else exactly as JSON.stringify', () => {
    expect(stringifyJsonExact({ a: 9223372036854775807n, b: [1, undefined], c: undefined })).toBe('{"a":9223372036854775807,"b":[1,null]}');
    const plain = { a: 1, b: 'x', c: [true, null] };
    expect(stringifyJsonExact(plain)).toBe(JSON.stringify(plain));
    expect(parseJsonExact(stringifyJsonExact({ n: -9223372036854775808n }))).toEqual({ n: -9223372036854775808n });
  });

  it('reads YAML integers past 2^53 exactly too', () => {
    expect(parseYamlExact('a: 9223372036854775807\nb: 7\nc: "9223372036854775807"')).toEqual({ a: 9223372036854775807n, b: 7, c: '9223372036854775807' });
  });
});
