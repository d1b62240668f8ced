import { runToEnd } from './run-process.js';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { K6_PATH_MODULE } from './paths.js';

/**
 * The real k6 binary: `k6` on the PATH when it runs, otherwise the pinned release that
 * `npm run setup:k6` (scripts/setup-k6.sh) builds from source into a cache outside the
 * repository — scripts/k6-path.mjs decides, and builds it on first use.
 */
export async function findK6(): Promise<string> {
  const fromEnv = process.env.FLEETSIM_K6;
  if (fromEnv) return fromEnv;
  const module = (await import(pathToFileURL(K6_PATH_MODULE).href)) as { k6Path: () => Promise<string> };
  return module.k6Path();
}

export async function k6Version(k6: string): Promise<string> {
  const { output } = await runToEnd(k6, ['version'], 15_000);
  return output.split('\n')[0]?.trim() ?? '';
}

export interface K6Run {
  k6: string;
  script: string;
  /** Passed as `-e NAME=value`: the scripts read every setting from __ENV. */
  env: Record<string, string>;
  summaryPath: string;
  jsonPath: string;
  logPath: string;
  /** k6 is stopped (SIGTERM, then SIGKILL) if it runs longer than this. */
  timeoutMs: number;
  cwd: string;
  /** Added to k6's own environment (not `-e`): SSL_CERT_FILE, for a remote allocator's CA. */
  processEnv?: Record<string, string>;
  /** Told k6's process id once it has started (to sample its CPU). */
  onStart?: (pid: number) => void;
}

export interface K6Outcome {
  /** 0: thresholds passed; 99: a threshold was crossed; anything else: k6 failed. */
  exitCode: number;
  startedAtMs: number;
  endedAtMs: number;
  timedOut: boolean;
}

/** Exit code k6 uses when a threshold is crossed. */
export const K6_THRESHOLDS_FAILED = 99;

export function k6Arguments(run: Omit<K6Run, 'k6' | 'timeoutMs' | 'cwd' | 'logPath' | 'processEnv'>): string[] {
  const args = ['run', '--no-usage-report', '--no-color', '--quiet', '--summary-export', run.summaryPath, '--out', `json=${run.jsonPath}`];
  for (const [name, value] of Object.entries(run.env)) args.push('-e', `${name}=${value}`);
  args.push(run.script);
  return args;
}

/** Runs `k6 run …` to the end, with its output in `logPath`. */
export function runK6(options: K6Run): Promise<K6Outcome> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(options.logPath);
    const startedAtMs = Date.now();
    const child = spawn(options.k6, k6Arguments(options), {
      cwd: options.cwd,
      env: { ...process.env, ...options.processEnv, K6_NO_USAGE_REPORT: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) options.onStart?.(child.pid);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      log.end();
      reject(new Error(`cannot run k6 (${options.k6}): ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      const endedAtMs = Date.now();
      log.end(() => resolve({ exitCode: code ?? (signal ? 128 : 1), startedAtMs, endedAtMs, timedOut }));
    });
  });
}
