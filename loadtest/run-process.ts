import { type ChildProcess, spawn } from 'node:child_process';

/** Waits for a started program to end (killed after `timeoutMs`): its exit code; rejects only when it could not start. */
function ended(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * Runs a program to its end, killed after `timeoutMs`: its exit code and its stdout (and its
 * stderr too, interleaved, with `withStderr`).
 */
export async function runToEnd(command: string, args: string[], timeoutMs: number, withStderr = false): Promise<{ code: number | null; output: string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', withStderr ? 'pipe' : 'ignore'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await ended(child, timeoutMs);
  return { code, output };
}

/**
 * Runs a program to its end with `stdin` as its standard input, killed after `timeoutMs`: its
 * exit code, stdout and stderr apart.
 */
export async function runWithInput(command: string, args: readonly string[], stdin: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => undefined);
  child.stdin.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await ended(child, timeoutMs);
  return { code, stdout, stderr };
}
