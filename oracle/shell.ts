import { spawn } from 'node:child_process';

/** Runs a command to its end; resolves with its output, rejects (naming the command and its stderr) when it fails. */
export function run(command: string, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env, cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${command}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')}: ${signal ? `killed by ${signal}` : `exit ${code}`}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-3).join(' / ')}` : ''}`));
    });
  });
}

/** `ip -b -` in a network namespace (or the current one): the commands one a line, stopping at the first that fails. */
export function ipBatch(commands: readonly string[], netns?: string): Promise<string> {
  return run('ip', [...(netns ? ['-n', netns] : []), '-b', '-'], { input: `${commands.join('\n')}\n` });
}

/** Sets a sysctl of the network namespace the command runs in (/proc/sys/net is per namespace). */
export function netnsSysctl(netns: string, key: string, value: string): Promise<string> {
  return run('ip', ['netns', 'exec', netns, 'sh', '-c', `echo ${value} > /proc/sys/${key.replace(/\./g, '/')}`]);
}

/** True when a process with this id exists. */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
