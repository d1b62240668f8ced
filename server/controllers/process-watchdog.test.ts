import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { ProcessWatchdog } from './process-watchdog.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function sleeper(env: Record<string, string>): ChildProcess {
  const child = spawn('sleep', ['600'], { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
  children.push(child);
  return child;
}
const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(true) : child.once('exit', () => resolve(true))));
const stat = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
const startTime = (pid: number) => stat(pid)[19];
/** Running, not a zombie: endLeftovers returns once the processes it ends have exited. */
const running = (child: ChildProcess) => stat(child.pid!)[0] !== 'Z';

describe.runIf(existsSync('/proc/self/stat'))('ProcessWatchdog.endLeftovers', () => {
  it("ends the marked processes of a run whose serve is gone, and leaves a running serve's and unmarked ones alone", async () => {
    const db = join(tempDir('fleetsim-watchdog-'), 'log.db');
    const [goneRun, runningRun] = [randomUUID(), randomUUID()];
    const gone = sleeper({ FLEETSIM_RUN: goneRun });
    const others = sleeper({ FLEETSIM_RUN: runningRun });
    const unmarked = sleeper({});
    // A serve long gone (a pid with another start time), and one still running (this test's parent).
    writeFileSync(`${db}.processes-1`, `1 0 ${goneRun}\n`);
    writeFileSync(`${db}.processes-${process.ppid}`, `${process.ppid} ${startTime(process.ppid)} ${runningRun}\n`);
    ProcessWatchdog.endLeftovers(db);
    expect(running(gone)).toBe(false);
    expect(running(others)).toBe(true);
    expect(running(unmarked)).toBe(true);
    await exited(gone);
    expect(gone.signalCode).toBe('SIGTERM');
    expect(existsSync(`${db}.processes-1`)).toBe(false);
    expect(existsSync(`${db}.processes-${process.ppid}`)).toBe(true);
  });
});
