import { describe, expect, it } from 'vitest';
import { parseGoDuration } from '../../k8s/duration.js';
import { GO_ZERO_TIME_MS, cronError, durationError, nextCronTime, parseCron, parseRfc3339, timezoneError } from './schedule.js';

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

describe('parseGoDuration', () => {
  it.each<[string, number]>([
    ['8h', 8 * 3_600_000],
    ['2h45m', 9_900_000],
    ['-1.5h', -5_400_000],
    ['300ms', 300],
    ['0', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toEqual({ value: ms });
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

/** robfig/cron's Next, the expected times checked against the Go library itself. */
describe('nextCronTime (robfig/cron Next)', () => {
  const next = (spec: string, after: string, zone?: string) => {
    const parsed = parseCron(spec);
    if ('error' in parsed) throw new Error(parsed.error);
    const ms = nextCronTime(parsed.value, Date.parse(after), zone);
    return ms === GO_ZERO_TIME_MS ? 'never' : new Date(ms).toISOString();
  };

  it('finds the next weekday start, strictly after the time given, in whole seconds', () => {
    // 2026-01-02 is a Friday.
    expect(next('0 9 * * 1-5', '2026-01-02T10:00:00Z')).toBe('2026-01-05T09:00:00.000Z');
    expect(next('0 9 * * 1-5', '2026-01-05T09:00:00Z')).toBe('2026-01-06T09:00:00.000Z');
    expect(next('0 9 * * 1-5', '2026-01-05T08:59:59.500Z')).toBe('2026-01-05T09:00:00.000Z');
    expect(next('*/15 * * * *', '2026-01-01T00:07:00Z')).toBe('2026-01-01T00:15:00.000Z');
  });

  it('reads descriptors, @every included (a fixed delay from the time given, at least a second)', () => {
    expect(next('@daily', '2026-01-01T00:00:00Z')).toBe('2026-01-02T00:00:00.000Z');
    expect(next('@hourly', '2026-01-01T00:30:00Z')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('@weekly', '2026-01-01T00:00:00Z')).toBe('2026-01-04T00:00:00.000Z');
    expect(next('@monthly', '2026-01-15T00:00:00Z')).toBe('2026-02-01T00:00:00.000Z');
    expect(next('@yearly', '2026-01-15T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('@every 1h', '2026-01-01T00:00:00.250Z')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('@every 500ms', '2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:01.000Z');
  });

  it('days: when either day field is * (or ?) both must match, otherwise either may', () => {
    // The 13th or a Friday: Friday the 2nd comes first.
    expect(next('0 0 13 * 5', '2026-01-01T00:00:00Z')).toBe('2026-01-02T00:00:00.000Z');
    // `?` is a star: the 13th, whatever the weekday.
    expect(next('0 0 13 * ?', '2026-01-01T00:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
    // `*/2` is no star (a real step): odd days or Mondays; `*/1` still is.
    expect(next('0 0 */2 * 1', '2026-01-01T00:00:00Z')).toBe('2026-01-03T00:00:00.000Z');
    expect(next('0 0 * * 1', '2026-01-01T00:00:00Z')).toBe('2026-01-05T00:00:00.000Z');
    expect(next('0 0 */1 * 5', '2026-01-01T00:00:00Z')).toBe('2026-01-02T00:00:00.000Z');
  });

  it('reads the fields on the clocks of the zone given', () => {
    expect(next('0 9 * * *', '2026-01-01T00:00:00Z', 'America/New_York')).toBe('2026-01-01T14:00:00.000Z');
    expect(next('0 9 * * *', '2026-01-01T00:00:00Z', 'Asia/Kolkata')).toBe('2026-01-01T03:30:00.000Z');
    expect(next('0 9 * * *', '2026-01-01T00:00:00Z', '')).toBe('2026-01-01T09:00:00.000Z');
    // A TZ= prefix wins over the zone given.
    expect(next('TZ=Asia/Kolkata 0 9 * * *', '2026-01-01T00:00:00Z', 'America/New_York')).toBe('2026-01-01T03:30:00.000Z');
  });

  it('skips a wall time a clock change skips, and runs twice in an hour it repeats (as robfig does)', () => {
    // New York springs forward at 02:00 on 2026-03-08: there is no 02:30 that day.
    expect(next('30 2 * * *', '2026-03-08T05:00:00Z', 'America/New_York')).toBe('2026-03-09T06:30:00.000Z');
    expect(next('30 2 * * *', '2026-03-29T00:00:00Z', 'Europe/Berlin')).toBe('2026-03-30T00:30:00.000Z');
    // It falls back at 02:00 on 2026-11-01: 01:30 comes in EDT, then again in EST.
    expect(next('30 1 * * *', '2026-11-01T04:00:00Z', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
    expect(next('30 1 * * *', '2026-11-01T05:30:00Z', 'America/New_York')).toBe('2026-11-01T06:30:00.000Z');
    // Santiago's clocks skip midnight of 2026-09-06, so that start is missed until 2027.
    expect(next('0 0 6 9 *', '2026-09-01T12:00:00Z', 'America/Santiago')).toBe('2027-09-06T03:00:00.000Z');
  });

  it('gives up after five years, with Go\'s zero time', () => {
    expect(next('0 0 30 2 *', '2026-01-01T00:00:00Z')).toBe('never');
    expect(next('0 0 29 2 *', '2026-01-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
  });
});

describe('parseRfc3339', () => {
  it.each<[string, number | undefined]>([
    ['2100-02-20T16:04:04-05:00', Date.parse('2100-02-20T21:04:04Z')],
    ['2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:00:00Z')],
    ['2026-01-01T00:00:00.5Z', Date.parse('2026-01-01T00:00:00.500Z')],
    ['2026-01-01', undefined],
    ['2026-13-01T00:00:00Z', undefined],
    ['2026-02-30T00:00:00Z', undefined],
    ['2026-01-01T24:00:00Z', undefined],
    ['2026-01-01 00:00:00Z', Date.parse('2026-01-01T00:00:00Z')],
    ['next tuesday', undefined],
  ])('%j', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });
});
