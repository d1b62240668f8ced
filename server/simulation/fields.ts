import { durationMs } from '../sim/profiles.js';

/**
 * Reading a scenario's plain values with errors that name the field: every reader takes the value
 * and its path (`['spec', 'demand', 'arrivals', 'peak']`) and throws a FieldError, which the
 * scenario loader turns into `file:line: spec.demand.arrivals.peak: …`.
 */

export type FieldPath = ReadonlyArray<string | number>;

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

export function numberAt(value: unknown, path: FieldPath, options: { min?: number; integer?: boolean } = {}): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new FieldError(path, `must be a number, not ${JSON.stringify(value)}`);
  if (options.integer && !Number.isInteger(value)) throw new FieldError(path, `must be an integer, not ${value}`);
  if (options.min !== undefined && value < options.min) throw new FieldError(path, `must be at least ${options.min}, not ${value}`);
  return value;
}

export function stringAt(value: unknown, path: FieldPath): string {
  if (typeof value !== 'string' || value === '') throw new FieldError(path, 'must be a non-empty string');
  return value;
}

/** A duration in milliseconds (`90s`, `20m`, `24h`, or seconds as a number); `positive` refuses 0. */
export function durationAt(value: unknown, path: FieldPath, options: { positive?: boolean } = {}): number {
  let ms: number;
  try {
    ms = durationMs(value, 'x');
  } catch {
    throw new FieldError(path, `${JSON.stringify(value)} is not a duration (use 500ms, 2s, 20m, 24h or a number of seconds)`);
  }
  if (options.positive && ms <= 0) throw new FieldError(path, 'must be longer than 0');
  return ms;
}

export function required(object: Fields, key: string, path: FieldPath): unknown {
  if (object[key] === undefined || object[key] === null) throw new FieldError([...path, key], 'required');
  return object[key];
}
