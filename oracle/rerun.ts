import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_NETNS, ORACLE_DIST } from './paths.js';

/** This process is in the oracle's control namespace: its network is the one /run/netns names. */
export function insideOracle(): boolean {
  try {
    return statSync('/proc/self/ns/net').ino === statSync(join('/run/netns', CONTROL_NETNS)).ino;
  } catch {
    return false;
  }
}

/**
 * Runs the Node script `script` with `argv` again inside the oracle's control namespace (through
 * `npm run oracle -- exec`), where its API server, allocator and pods are reachable; resolves to
 * the exit code.
 */
export function rerunInOracle(script: string, argv: readonly string[]): Promise<number> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(ORACLE_DIST, 'cli.js'), 'exec', process.execPath, script, ...argv], { stdio: 'inherit' });
    child.once('error', (error) => {
      console.error(error.message);
      done(127);
    });
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}
