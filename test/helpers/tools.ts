import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { beforeEach } from 'vitest';

/**
 * Programs some tests drive besides fleetsim (kubectl, k6, Chromium). Each is optional: without it
 * the tests that need it are skipped, each with a note saying what is missing and how to get it.
 */

export interface Tool {
  /** The program to run; undefined when it cannot be had here. */
  path: string | undefined;
  /** Why it is missing and how to get it (the skipped tests' note). */
  missing: string;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` in the PATH's folders, as a shell finds it; undefined when there is none. */
export function onPath(name: string, path: string = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * A program named by the environment variable `variable` when it is set (a path, or a name looked
 * up on the PATH), otherwise the first of `names` on the PATH. `install` says how to get it.
 */
export function findTool(variable: string, names: readonly string[], install: string): Tool {
  const named = process.env[variable];
  if (named) {
    const path = isAbsolute(named) || named.includes('/') ? (isExecutableFile(named) ? named : undefined) : onPath(named);
    return { path, missing: `${variable}=${named} is not an executable file (${install})` };
  }
  const path = names.map((name) => onPath(name)).find((found) => found !== undefined);
  return { path, missing: `${names[0]} is not on the PATH (${install}, or set ${variable} to its path)` };
}

/** For a test's `skip(...without(a, b))`: whether one of `tools` is missing, and the note saying which and how to get it. */
export function without(...tools: Tool[]): [boolean, string] {
  const absent = tools.find((tool) => tool.path === undefined);
  return [absent !== undefined, absent?.missing ?? ''];
}

/** Skips each test of the enclosing suite (or file) when one of `tools` is missing, noting why. */
export function skipWithout(...tools: Tool[]): void {
  beforeEach(({ skip }) => skip(...without(...tools)));
}
