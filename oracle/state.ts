import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/** How far the supervisor got, for `up` to follow and `status` and `down` to read (run/state.json). */
export interface OracleState {
  phase: 'starting' | 'ready' | 'failed' | 'stopping' | 'stopped';
  message?: string;
  supervisorPid: number;
  startedAt: string;
  readyAt?: string;
  steps: { at: string; text: string }[];
  daemons: Record<string, { pid: number; log: string; running: boolean }>;
}

export function writeState(file: string, state: OracleState): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2));
  renameSync(`${file}.tmp`, file);
}

export function readState(file: string): OracleState | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as OracleState;
  } catch {
    return undefined;
  }
}
