// @ts-check
// Locate (or build) the k6 binary used by fleetsim load tests.
//
//   import { k6Path } from './scripts/k6-path.mjs';
//   const k6 = await k6Path();
//
// Order: `k6` on PATH if it runs -> cached build from scripts/setup-k6.sh ->
// run scripts/setup-k6.sh (stderr inherited) and use its last stdout line.
import { execFile, spawn } from 'node:child_process';
import { access, constants, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const scriptsDir = dirname(fileURLToPath(import.meta.url));
const setupScript = join(scriptsDir, 'setup-k6.sh');

/**
 * Resolve true when `<bin> version` exits 0.
 * @param {string} bin
 * @returns {Promise<boolean>}
 */
function runs(bin) {
  return new Promise((resolve) => {
    execFile(bin, ['version'], { timeout: 15_000 }, (err) => resolve(err === null));
  });
}

/**
 * The pinned version, read from setup-k6.sh so it is defined in one place.
 * @returns {Promise<string | undefined>}
 */
async function pinnedVersion() {
  const fromEnv = process.env.FLEETSIM_K6_VERSION;
  if (fromEnv) return fromEnv;
  const text = await readFile(setupScript, 'utf8');
  const m = /^K6_VERSION="\$\{FLEETSIM_K6_VERSION:-([^}"]+)\}"/m.exec(text);
  return m?.[1];
}

/** @returns {string} */
function cacheRoot() {
  const env = process.env;
  if (env.FLEETSIM_CACHE) return env.FLEETSIM_CACHE;
  const xdg = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(xdg, 'fleetsim');
}

/**
 * Run setup-k6.sh and return the last non-empty line of its stdout.
 * @returns {Promise<string>}
 */
function runSetup() {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [setupScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    /** @type {Buffer[]} */
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`scripts/setup-k6.sh exited with code ${String(code)}`));
        return;
      }
      const lines = Buffer.concat(chunks).toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean);
      const last = lines.at(-1);
      if (!last) reject(new Error('scripts/setup-k6.sh printed no k6 path'));
      else resolve(last);
    });
  });
}

/**
 * Absolute path (or `k6` when found on PATH) of a runnable k6 binary.
 * @returns {Promise<string>}
 */
export async function k6Path() {
  if (await runs('k6')) return 'k6';
  const version = await pinnedVersion();
  if (version) {
    const cached = join(cacheRoot(), 'k6', version, 'bin', 'k6');
    // Present *and* runnable; otherwise let setup-k6.sh (re)build it.
    const present = await access(cached, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (present && (await runs(cached))) return cached;
  }
  return runSetup();
}
