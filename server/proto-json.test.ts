import { describe, expect, it } from 'vitest';
import { GrpcCode } from './grpc-status.js';
import { decodeMessage, enumNumber, int64, map, str, uint64AsInt64 } from './proto-json.js';

function errorOf(run: () => unknown): { code: number; message: string } {
  try {
    run();
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error('expected an error');
}

describe('protobuf-JSON decoder', () => {
  it('reads an int64 as a number or a string of digits, exact past 2^53, and nothing else', () => {
    expect(int64(5, 'count')).toBe(5);
    expect(int64('-7', 'count')).toBe(-7);
    expect(int64('9223372036854775807', 'count')).toBe(9223372036854775807n);
    for (const bad of [' 5', '5.0', 1.5, '9223372036854775808', true]) {
      const error = errorOf(() => int64(bad, 'count'));
      expect(error.code).toBe(GrpcCode.INVALID_ARGUMENT);
      expect(error.message).toMatch(/^proto: invalid value for int64 field count: /);
    }
  });

  it('wraps a uint64 past the int64 maximum as Agones casts it', () => {
    expect(uint64AsInt64('18446744073709551615', 'p')).toBe(-1);
  });

  it('names the field, key or index at fault', () => {
    expect(errorOf(() => map({ a: 'x', b: null }, 'labels', 'string', str)).message).toBe('proto: invalid value for string field labels[b]: null');
    expect(errorOf(() => enumNumber('SIDEWAYS', 'order', 'Priority.Order', ['Ascending'])).message).toBe(
      'proto: invalid value for enum Priority.Order field order: "SIDEWAYS"',
    );
  });

  it('decodes a flat message by proto or JSON name, ignoring unknown fields and nulls', () => {
    const fields = [
      { name: 'player_id', json: 'playerId', type: 'string' as const },
      { name: 'count', type: 'int64' as const },
    ];
    expect(decodeMessage({ playerId: 'p', count: null, extra: 1 }, fields, 'M')).toEqual({ message: { player_id: 'p' }, present: ['player_id'] });
    expect(errorOf(() => decodeMessage([], fields, 'M')).message).toBe('proto: syntax error: M must be a JSON object, got []');
  });
});
