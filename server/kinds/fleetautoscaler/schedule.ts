import { parseGoDuration } from '../../k8s/duration.js';
import { isDateTime } from '../../k8s/schema.js';
import { goQuote } from '../../k8s/validation.js';

// The autoscaler (machines/) reads a Schedule's duration through this module, the home of its fields' meaning.
export { parseGoDuration };

/**
 * What a Schedule autoscaler policy's fields mean, read as Go reads them: durations
 * (`time.ParseDuration`), time zones (`time.LoadLocation`) and cron expressions (the robfig/cron
 * v3 standard parser and its `Next`). Validation asks for the Go error text (undefined when the
 * input is valid); the autoscaler asks for the parsed values. One parser serves both.
 */

/** A parse that either gives a value or says, in Go's words, why not. */
export type Parsed<T> = { value: T } | { error: string };

export function durationError(text: string): string | undefined {
  const parsed = parseGoDuration(text);
  return 'error' in parsed ? parsed.error : undefined;
}

/** The IANA name Go's `time.LoadLocation` gives for `name`: empty is UTC, `Local` the host's zone. */
function zoneName(name: string): string {
  if (name === '' || name === 'UTC') return 'UTC';
  // Node reads the host's zone as Go does (TZ, else /etc/localtime).
  if (name === 'Local') return new Intl.DateTimeFormat().resolvedOptions().timeZone;
  return name;
}

/** Go's `time.LoadLocation`: empty and `UTC` are UTC, `Local` is the host's zone, else IANA names. */
export function timezoneError(name: string): string | undefined {
  try {
    wallClockFormat(zoneName(name));
    return undefined;
  } catch {
    return `unknown time zone ${name}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Wall clocks in a time zone

/** A time as a clock on the wall of a zone shows it (month 1–12, weekday 0 = Sunday). */
interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number;
}

const WALL_CLOCK_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: making one costs far more than using it. Throws for an unknown zone. */
function wallClockFormat(zone: string): Intl.DateTimeFormat {
  let format = WALL_CLOCK_FORMATS.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    WALL_CLOCK_FORMATS.set(zone, format);
  }
  return format;
}

/** Milliseconds since the epoch of a wall time read as if it were UTC (no two-digit-year surprise). */
function wallAsUtc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function wallTime(zone: string, ms: number): WallTime {
  const fields: Record<string, number> = {};
  for (const part of wallClockFormat(zone).formatToParts(ms)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = fields;
  const weekday = new Date(wallAsUtc(year, month, day, 0, 0, 0)).getUTCDay();
  return { year, month, day, hour, minute, second, weekday };
}

/** How far the zone's clocks are ahead of UTC at instant `ms` (whole seconds, as tz data has it). */
function utcOffset(zone: string, ms: number): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const wall = wallTime(zone, whole);
  return wallAsUtc(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second) - whole;
}

/**
 * Go's `time.Date` in a zone: fields out of range carry over (day 32 is the 1st of the next
 * month), and a wall time the zone skips or shows twice is resolved as Go resolves it: take the
 * offset in force at the wall time read as UTC, and if the instant it gives lies outside that
 * offset's period, use the offset in force at that instant instead. So at New York's spring gap
 * 02:30 becomes 01:30 EST, and in its autumn overlap 01:30 is the first (EDT) one.
 */
function zonedDate(zone: string, year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const wall = wallAsUtc(year, month, day, hour, minute, second);
  const guess = utcOffset(zone, wall);
  const checked = utcOffset(zone, wall - guess);
  return wall - checked;
}

// ---------------------------------------------------------------------------------------------
// Cron expressions (robfig/cron v3, standard parser: minute hour day-of-month month day-of-week)

interface CronBounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

/** The values a field matches; `star` when it was written `*` or `?` (matters for the day fields). */
interface CronField {
  values: ReadonlySet<number>;
  star: boolean;
}

export interface CronSpec {
  kind: 'spec';
  minute: CronField;
  hour: CronField;
  dayOfMonth: CronField;
  month: CronField;
  dayOfWeek: CronField;
  /** From a `TZ=`/`CRON_TZ=` prefix; otherwise the zone of the time asked about. */
  zone?: string;
}

/** `@every <duration>`: a fixed delay, whole seconds, at least one. */
export interface CronEvery {
  kind: 'every';
  delayMs: number;
}

export type CronSchedule = CronSpec | CronEvery;

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MINUTES: CronBounds = { min: 0, max: 59 };
const HOURS: CronBounds = { min: 0, max: 23 };
const DAYS_OF_MONTH: CronBounds = { min: 1, max: 31 };
const MONTHS: CronBounds = { min: 1, max: 12, names: Object.fromEntries(MONTH_NAMES.map((n, i) => [n, i + 1])) };
const DAYS_OF_WEEK: CronBounds = { min: 0, max: 6, names: Object.fromEntries(DAY_NAMES.map((n, i) => [n, i])) };
const FIELD_BOUNDS = [MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK];

function range(min: number, max: number, step = 1): Set<number> {
  const values = new Set<number>();
  for (let v = min; v <= max; v += step) values.add(v);
  return values;
}

const every = (bounds: CronBounds): CronField => ({ values: range(bounds.min, bounds.max), star: true });
const only = (value: number): CronField => ({ values: new Set([value]), star: false });

/** The descriptors: midnight (or the hour) on the days named, each a five-field spec. */
const DESCRIPTORS: Record<string, Omit<CronSpec, 'kind' | 'zone'>> = (() => {
  const yearly = { minute: only(0), hour: only(0), dayOfMonth: only(1), month: only(1), dayOfWeek: every(DAYS_OF_WEEK) };
  const monthly = { ...yearly, month: every(MONTHS) };
  const weekly = { ...monthly, dayOfMonth: every(DAYS_OF_MONTH), dayOfWeek: only(0) };
  const daily = { ...monthly, dayOfMonth: every(DAYS_OF_MONTH) };
  const hourly = { ...daily, hour: every(HOURS) };
  return { '@yearly': yearly, '@annually': yearly, '@monthly': monthly, '@weekly': weekly, '@daily': daily, '@midnight': daily, '@hourly': hourly };
})();

function cronNumber(text: string, bounds: CronBounds): Parsed<number> {
  const named = bounds.names?.[text.toLowerCase()];
  if (named !== undefined) return { value: named };
  if (!/^[+-]?\d+$/.test(text)) return { error: `failed to parse int from ${text}: strconv.Atoi: parsing ${goQuote(text)}: invalid syntax` };
  const value = Number(text);
  if (value < 0) return { error: `negative number (${value}) not allowed: ${text}` };
  return { value };
}

/** One comma-separated part of a field: `*`, `?`, `N`, `N-M`, each with an optional `/step`. */
function cronRange(expr: string, bounds: CronBounds): Parsed<CronField> {
  const stepParts = expr.split('/');
  if (stepParts.length > 2) return { error: `too many slashes: ${expr}` };
  const ends = stepParts[0]!.split('-');
  if (ends.length > 2) return { error: `too many hyphens: ${expr}` };
  let star = ends[0] === '*' || ends[0] === '?';
  let start = bounds.min;
  let end = bounds.max;
  if (!star) {
    const first = cronNumber(ends[0]!, bounds);
    if ('error' in first) return first;
    start = end = first.value;
    if (ends.length === 2) {
      const second = cronNumber(ends[1]!, bounds);
      if ('error' in second) return second;
      end = second.value;
    }
  }
  let step = 1;
  if (stepParts.length === 2) {
    const parsed = cronNumber(stepParts[1]!, { min: 0, max: 0 });
    if ('error' in parsed) return parsed;
    step = parsed.value;
    // `N/step` runs from N to the end of the field; a real step makes `*` no longer "every".
    if (ends.length === 1) end = bounds.max;
    if (step > 1) star = false;
  }
  if (start < bounds.min) return { error: `beginning of range (${start}) below minimum (${bounds.min}): ${expr}` };
  if (end > bounds.max) return { error: `end of range (${end}) above maximum (${bounds.max}): ${expr}` };
  if (start > end) return { error: `beginning of range (${start}) beyond end of range (${end}): ${expr}` };
  if (step === 0) return { error: `step of range should be a positive number: ${expr}` };
  return { value: { values: range(start, end, step), star } };
}

function cronField(text: string, bounds: CronBounds): Parsed<CronField> {
  const values = new Set<number>();
  let star = false;
  for (const expr of text.split(',').filter((part) => part !== '')) {
    const parsed = cronRange(expr, bounds);
    if ('error' in parsed) return parsed;
    for (const value of parsed.value.values) values.add(value);
    star ||= parsed.value.star;
  }
  return { value: { values, star } };
}

/** The robfig/cron standard parser: an optional `TZ=`/`CRON_TZ=` prefix, a descriptor or five fields. */
export function parseCron(spec: string): Parsed<CronSchedule> {
  let text = spec.trim();
  if (text === '') return { error: 'empty spec string' };
  let zone: string | undefined;
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) {
    const space = text.search(/\s/);
    const name = text.slice(text.indexOf('=') + 1, space < 0 ? undefined : space);
    const zoneError = timezoneError(name);
    if (zoneError) return { error: `provided bad location ${name}: ${zoneError}` };
    zone = zoneName(name);
    text = space < 0 ? '' : text.slice(space).trim();
  }
  if (text.startsWith('@')) {
    const descriptor = DESCRIPTORS[text];
    if (descriptor) return { value: { kind: 'spec', ...descriptor, ...(zone && { zone }) } };
    if (text.startsWith('@every ')) {
      const duration = parseGoDuration(text.slice('@every '.length));
      if ('error' in duration) return { error: `failed to parse duration ${text}: ${duration.error}` };
      // At least a second, and whole seconds.
      const delayMs = Math.max(duration.value, 1000);
      return { value: { kind: 'every', delayMs: delayMs - (delayMs % 1000) } };
    }
    return { error: `unrecognized descriptor: ${text}` };
  }
  const texts = text === '' ? [] : text.split(/\s+/);
  if (texts.length !== FIELD_BOUNDS.length) return { error: `expected exactly 5 fields, found ${texts.length}: [${texts.join(' ')}]` };
  const fields: CronField[] = [];
  for (let i = 0; i < texts.length; i++) {
    const parsed = cronField(texts[i]!, FIELD_BOUNDS[i]!);
    if ('error' in parsed) return parsed;
    fields.push(parsed.value);
  }
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [CronField, CronField, CronField, CronField, CronField];
  return { value: { kind: 'spec', minute, hour, dayOfMonth, month, dayOfWeek, ...(zone && { zone }) } };
}

export function cronError(spec: string): string | undefined {
  const parsed = parseCron(spec);
  return 'error' in parsed ? parsed.error : undefined;
}

/** Go's zero `time.Time` (0001-01-01T00:00:00Z), what `Next` returns when nothing matches. */
export const GO_ZERO_TIME_MS = -62135596800000;

/** robfig's rule: when either day field is `*` both must match, otherwise either may. */
function dayMatches(spec: CronSpec, wall: WallTime): boolean {
  const ofMonth = spec.dayOfMonth.values.has(wall.day);
  const ofWeek = spec.dayOfWeek.values.has(wall.weekday);
  return spec.dayOfMonth.star || spec.dayOfWeek.star ? ofMonth && ofWeek : ofMonth || ofWeek;
}

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const SECOND_MS = 1000;
/** How many years ahead `Next` looks before it gives up. */
const SEARCH_YEARS = 5;

/**
 * robfig/cron's `Next`: the first time strictly after `afterMs`, in whole seconds, that the
 * schedule matches on the clocks of `zone` (the spec's own `TZ=` zone wins), or
 * `GO_ZERO_TIME_MS` when none comes within five years. Like robfig it jumps a field at a time
 * (to the next month, day, hour, minute) and starts a field over when one above it moves. Months
 * and days move on the wall clock (Go's `AddDate`); hours, minutes and seconds move on the
 * absolute clock (Go's `Add`), so a wall hour the zone skips is skipped and one it repeats is
 * tried twice, as in Agones.
 */
export function nextCronTime(schedule: CronSchedule, afterMs: number, zone = 'UTC'): number {
  const subSecond = ((afterMs % SECOND_MS) + SECOND_MS) % SECOND_MS;
  if (schedule.kind === 'every') return afterMs - subSecond + schedule.delayMs;
  const z = schedule.zone ?? zoneName(zone);
  let t = afterMs - subSecond + SECOND_MS;
  let wall = wallTime(z, t);
  const moveTo = (ms: number) => {
    t = ms;
    wall = wallTime(z, t);
  };
  // Until a field moves, the lower ones keep their values; after, each starts from its minimum.
  let added = false;
  const yearLimit = wall.year + SEARCH_YEARS;

  wrap: for (;;) {
    if (wall.year > yearLimit) return GO_ZERO_TIME_MS;

    while (!schedule.month.values.has(wall.month)) {
      if (!added) {
        added = true;
        moveTo(zonedDate(z, wall.year, wall.month, 1, 0, 0, 0));
      }
      moveTo(zonedDate(z, wall.year, wall.month + 1, wall.day, wall.hour, wall.minute, wall.second));
      if (wall.month === 1) continue wrap;
    }

    while (!dayMatches(schedule, wall)) {
      if (!added) {
        added = true;
        moveTo(zonedDate(z, wall.year, wall.month, wall.day, 0, 0, 0));
      }
      moveTo(zonedDate(z, wall.year, wall.month, wall.day + 1, wall.hour, wall.minute, wall.second));
      // Midnight may not exist (a zone changing its clocks at 00:00): go to the nearer hour 0.
      if (wall.hour !== 0) moveTo(t + (wall.hour > 12 ? 24 - wall.hour : -wall.hour) * HOUR_MS);
      if (wall.day === 1) continue wrap;
    }

    while (!schedule.hour.values.has(wall.hour)) {
      if (!added) {
        added = true;
        moveTo(zonedDate(z, wall.year, wall.month, wall.day, wall.hour, 0, 0));
      }
      moveTo(t + HOUR_MS);
      if (wall.hour === 0) continue wrap;
    }

    while (!schedule.minute.values.has(wall.minute)) {
      if (!added) {
        added = true;
        moveTo(Math.floor(t / MINUTE_MS) * MINUTE_MS);
      }
      moveTo(t + MINUTE_MS);
      if (wall.minute === 0) continue wrap;
    }

    // The standard parser's seconds field is always 0.
    while (wall.second !== 0) {
      if (!added) {
        added = true;
        moveTo(Math.floor(t / SECOND_MS) * SECOND_MS);
      }
      moveTo(t + SECOND_MS);
      if (wall.second === 0) continue wrap;
    }
    return t;
  }
}

/** RFC 3339 date-times, as a Kubernetes `metav1.Time` is written; a space may stand for the T (RFC 3339's 5.6 allows it). */
export function parseRfc3339(text: string): number | undefined {
  const iso = text.charAt(10) === ' ' ? `${text.slice(0, 10)}T${text.slice(11)}` : text;
  return isDateTime(iso) ? Date.parse(iso) : undefined;
}
