import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { seconds } from './time-scale.js';

/**
 * Running the real CLI (`node bin/fleetsim.js ...`) as a child process: output is collected as
 * it arrives, a line can be awaited, and the exit (code or signal) can be awaited with a
 * deadline. Every process started here is tracked, so `killAll()` in an afterAll/afterEach hook
 * leaves nothing running, whatever the test did.
 */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = fileURLToPath(new URL('../../bin/fleetsim.js', import.meta.url));

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<CliProcess>();

/**
 * Environment variables the sidecar reads in place of its flags (agones-sidecar.md §1.2, plus
 * fleetsim's own). Vitest itself sets `TEST=true`, which would silently put every sidecar into
 * conformance mode expecting a request named "true": children get an environment without them.
 */
const SIDECAR_ENV = [
  'LOCAL',
  'FILE',
  'TEST',
  'SDK_NAME',
  'TIMEOUT',
  'DELAY',
  'ADDRESS',
  'GRPC_PORT',
  'HTTP_PORT',
  'FEATURE_GATES',
  'FLEETSIM_DB',
  'FLEETSIM_SEED',
  'FLEETSIM_ALLOWED_HOSTS',
  // serve's and the sidecar's log: a test reads the lines it expects at the default level.
  'LOG_LEVEL',
  'FLEETSIM_LOG_LEVEL',
  'FLEETSIM_LOG_FORMAT',
];

export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SIDECAR_ENV) delete env[name];
  return { ...env, ...extra };
}

export class CliProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<ExitStatus>;
  private out = '';
  private err = '';
  private status: ExitStatus | undefined;
  private readonly listeners = new Set<() => void>();

  /** `fileLimit`: started under `ulimit -n fileLimit` (a shell sets it, then becomes the CLI: the pid is the CLI's). */
  constructor(
    readonly args: readonly string[],
    env: NodeJS.ProcessEnv = cleanEnv(),
    fileLimit?: number,
  ) {
    const [command, argv] =
      fileLimit === undefined ? [process.execPath, [CLI, ...args]] : ['sh', ['-c', `ulimit -n ${fileLimit} && exec "$0" "$@"`, process.execPath, CLI, ...args]];
    this.child = spawn(command, argv, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(this);
    this.child.stdout!.setEncoding('utf8');
    this.child.stderr!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      this.out += chunk;
      this.notify();
    });
    this.child.stderr!.on('data', (chunk: string) => {
      this.err += chunk;
      this.notify();
    });
    this.exited = new Promise<ExitStatus>((resolve) => {
      // 'close' waits for the output pipes to drain, so stdout/stderr are complete when it fires.
      this.child.once('close', (code, signal) => {
        this.status = { code, signal };
        live.delete(this);
        this.notify();
        resolve(this.status);
      });
      this.child.once('error', (error) => {
        this.err += `\n[spawn error] ${error.message}`;
        this.status = { code: null, signal: null };
        live.delete(this);
        this.notify();
        resolve(this.status);
      });
    });
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** The exit status, once the process has exited. */
  get exitStatus(): ExitStatus | undefined {
    return this.status;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** What the process printed so far, for failure messages. */
  describe(): string {
    const status = this.status ? ` exited code=${this.status.code} signal=${this.status.signal}` : ' (running)';
    return `fleetsim ${this.args.join(' ')}${status}\n--- stdout ---\n${this.out}\n--- stderr ---\n${this.err}`;
  }

  /** Resolves with the first match of `pattern` in stdout; rejects if the process exits first or time runs out. */
  waitForStdout(pattern: RegExp, timeoutMs = seconds(30)): Promise<RegExpMatchArray> {
    return new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.out);
        if (match) return finish(() => resolve(match));
        if (this.status) {
          return finish(() => reject(new Error(`process exited before printing ${pattern}\n${this.describe()}`)));
        }
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${pattern} on stdout within ${timeoutMs} ms\n${this.describe()}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Resolves with the exit status; rejects (leaving the process running) if it has not exited in time. */
  async waitForExit(timeoutMs: number): Promise<ExitStatus> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms\n${this.describe()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` (if still running) and waits for the exit; falls back to SIGKILL after `graceMs`. */
  async kill(signal: NodeJS.Signals = 'SIGTERM', graceMs = seconds(10)): Promise<ExitStatus> {
    if (this.status) return this.status;
    this.child.kill(signal);
    if (signal === 'SIGKILL') return this.exited;
    try {
      return await this.waitForExit(graceMs);
    } catch {
      this.child.kill('SIGKILL');
      return this.exited;
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** Kills (SIGKILL) every process these helpers started that is still running, and waits for them. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill('SIGKILL')));
}

export function startCli(args: readonly string[], env?: NodeJS.ProcessEnv, fileLimit?: number): CliProcess {
  return new CliProcess(args, env, fileLimit);
}

/** Runs a CLI command to completion: its exit status and full output. `env` replaces cleanEnv()'s. */
export async function runCli(
  args: readonly string[],
  timeoutMs = seconds(30),
  env?: NodeJS.ProcessEnv,
): Promise<ExitStatus & { stdout: string; stderr: string }> {
  const p = startCli(args, env);
  try {
    const status = await p.waitForExit(timeoutMs);
    return { ...status, stdout: p.stdout, stderr: p.stderr };
  } finally {
    await p.kill('SIGKILL');
  }
}

// -- the sidecar ---------------------------------------------------------------------------------

export const LISTENING_LINE = /^fleetsim sidecar listening: http=(\S*):(\d+) grpc=(\S*):(\d+) log=(.*)$/m;

export interface SidecarProcess {
  process: CliProcess;
  httpPort: number;
  grpcPort: number;
  /** `http://127.0.0.1:PORT` */
  baseUrl: string;
  /** What the listening line says about the log: the file (a temporary one without --db). */
  log: string;
}

/**
 * Starts `fleetsim sidecar --http-port 0 --grpc-port 0 <args>` and waits for its listening line,
 * from which the ports are taken.
 */
export async function startSidecar(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<SidecarProcess> {
  const p = startCli(['sidecar', '--http-port', '0', '--grpc-port', '0', ...args], env);
  try {
    const match = await p.waitForStdout(LISTENING_LINE);
    const httpPort = Number(match[2]);
    const grpcPort = Number(match[4]);
    if (!(httpPort > 0) || !(grpcPort > 0)) throw new Error(`bad ports in "${match[0]}"`);
    return { process: p, httpPort, grpcPort, baseUrl: `http://127.0.0.1:${httpPort}`, log: match[5]! };
  } catch (error) {
    await p.kill('SIGKILL');
    throw error;
  }
}
