import { join, resolve } from 'node:path';
import { FlagError } from '../server/flags.js';
import { readInputFile } from '../server/input-file.js';
import { type AgonesStage, parseAgonesScenario } from './durations.js';
import { SCENARIOS_DIR } from './paths.js';

/** `--scenario-file` (Agones's fixed.txt when not given), read and parsed: its stages and their length in seconds. */
export function scenarioFileFlag(value: unknown): { file: string; stages: AgonesStage[]; totalSeconds: number } {
  const file = resolve(String(value ?? join(SCENARIOS_DIR, 'agones', 'fixed.txt')));
  let stages: AgonesStage[];
  try {
    stages = parseAgonesScenario(readInputFile(file));
  } catch (error) {
    throw new FlagError(`--scenario-file ${file}: ${(error as Error).message}`);
  }
  return { file, stages, totalSeconds: stages.reduce((sum, s) => sum + s.seconds, 0) };
}
