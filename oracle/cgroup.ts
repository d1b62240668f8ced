import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './shell.js';

/**
 * The control group every process of a run lives in (the supervisor is started in it; all it starts
 * inherits it), so `down` ends exactly the oracle's processes, also those of a kubelet that died
 * without stopping its containers. cgroup v2 where the machine has it, else v1's pids hierarchy.
 */

const NAME = 'fleetsim-oracle';

export function cgroupPath(): string | undefined {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return join('/sys/fs/cgroup', NAME);
  if (existsSync('/sys/fs/cgroup/pids/cgroup.procs')) return join('/sys/fs/cgroup/pids', NAME);
  return undefined;
}

/** Makes the group; the shell prefix that moves a command into it before it runs. */
export function enterCgroup(): string[] {
  const path = cgroupPath();
  if (!path) return [];
  mkdirSync(path, { recursive: true });
  return ['sh', '-c', `echo $$ > ${join(path, 'cgroup.procs')} && exec "$@"`, 'fleetsim-oracle'];
}

export function cgroupProcesses(): number[] {
  const path = cgroupPath();
  if (!path || !existsSync(path)) return [];
  return readFileSync(join(path, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}

/**
 * The group's processes as /proc tells them: a process inside the oracle's namespace (`npm run
 * oracle -- exec`) has its own /sys, without the group's directory, but the same /proc.
 */
export function cgroupProcessesByProc(): number[] {
  const member = new RegExp(`^\\d+:[^:]*:/${NAME}(/.*)?$`, 'm');
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return member.test(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
      } catch {
        return false; // gone meanwhile
      }
    });
}

/** SIGKILLs what is left in the group until it is empty, then removes it; the processes it killed. */
export async function emptyCgroup(): Promise<number> {
  const path = cgroupPath();
  if (!path || !existsSync(path)) return 0;
  const killed = new Set<number>();
  for (let round = 0; round < 50; round++) {
    const left = cgroupProcesses().filter((pid) => pid !== process.pid);
    if (left.length === 0) break;
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // already gone
      }
    }
    await sleep(100);
  }
  try {
    rmdirSync(path);
  } catch {
    // still busy: the next `down` or `up` tries again
  }
  return killed.size;
}
