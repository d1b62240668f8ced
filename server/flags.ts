import { parseGoDuration } from './k8s/duration.js';
/**
 * A small flag parser with Agones's precedence: a flag given on the command line, then its
 * environment variable, then the default.
 */
export interface FlagSpec {
  name: string;
  alias?: string;
  env?: string;
  type: 'string' | 'number' | 'boolean';
  default?: string | number | boolean;
  help: string;
}

export type FlagValues = Record<string, string | number | boolean | undefined>;

export class FlagError extends Error {}

function convert(spec: FlagSpec, raw: string, source: string): string | number | boolean {
  if (spec.type === 'string') return raw;
  if (spec.type === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) throw new FlagError(`${source}: "${raw}" is not a number`);
    return n;
  }
  if (['true', '1', 't', 'TRUE', 'True', 'T'].includes(raw)) return true;
  if (['false', '0', 'f', 'FALSE', 'False', 'F', ''].includes(raw)) return false;
  throw new FlagError(`${source}: "${raw}" is not a boolean`);
}

export function parseFlags(
  argv: readonly string[],
  specs: readonly FlagSpec[],
  env: NodeJS.ProcessEnv = process.env,
): { values: FlagValues; positional: string[]; given: Set<string> } {
  const values: FlagValues = {};
  /** Flags set on the command line or by their environment variable, not left to their default. */
  const given = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const [rawName, inlineValue] = arg.replace(/^--?/, '').split(/=(.*)/s, 2) as [string, string | undefined];
    const spec = specs.find((s) => s.name === rawName || s.alias === rawName);
    if (!spec) {
      const near = closest(rawName, specs.map((s) => s.name));
      throw new FlagError(`unknown flag ${arg.split('=', 1)[0]} (${near ? `did you mean --${near}?` : '--help lists the flags'})`);
    }
    let raw = inlineValue;
    if (raw === undefined) {
      if (spec.type === 'boolean') raw = 'true';
      else if (i + 1 < argv.length) raw = argv[++i]!;
      else throw new FlagError(`flag needs an argument: --${spec.name}`);
    }
    values[spec.name] = convert(spec, raw, `--${spec.name}`);
    given.add(spec.name);
  }
  for (const spec of specs) {
    if (values[spec.name] !== undefined) continue;
    const fromEnv = spec.env ? env[spec.env] : undefined;
    values[spec.name] = fromEnv !== undefined ? convert(spec, fromEnv, spec.env!) : spec.default;
    if (fromEnv !== undefined) given.add(spec.name);
  }
  return { values, positional, given };
}

/**
 * A Go duration as Kubernetes flags take them (`1h`, `90m`, `1h30m`, `2.5s`, `500ms`), in
 * milliseconds, never negative; `flag` names the flag in the error.
 */
export function parseDuration(text: string, flag: string): number {
  const parsed = parseGoDuration(text);
  if ('error' in parsed || parsed.value < 0) throw new FlagError(`${flag}: "${text}" is not a duration (like 1h, 30m or 1h30m)`);
  return parsed.value;
}

export function flagsHelp(specs: readonly FlagSpec[]): string {
  return specs
    .map((s) => {
      const names = [`--${s.name}`, ...(s.alias ? [`-${s.alias}`] : [])].join(', ');
      const env = s.env ? ` [$${s.env}]` : '';
      const def = s.default !== undefined && s.default !== '' ? ` (default ${String(s.default)})` : '';
      return `  ${names.padEnd(22)} ${s.help}${def}${env}`;
    })
    .join('\n');
}

/**
 * The candidate a mistyped name most likely meant: the nearest by edit distance, within a third
 * of the name's length (two edits at least), or one the name begins; undefined when none is near.
 */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = candidate.startsWith(name) && name.length >= 2 ? 1 : editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}
