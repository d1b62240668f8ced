import { readFileSync, writeFileSync } from 'node:fs';
import type { Series } from '../reports/run-data.js';
import { clockTicksPerSecond, cpuSecondsFromStat } from '../server/bench/machine-load.js';

/**
 * CPU time and resident memory of a process, read from Linux's /proc while it runs — the
 * server's own figures come from the outside, so nothing is added to the server.
 */

/** Resident set size in bytes from the text of /proc/<pid>/status (`VmRSS:  123 kB`). */
export function rssBytesFromStatus(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error('no VmRSS in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/** Peak resident set size in bytes from the text of /proc/<pid>/status (`VmHWM:  123 kB`). */
export function peakRssBytesFromStatus(status: string): number {
  const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  if (!m) throw new Error('no VmHWM in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/**
 * Starts a process's peak resident size (VmHWM) over from its present size, so a peak can be read
 * for one stretch of its life (writing 5 to /proc/<pid>/clear_refs). False where that is refused
 * (another user's process): the caller then has only samples.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export function readPeakRssBytes(pid: number): number {
  return peakRssBytesFromStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

export function readCpuSeconds(pid: number): number {
  return cpuSecondsFromStat(readFileSync(`/proc/${pid}/stat`, 'utf8'), clockTicksPerSecond());
}

export function readRssBytes(pid: number): number {
  return rssBytesFromStatus(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

export { cpuSecondsFromStat, machineBusySecondsFromStat, readMachineBusySeconds } from '../server/bench/machine-load.js';

/** Samples a process once a second between start() and stop(). */
export class ProcessSampler {
  private timer: NodeJS.Timeout | undefined;
  private cpuAtStart = 0;
  private cpuAtLast = 0;
  private readonly memory: Series = [];
  private t0 = 0;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 1000,
  ) {}

  start(t0Ms: number = Date.now()): void {
    this.t0 = t0Ms;
    this.cpuAtStart = this.cpuAtLast = this.safeCpu() ?? 0;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  /** CPU seconds used since start(), and the memory samples. */
  stop(): { cpuSeconds: number; memory: Series } {
    clearInterval(this.timer);
    this.sample();
    return { cpuSeconds: Math.max(0, this.cpuAtLast - this.cpuAtStart), memory: this.memory };
  }

  /** Reads once more now (for a process about to exit). */
  touch(): void {
    const cpu = this.safeCpu();
    if (cpu !== undefined) this.cpuAtLast = cpu;
  }

  private safeCpu(): number | undefined {
    try {
      return readCpuSeconds(this.pid);
    } catch {
      return undefined; // the process has gone: keep the last reading
    }
  }

  private sample(): void {
    const cpu = this.safeCpu();
    if (cpu !== undefined) this.cpuAtLast = cpu;
    try {
      this.memory.push([Math.round((Date.now() - this.t0) / 100) / 10, readRssBytes(this.pid)]);
    } catch {
      // gone
    }
  }
}
