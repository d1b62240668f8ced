import { goQuote } from '../../k8s/validation.js';

/**
 * The parsers a Schedule autoscaler policy is checked with, as Go reads its fields: durations
 * (`time.ParseDuration`), time zones (`time.LoadLocation`) and standard five-field cron
 * expressions (the robfig/cron standard parser). Each returns the Go error text, or undefined
 * when the input is valid.
 */

const UNIT_NANOS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const MAX_DURATION_NANOS = 2 ** 63 - 1;

/** Go's `time.ParseDuration`: `[-+]?(<decimal><unit>)+`, or a bare `0`. */
export function durationError(text: string): string | undefined {
  const quoted = goQuote(text);
  let rest = text;
  if (rest.startsWith('-') || rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return undefined;
  if (rest === '') return `time: invalid duration ${quoted}`;
  let total = 0;
  while (rest !== '') {
    const number = /^(\d*)(\.(\d*))?/.exec(rest)!;
    if (number[1] === '' && (number[3] ?? '') === '') return `time: invalid duration ${quoted}`;
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') return `time: missing unit in duration ${quoted}`;
    const factor = UNIT_NANOS[unit];
    if (factor === undefined) return `time: unknown unit ${goQuote(unit)} in duration ${quoted}`;
    rest = rest.slice(unit.length);
    total += Number(`${number[1] || '0'}.${number[3] ?? ''}0`) * factor;
    if (total > MAX_DURATION_NANOS) return `time: invalid duration ${quoted}`;
  }
  return undefined;
}

/** Go's `time.LoadLocation`: empty and `UTC` are UTC, `Local` is the host's zone, else IANA names. */
export function timezoneError(name: string): string | undefined {
  if (name === '' || name === 'UTC' || name === 'Local') return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return undefined;
  } catch {
    return `unknown time zone ${name}`;
  }
}

interface CronField {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const CRON_FIELDS: CronField[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: Object.fromEntries(MONTH_NAMES.map((n, i) => [n, i + 1])) },
  { min: 0, max: 6, names: Object.fromEntries(DAY_NAMES.map((n, i) => [n, i])) },
];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

function cronNumber(text: string, field: CronField): number | string {
  const named = field.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[+-]?\d+$/.test(text)) return `failed to parse int from ${text}: strconv.Atoi: parsing ${goQuote(text)}: invalid syntax`;
  const value = Number(text);
  if (value < 0) return `negative number (${value}) not allowed: ${text}`;
  return value;
}

function cronRangeError(expr: string, field: CronField): string | undefined {
  const stepParts = expr.split('/');
  if (stepParts.length > 2) return `too many slashes: ${expr}`;
  const bounds = stepParts[0]!.split('-');
  if (bounds.length > 2) return `too many hyphens: ${expr}`;
  let start: number;
  let end: number;
  if (bounds[0] === '*' || bounds[0] === '?') {
    start = field.min;
    end = field.max;
  } else {
    const first = cronNumber(bounds[0]!, field);
    if (typeof first === 'string') return first;
    start = first;
    end = first;
    if (bounds.length === 2) {
      const second = cronNumber(bounds[1]!, field);
      if (typeof second === 'string') return second;
      end = second;
    }
  }
  if (stepParts.length === 2) {
    const step = cronNumber(stepParts[1]!, { min: 0, max: 0 });
    if (typeof step === 'string') return step;
    // `N/step` runs from N to the end of the field.
    if (bounds.length === 1 && bounds[0] !== '*' && bounds[0] !== '?') end = field.max;
    if (step === 0) return `step of range should be a positive number: ${expr}`;
  }
  if (start < field.min) return `beginning of range (${start}) below minimum (${field.min}): ${expr}`;
  if (end > field.max) return `end of range (${end}) above maximum (${field.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  return undefined;
}

/** The robfig/cron standard parser: an optional `TZ=`/`CRON_TZ=` prefix, a descriptor or five fields. */
export function cronError(spec: string): string | undefined {
  let text = spec.trim();
  if (text === '') return 'empty spec string';
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) {
    const space = text.search(/\s/);
    const zone = text.slice(text.indexOf('=') + 1, space < 0 ? undefined : space);
    const zoneError = timezoneError(zone);
    if (zoneError) return `provided bad location ${zone}: ${zoneError}`;
    text = space < 0 ? '' : text.slice(space).trim();
  }
  if (text.startsWith('@')) {
    if (DESCRIPTORS.has(text)) return undefined;
    if (text.startsWith('@every ')) {
      const duration = text.slice('@every '.length);
      const error = durationError(duration);
      return error ? `failed to parse duration ${text}: ${error}` : undefined;
    }
    return `unrecognized descriptor: ${text}`;
  }
  const fields = text === '' ? [] : text.split(/\s+/);
  if (fields.length !== CRON_FIELDS.length) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (let i = 0; i < fields.length; i++) {
    for (const expr of fields[i]!.split(',')) {
      const error = cronRangeError(expr, CRON_FIELDS[i]!);
      if (error) return error;
    }
  }
  return undefined;
}

/** RFC 3339 date-times, as a Kubernetes `metav1.Time` is written. */
export function parseRfc3339(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
}
