import { cpus, loadavg } from 'node:os';

/** CPU seconds all cores have spent busy since boot (everything but idle). */
function machineBusySeconds(): number {
  let ms = 0;
  for (const cpu of cpus()) ms += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq;
  return ms / 1000;
}

/** This process's CPU seconds (user + system). */
function ownSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/**
 * The machine's load while a benchmark runs, told beside its figures (the machine is shared):
 * call at the start, then call what it returns at the end for a line such as "other programs
 * used 0.12 cores; load average 0.80 → 1.10".
 */
export function watchMachineLoad(): () => string {
  const started = performance.now();
  const busy = machineBusySeconds();
  const own = ownSeconds();
  const load = loadavg()[0]!;
  return () => {
    const wall = (performance.now() - started) / 1000;
    const others = Math.max(0, machineBusySeconds() - busy - (ownSeconds() - own));
    return `other programs used ${(others / Math.max(wall, 0.001)).toFixed(2)} cores; load average ${load.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`;
  };
}
