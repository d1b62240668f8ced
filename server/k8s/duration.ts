import { goQuote } from './validation.js';

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
const NANOS_PER_MS = 1e6;

/** Go's `time.ParseDuration`: `[-+]?(<decimal><unit>)+`, or a bare `0`; the value in milliseconds. */
export function parseGoDuration(text: string): { value: number } | { error: string } {
  const quoted = goQuote(text);
  let rest = text;
  const sign = rest.startsWith('-') ? -1 : 1;
  if (rest.startsWith('-') || rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return { value: 0 };
  if (rest === '') return { error: `time: invalid duration ${quoted}` };
  let total = 0;
  while (rest !== '') {
    const number = /^(\d*)(\.(\d*))?/.exec(rest)!;
    if (number[1] === '' && (number[3] ?? '') === '') return { error: `time: invalid duration ${quoted}` };
    rest = rest.slice(number[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') return { error: `time: missing unit in duration ${quoted}` };
    const factor = UNIT_NANOS[unit];
    if (factor === undefined) return { error: `time: unknown unit ${goQuote(unit)} in duration ${quoted}` };
    rest = rest.slice(unit.length);
    total += Number(`${number[1] || '0'}.${number[3] ?? ''}0`) * factor;
    if (total > MAX_DURATION_NANOS) return { error: `time: invalid duration ${quoted}` };
  }
  return { value: (sign * total) / NANOS_PER_MS };
}
