import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { alive } from './shell.js';

/**
 * A long-running program the supervisor started: its own process group (so stopping it stops
 * what it started), its output appended to a log file.
 */
export class Daemon {
  private readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    command: string,
    args: readonly string[],
    logFile: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const log = openSync(logFile, 'a');
    try {
      this.child = spawn(command, args, { detached: true, stdio: ['ignore', log, log], env });
    } finally {
      closeSync(log);
    }
    this.exited = new Promise((resolve) => {
      this.child.once('error', () => resolve({ code: null, signal: null }));
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && alive(this.child.pid);
  }

  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    signalGroup(this.pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(this.pid, 'SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    // Whatever it left in its group.
    signalGroup(this.pid, 'SIGKILL');
  }
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}
