import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root, found by walking up from this module to fleetsim's package.json, so the
 * harness finds `scenarios/`, `bin/` and `scripts/` whether it runs compiled (dist/loadtest) or
 * from source (vitest).
 */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'fleetsim') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the fleetsim repository root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export const REPO_ROOT = findRepoRoot();
export const CLI = join(REPO_ROOT, 'bin', 'fleetsim.js');
export const SCENARIOS_DIR = join(REPO_ROOT, 'scenarios');
export const K6_PATH_MODULE = join(REPO_ROOT, 'scripts', 'k6-path.mjs');
/** Where runs go unless --out says otherwise (git-ignored). */
export const REPORTS_OUT = join(REPO_ROOT, 'reports', 'out');

/** A run's default folder: reports/out/<UTC time, to the second>-<what ran>. */
export function runFolder(what: string, now = new Date()): string {
  return join(REPORTS_OUT, `${now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${what}`);
}
