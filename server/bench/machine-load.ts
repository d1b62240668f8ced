import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/**
 * The machine's CPU, read from Linux's /proc: how busy all cores were while a benchmark ran (the
 * machine is shared), and the clock ticks /proc counts in. The load harness (loadtest/proc-stats)
 * reads it here too.
 */

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 nearly everywhere). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
      ticksPerSecond = ticks > 0 ? ticks : 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU seconds the whole machine has spent busy (all cores: everything but idle and iowait) from
 * the first line of /proc/stat — to tell how much of a run's CPU went to other programs.
 */
export function machineBusySecondsFromStat(stat: string, ticks: number): number {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  const [user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / ticks;
}

export function readMachineBusySeconds(): number {
  return machineBusySecondsFromStat(readFileSync('/proc/stat', 'utf8'), clockTicksPerSecond());
}

/**
 * The fields of a /proc/<pid>/stat line after the command name, which can hold spaces and
 * parentheses, so they are counted from the last ')': index 0 is field 3 (state).
 */
function statFields(stat: string): string[] {
  const close = stat.lastIndexOf(')');
  if (close < 0) throw new Error('not a /proc/<pid>/stat line');
  return stat.slice(close + 2).trim().split(/\s+/);
}

/** CPU seconds from the text of /proc/<pid>/stat: user + system (utime, stime), or with `children` those of its ended children (cutime, cstime). */
export function cpuSecondsFromStat(stat: string, ticks: number, children = false): number {
  const fields = statFields(stat);
  const at = children ? 13 : 11;
  const user = Number(fields[at]);
  const system = Number(fields[at + 1]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) throw new Error('no CPU times in /proc/<pid>/stat');
  return (user + system) / ticks;
}

/** This process's CPU seconds (user + system, every thread), and those of the children it has waited for (a benchmark's own workers). */
function ownSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6 + cpuSecondsFromStat(readFileSync('/proc/self/stat', 'utf8'), clockTicksPerSecond(), true);
}

/** The machine's load over a stretch of a benchmark. */
export interface MachineLoad {
  /** Cores other programs kept busy on average: the machine's busy time less this process's and its waited-for children's. */
  otherCores: number;
  /** The one-minute load average at the start and at the end. */
  loadAverage: [number, number];
  wallSeconds: number;
}

/**
 * The machine's load while a benchmark runs, told beside its figures: call at the start, then
 * call what it returns at the end.
 */
export function watchMachineLoad(): () => MachineLoad {
  const started = performance.now();
  const busy = readMachineBusySeconds();
  const own = ownSeconds();
  const load = loadavg()[0]!;
  return () => {
    const wall = (performance.now() - started) / 1000;
    const others = Math.max(0, readMachineBusySeconds() - busy - (ownSeconds() - own));
    return { otherCores: others / Math.max(wall, 0.001), loadAverage: [load, loadavg()[0]!], wallSeconds: wall };
  };
}

/** "other programs used 0.12 cores; load average 0.80 → 1.10" */
export function describeMachineLoad(load: MachineLoad): string {
  return `other programs used ${load.otherCores.toFixed(2)} cores; load average ${load.loadAverage[0].toFixed(2)} → ${load.loadAverage[1].toFixed(2)}`;
}
