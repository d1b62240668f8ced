import { type CliProcess, cleanEnv, startCli } from './process.js';
import { parseJsonOrUndefined } from './sidecar-http.js';
import { seconds } from './time-scale.js';

/**
 * Running `fleetsim serve` as a child process for end-to-end tests. It listens on port 0 (the
 * kernel picks a free port) and the port is read from the line it prints once listening:
 *
 *   fleetsim serving on http://127.0.0.1:PORT (log :memory:, clock real)
 *
 * Every process is started through process.ts, so its `killAll()` ends them.
 */

export const SERVING_LINE = /^fleetsim serving on http:\/\/(\S+):(\d+) \(log (.*), clock (\w+)\)$/m;

export interface ServeProcess {
  process: CliProcess;
  port: number;
  /** `http://127.0.0.1:PORT` */
  baseUrl: string;
}

/**
 * Flags every test server gets unless the test passes its own: an empty in-memory cluster whose
 * simulated servers stay off the network (test servers run in parallel on one 127.0.0.1, and two
 * would race for the same host ports; the tests of listening opt in).
 */
export const DEFAULT_SERVE_ARGS = ['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '--no-listen'];

/**
 * Starts `fleetsim serve --host 127.0.0.1 --port 0 <args>` and waits for its serving line.
 * Environment variables that would change serve's flags (FLEETSIM_PORT, FEATURE_GATES, …) are
 * removed, so only `args` decide; `launch.env` adds some, `launch.fileLimit` starts it under
 * `ulimit -n`.
 */
export async function startServe(
  args: readonly string[] = DEFAULT_SERVE_ARGS,
  timeoutMs = seconds(60),
  launch: { env?: NodeJS.ProcessEnv; fileLimit?: number } = {},
): Promise<ServeProcess> {
  const env = cleanEnv(launch.env);
  for (const name of ['FLEETSIM_PORT', 'FLEETSIM_HOST', 'FLEETSIM_NODES']) delete env[name];
  const p = startCli(['serve', '--host', '127.0.0.1', '--port', '0', ...args], env, launch.fileLimit);
  try {
    const match = await p.waitForStdout(SERVING_LINE, timeoutMs);
    const port = Number(match[2]);
    if (!(port > 0)) throw new Error(`bad port in "${match[0]}"`);
    return { process: p, port, baseUrl: `http://127.0.0.1:${port}` };
  } catch (error) {
    await p.kill('SIGKILL');
    throw error;
  }
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
}

/** One HTTP request to the server's API, with the body sent as JSON unless it is a string. */
export async function apiRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? seconds(30)) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: parseJsonOrUndefined(text) };
}
