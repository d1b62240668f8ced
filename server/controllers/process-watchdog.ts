import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * No game process outlives fleetsim. Every process a run of serve starts carries that run's mark in
 * its environment (`FLEETSIM_RUN`, inherited by whatever it starts in turn), and the run is listed
 * in a small file beside the log (`<log>.processes-<serve's pid>`: serve's pid, start time and
 * mark). A watchdog, one small process per serve, holds a pipe from serve; when the pipe closes
 * (serve exited, however: SIGKILL too) it sends the marked processes SIGTERM, SIGKILL after a
 * grace, and removes the file. A serve starting on the same log first does the same for any run
 * its file still lists whose serve is gone (its watchdog was killed too, say). Only a process whose
 * environment in /proc carries the mark is signalled: a pid reused by an unrelated process never
 * is. It needs Linux's /proc; elsewhere there is no watchdog.
 */

/** How long a run's processes are given between SIGTERM and SIGKILL once its serve is gone. */
export const WATCHDOG_GRACE_MS = 2000;

/**
 * The watchdog, run by `node -e` with the list's file and the run's mark: when its stdin ends (at
 * once when it is not a pipe) it ends the marked processes, removes the file and exits.
 */
const WATCHDOG = `'use strict';
const fs = require('node:fs');
const [file, run] = process.argv.slice(1);
// A run's mark is a UUID: anything else marks nothing, and then nothing is signalled.
if (!/^[0-9a-f-]{36}$/.test(run || '')) process.exit(2);
const mark = 'FLEETSIM_RUN=' + run;
const marked = () =>
  fs.readdirSync('/proc').filter((pid) => {
    if (!/^[0-9]+$/.test(pid) || Number(pid) <= 1 || Number(pid) === process.pid) return false;
    try {
      return fs.readFileSync('/proc/' + pid + '/environ', 'latin1').split('\\0').includes(mark);
    } catch {
      return false;
    }
  });
const signal = (sig) => marked().filter((pid) => { try { process.kill(Number(pid), sig); return true; } catch { return false; } });
const end = () => {
  signal('SIGTERM');
  const killAt = Date.now() + ${WATCHDOG_GRACE_MS};
  const wait = () => {
    // Probed until the grace is over, then killed (for a second at most: a process may be forking).
    const left = signal(Date.now() < killAt ? 0 : 'SIGKILL');
    if (left.length > 0 && Date.now() < killAt + 1000) return void setTimeout(wait, 100);
    fs.rmSync(file, { force: true });
    process.exit(0);
  };
  wait();
};
process.stdin.on('end', end);
process.stdin.on('error', end);
process.stdin.resume();
`;

/** A process's start time (clock ticks since boot) from /proc, if it runs. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Where runs of serve on `db` are listed: beside the log (for `:memory:`, in the temporary directory). */
function listPrefix(db: string): string {
  return `${db === ':memory:' ? join(tmpdir(), 'fleetsim-memory') : db}.processes-`;
}

/** One run of serve's mark on its processes, and its watchdog. */
export class ProcessWatchdog {
  /** The value of FLEETSIM_RUN in the environment of every process this run starts. */
  readonly run = randomUUID();
  private readonly file: string;
  private watchdog: ChildProcess | undefined;

  constructor(db: string) {
    this.file = `${listPrefix(db)}${process.pid}`;
  }

  /**
   * Ends the processes of earlier runs on this log whose serve is gone, and waits until they are
   * gone too; the processes of a serve running now on the same log are left alone.
   */
  static endLeftovers(db: string): void {
    if (!existsSync('/proc/self/stat')) return;
    const prefix = listPrefix(db);
    let names: string[];
    try {
      names = readdirSync(dirname(prefix)).filter((name) => name.startsWith(basename(prefix)) && !name.endsWith('.new'));
    } catch {
      return;
    }
    for (const name of names) {
      const file = join(dirname(prefix), name);
      let listed: string;
      try {
        listed = readFileSync(file, 'utf8');
      } catch {
        continue; // removed meanwhile by its watchdog
      }
      const [pid, start, run] = listed.trim().split(' ');
      if (!/^[0-9a-f-]{36}$/.test(run ?? '')) continue;
      if (Number(pid) === process.pid || startTime(Number(pid)) !== start) {
        spawnSync(process.execPath, ['-e', WATCHDOG, file, run], { stdio: 'ignore', timeout: WATCHDOG_GRACE_MS * 5 });
      }
    }
  }

  /** Before a process starts: the run is listed and its watchdog started (once). */
  watch(): void {
    if (this.watchdog || !existsSync('/proc/self/stat')) return;
    // Whole or not at all, for a serve starting meanwhile to read.
    writeFileSync(`${this.file}.new`, `${process.pid} ${startTime(process.pid)} ${this.run}\n`);
    renameSync(`${this.file}.new`, this.file);
    this.watchdog = spawn(process.execPath, ['-e', WATCHDOG, this.file, this.run], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    // It waits for serve, never the other way round.
    this.watchdog.unref();
    (this.watchdog.stdin as { unref?: () => void } | null)?.unref?.();
    this.watchdog.stdin?.on('error', () => undefined);
  }

  /** serve stops, having stopped its processes: the watchdog finds none left, removes the list and exits. */
  close(): void {
    this.watchdog?.stdin?.end();
    this.watchdog = undefined;
  }
}
