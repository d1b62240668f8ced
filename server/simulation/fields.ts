import { durationMs } from '../sim/profiles.js';

/**
 * Reading a scenario's plain values with errors that name the field: every reader takes the value
 * and its path (`['spec', 'demand', 'arrivals', 'peak']`) and throws a FieldError, which the
 * scenario loader turns into `file:line: spec.demand.arrivals.peak: …`.
 */

export type FieldPath = ReadonlyArray<string | number>;

/**
 * What keeps a run finite: at most a month of simulated time, moved in at most ten million steps
 * (and anything that repeats on its own — a node scan, an idle allocator's batch loop — at most as
 * often), at most fifty million players arriving (each an allocation), and a player who waits
 * trying at most ten thousand times.
 */
export const SCENARIO_LIMITS = { durationMs: 31 * 24 * 3_600_000, steps: 10_000_000, arrivals: 50_000_000, attempts: 10_000 } as const;

export class FieldError extends Error {
  override readonly name = 'FieldError';
  constructor(
    readonly path: FieldPath,
    readonly problem: string,
  ) {
    super(`${pathText(path)}: ${problem}`);
  }
}

/** `spec.nodePools[0].maxNodes` */
export function pathText(path: FieldPath): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('') || '(top)';
}

/** A scenario that cannot run, said with the file (and line) at fault. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}

export type Fields = Record<string, unknown>;

export function objectAt(value: unknown, path: FieldPath): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldError(path, 'must be a mapping');
  return value as Fields;
}

export function listAt(value: unknown, path: FieldPath): unknown[] {
  if (!Array.isArray(value)) throw new FieldError(path, 'must be a list');
  return value;
}

/** Refuses keys other than `known`: a misspelt field must not be silently ignored. */
export function onlyKnown(object: Fields, known: readonly string[], path: FieldPath): void {
  for (const key of Object.keys(object)) {
    if (!known.includes(key)) throw new FieldError([...path, key], `unknown field (known: ${known.join(', ')})`);
  }
}

export function numberAt(value: unknown, path: FieldPath, options: { min?: number; max?: number; integer?: boolean } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new FieldError(path, `must be a number, not ${typeof value === 'number' ? value : JSON.stringify(value)}`);
  if (options.integer && !Number.isInteger(value)) throw new FieldError(path, `must be an integer, not ${value}`);
  if (options.min !== undefined && value < options.min) throw new FieldError(path, `must be at least ${options.min}, not ${value}`);
  if (options.max !== undefined && value > options.max) throw new FieldError(path, `must be at most ${options.max}, not ${value}`);
  return value;
}

export function stringAt(value: unknown, path: FieldPath): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(path, 'must be a non-empty string');
  return value;
}

/**
 * A duration in milliseconds (`90s`, `20m`, `24h`, or seconds as a number), always finite;
 * `positive` refuses 0, `minMs` and `maxMs` bound it.
 */
export function durationAt(value: unknown, path: FieldPath, options: { positive?: boolean; minMs?: number; maxMs?: number } = {}): number {
  let ms: number;
  try {
    ms = durationMs(value, 'x');
  } catch {
    const text = typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new FieldError(path, `${text} is not a duration (use 500ms, 2s, 20m, 24h or a number of seconds)`);
  }
  if (options.positive && ms <= 0) throw new FieldError(path, 'must be longer than 0');
  if (options.minMs !== undefined && ms < options.minMs) throw new FieldError(path, `must be at least ${durationText(options.minMs)}`);
  if (options.maxMs !== undefined && ms > options.maxMs) throw new FieldError(path, `must be at most ${durationText(options.maxMs)}`);
  return ms;
}

/** `744h`, `1s`, `1ms`: a bound as a scenario writes durations. */
export function durationText(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** `86,400,000`: a count for people. */
export function countText(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function required(object: Fields, key: string, path: FieldPath): unknown {
  if (object[key] === undefined || object[key] === null) throw new FieldError([...path, key], 'required');
  return object[key];
}
