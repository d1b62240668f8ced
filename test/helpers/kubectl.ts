import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { seconds } from './time-scale.js';
import { type Tool, findTool } from './tools.js';

/**
 * The real kubectl against `fleetsim serve`, with an empty kubeconfig, its own HOME and cache
 * directory and --server, so nothing on the machine changes what it does.
 */

/** kubectl: the one the KUBECTL variable names, else the one on the PATH. Tests that need it skip without it (skipWithout). */
export const KUBECTL: Tool = findTool('KUBECTL', ['kubectl'], 'Debian: apt-get install kubectl');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A kubectl process left running (`get -w`): its output so far, and a way to end it. */
export class Streaming {
  out = '';
  err = '';
  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.out += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.err += chunk));
  }

  lines(): string[] {
    return this.out.split('\n').filter((l) => l.trim() !== '');
  }
}

export class Kubectl {
  private readonly running = new Set<ChildProcess>();

  constructor(
    private readonly server: string,
    private readonly home: string,
  ) {}

  private spawn(args: readonly string[]): ChildProcess {
    const child = spawn(
      KUBECTL.path ?? 'kubectl',
      ['--kubeconfig', '/dev/null', '--server', this.server, '--cache-dir', join(this.home, 'cache'), ...args],
      { env: { ...process.env, KUBECONFIG: '/dev/null', HOME: this.home }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.running.add(child);
    child.once('close', () => this.running.delete(child));
    return child;
  }

  /** Runs kubectl to completion (killed after `timeoutMs`). */
  run(args: readonly string[], timeoutMs = seconds(60)): Promise<Run> {
    const child = this.spawn(args);
    const stream = new Streaming(child);
    return new Promise<Run>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`kubectl ${args.join(' ')} still running after ${timeoutMs} ms\n${stream.out}\n${stream.err}`));
      }, timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: stream.out, stderr: stream.err });
      });
    });
  }

  /** Runs kubectl and expects exit 0; returns stdout. */
  async ok(args: readonly string[]): Promise<string> {
    const r = await this.run(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }

  async json<T>(args: readonly string[]): Promise<T> {
    return JSON.parse(await this.ok([...args, '-o', 'json'])) as T;
  }

  stream(args: readonly string[]): Streaming {
    return new Streaming(this.spawn(args));
  }

  killAll(): void {
    for (const child of this.running) child.kill('SIGKILL');
  }
}
