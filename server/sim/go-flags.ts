/**
 * A Go program's command-line flags as its `flag` package reads them from a container's args:
 * `-name=value` or `--name=value`; `-name value` for a flag that takes a value; a flag in
 * `booleans` alone is true. Words that are not flags are skipped.
 */
export function goFlags(args: readonly string[], booleans: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([A-Za-z]+)(?:=(.*))?$/.exec(args[i]!);
    if (!m) continue;
    const next = args[i + 1];
    if (m[2] !== undefined) flags.set(m[1]!, m[2]);
    else if (next !== undefined && !next.startsWith('-') && !booleans.includes(m[1]!)) flags.set(m[1]!, args[++i]!);
    else flags.set(m[1]!, 'true');
  }
  return flags;
}
