import { parseArgs } from 'node:util';
import { parseGoDuration } from './k8s/duration.js';
/**
 * Flags over `node:util` parseArgs, with Agones's precedence: a flag given on the command line, then
 * its environment variable, then the default. parseArgs reads the command line (long names with two
 * dashes, one-letter aliases with one, as pflag does); this layer adds numbers, `--flag=false`,
 * environment fallbacks, the help text and errors that name the flag.
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
  // Not strict: a boolean may carry a value (--fresh=false) and an unknown flag is reported here, with a guess.
  const { tokens } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(specs.map((s) => [s.name, { type: s.type === 'boolean' ? 'boolean' : 'string', ...(s.alias && { short: s.alias }) }] as const)),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: FlagValues = {};
  /** Flags set on the command line or by their environment variable, not left to their default. */
  const given = new Set<string>();
  const positional: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positional.push(token.value);
    if (token.kind !== 'option') continue;
    const written = argv[token.index]!.split('=', 1)[0]!;
    const spec = specs.find((s) => s.name === token.name);
    // One dash and several letters are aliases together (-hf), so a long name needs two (-port is not --port).
    const longWithOneDash = written.length > 2 && !written.startsWith('--') && specs.some((s) => s.name === written.slice(1));
    if (!spec || longWithOneDash) {
      const near = closest(written.replace(/^--?/, ''), specs.map((s) => s.name));
      throw new FlagError(`unknown flag ${written} (${near ? `did you mean --${near}?` : '--help lists the flags'})`);
    }
    // `-f=x` as pflag reads it: the value after the `=`.
    const raw = token.inlineValue && !token.rawName.startsWith('--') ? token.value?.replace(/^=/, '') : token.value;
    if (raw === undefined && spec.type !== 'boolean') throw new FlagError(`flag needs an argument: --${spec.name}`);
    values[spec.name] = convert(spec, raw ?? 'true', `--${spec.name}`);
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

/** Runs a script's main to its exit code: 2 and the message for a flag error, 1 and the stack for any other. */
export function runScript(main: () => Promise<number>): void {
  main().then(
    (code) => (process.exitCode = code),
    (error: Error) => {
      const usage = error instanceof FlagError;
      console.error(usage ? error.message : (error.stack ?? error.message));
      process.exitCode = usage ? 2 : 1;
    },
  );
}
