import { spawn } from 'node:child_process';

/**
 * Runs a program to its end, killed after `timeoutMs`: its exit code and its stdout (and its
 * stderr too, interleaved, with `withStderr`).
 */
export function runToEnd(command: string, args: string[], timeoutMs: number, withStderr = false): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', withStderr ? 'pipe' : 'ignore'] });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
