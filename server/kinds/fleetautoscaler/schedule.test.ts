import { describe, expect, it } from 'vitest';
import { cronError, durationError, parseRfc3339, timezoneError } from './schedule.js';

describe('durationError (Go time.ParseDuration)', () => {
  it.each(['0', '-0', '5h', '2h45m', '300ms', '-1.5h', '1.h', '.5s', '1h2m3s4ms5us6ns', '3µs', '3μs', '+10m'])('accepts %s', (text) => {
    expect(durationError(text)).toBeUndefined();
  });

  it.each<[string, string]>([
    ['', 'time: invalid duration ""'],
    ['-', 'time: invalid duration "-"'],
    ['5', 'time: missing unit in duration "5"'],
    ['1h5', 'time: missing unit in duration "1h5"'],
    ['.h', 'time: invalid duration ".h"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
    ['h', 'time: invalid duration "h"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
  ])('rejects %j', (text, error) => {
    expect(durationError(text)).toBe(error);
  });
});

describe('timezoneError (Go time.LoadLocation)', () => {
  it.each(['', 'UTC', 'Local', 'America/New_York', 'Europe/Paris', 'Asia/Tokyo'])('accepts %j', (zone) => {
    expect(timezoneError(zone)).toBeUndefined();
  });

  it.each(['Mars/Olympus', 'Nowhere', '../etc/passwd'])('rejects %j', (zone) => {
    expect(timezoneError(zone)).toBe(`unknown time zone ${zone}`);
  });
});

describe('cronError (standard five-field cron)', () => {
  it.each([
    '0 1 * * 0',
    '*/15 * * * *',
    '0 9-17 * * MON-FRI',
    '30 2 1,15 jan,jul *',
    '5/10 * * * ?',
    '@daily',
    '@every 1h30m',
    'TZ=Europe/Paris 0 1 * * *',
    '  0 0 1 1 *  ',
  ])('accepts %j', (spec) => {
    expect(cronError(spec)).toBeUndefined();
  });

  it.each<[string, string]>([
    ['', 'empty spec string'],
    ['0 1 * *', 'expected exactly 5 fields, found 4: [0 1 * *]'],
    ['0 0 1 1 * *', 'expected exactly 5 fields, found 6: [0 0 1 1 * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* 24 * * *', 'end of range (24) above maximum (23): 24'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * 13 *', 'end of range (13) above maximum (12): 13'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-2 * * * *', 'beginning of range (5) beyond end of range (2): 5-2'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
    ['TZ=Mars/Base 0 1 * * *', 'provided bad location Mars/Base: unknown time zone Mars/Base'],
  ])('rejects %j', (spec, error) => {
    expect(cronError(spec)).toBe(error);
  });
});

describe('parseRfc3339', () => {
  it.each<[string, number | undefined]>([
    ['2100-02-20T16:04:04-05:00', Date.parse('2100-02-20T21:04:04Z')],
    ['2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:00Z')],
    ['2026-01-01T00:00:00.5Z', Date.parse('2026-01-01T00:00:00.500Z')],
    ['2026-01-01', undefined],
    ['2026-13-01T00:00:00Z', undefined],
    ['next tuesday', undefined],
  ])('%j', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });
});
