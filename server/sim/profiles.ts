import { readInputFile, whyUnreadable } from '../input-file.js';
import { GAMESERVER_STATES, type GameServerState } from '../kinds/gameserver-types.js';
import { parseGoDuration } from '../k8s/duration.js';
import { yaml } from '../log/json.js';

/**
 * Lifecycle profiles of simulated game-server processes, declared in YAML in the spirit of
 * kwok's Stages: when a GameServer enters a state, wait a (random) delay, then take one of
 * several weighted actions.
 *
 *   apiVersion: fleetsim.dev/v1alpha1
 *   kind: ProcessProfile
 *   metadata: { name: quick-sessions }
 *   spec:
 *     health: { ping: true }
 *     stages:
 *       - when: Scheduled
 *         delay: { min: 1s, max: 3s }
 *         next: [{ action: ready, weight: 99 }, { action: crash, weight: 1 }]
 *       - when: Allocated
 *         delay: 60s
 *         next: [{ action: shutdown }]
 *
 * A GameServer picks its profile by the annotation `fleetsim.dev/process-profile` (set it in
 * a fleet's template); `none` means no simulated process: a real program or k6 drives its sidecar.
 */
export const PROFILE_ANNOTATION = 'fleetsim.dev/process-profile';
export const NO_PROCESS = 'none';

export const PROCESS_ACTIONS = ['ready', 'allocate', 'reserve', 'shutdown', 'crash', 'stopPinging', 'nothing'] as const;
export type ProcessAction = (typeof PROCESS_ACTIONS)[number];

export interface Delay {
  minMs: number;
  maxMs: number;
}

export interface Stage {
  when: GameServerState;
  delay: Delay;
  next: Array<{ action: ProcessAction; weight: number; seconds?: number }>;
}

export interface ProcessProfile {
  name: string;
  /** Whether the process sends health pings on time. */
  ping: boolean;
  stages: Stage[];
}

/** What a process does when nobody says otherwise: starts in 1-3 s, calls Ready, pings. */
export const DEFAULT_PROFILE: ProcessProfile = {
  name: 'default',
  ping: true,
  stages: [{ when: 'Scheduled', delay: { minMs: 1000, maxMs: 3000 }, next: [{ action: 'ready', weight: 1 }] }],
};

/**
 * A duration as profiles and scenarios write it: a Go duration as flags take them (`500ms`, `2s`,
 * `1m`, `1h30m`), or a number of seconds.
 */
export function durationMs(value: unknown, field: string): number {
  // Finite only: YAML's .inf is a number, and so is a string of 400 digits.
  if (typeof value === 'number' && value >= 0 && Number.isFinite(value)) return value * 1000;
  if (typeof value === 'string') {
    const text = value.trim();
    if (/^\d+(\.\d+)?$/.test(text) && Number.isFinite(Number(text))) return Number(text) * 1000;
    const parsed = parseGoDuration(text);
    if ('value' in parsed && parsed.value >= 0) return parsed.value;
  }
  throw new Error(`${field}: "${String(value)}" is not a duration (use 500ms, 2s, 1m, 1h30m or a number of seconds)`);
}

function parseDelay(value: unknown, field: string): Delay {
  if (value === undefined) return { minMs: 0, maxMs: 0 };
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { min, max } = value as Record<string, unknown>;
    const minMs = durationMs(min ?? 0, `${field}.min`);
    const maxMs = durationMs(max ?? min ?? 0, `${field}.max`);
    if (maxMs < minMs) throw new Error(`${field}: max must not be less than min`);
    return { minMs, maxMs };
  }
  const ms = durationMs(value, field);
  return { minMs: ms, maxMs: ms };
}

/** Reads one ProcessProfile document; errors name the field at fault. */
export function parseProfile(document: unknown): ProcessProfile {
  if (typeof document !== 'object' || document === null) throw new Error('a ProcessProfile must be an object');
  const doc = document as Record<string, unknown>;
  if (doc.kind !== 'ProcessProfile') throw new Error(`kind: expected ProcessProfile, got ${String(doc.kind)}`);
  const name = (doc.metadata as Record<string, unknown> | undefined)?.name;
  if (typeof name !== 'string' || name === '') throw new Error('metadata.name: required');
  const spec = (doc.spec ?? {}) as Record<string, unknown>;
  const health = (spec.health ?? {}) as Record<string, unknown>;
  const stagesRaw = spec.stages ?? [];
  if (!Array.isArray(stagesRaw)) throw new Error('spec.stages: must be a list');
  const stages = stagesRaw.map((raw, i): Stage => {
    const field = `spec.stages[${i}]`;
    const stage = raw as Record<string, unknown>;
    if (!GAMESERVER_STATES.includes(stage.when as GameServerState)) {
      throw new Error(`${field}.when: "${String(stage.when)}" is not a GameServer state`);
    }
    const nextRaw = stage.next ?? [];
    if (!Array.isArray(nextRaw) || nextRaw.length === 0) throw new Error(`${field}.next: needs at least one action`);
    const next = nextRaw.map((n, j) => {
      const choice = n as Record<string, unknown>;
      if (!PROCESS_ACTIONS.includes(choice.action as ProcessAction)) {
        throw new Error(`${field}.next[${j}].action: must be one of ${PROCESS_ACTIONS.join(', ')}`);
      }
      const weight = choice.weight ?? 1;
      if (typeof weight !== 'number' || weight < 0) throw new Error(`${field}.next[${j}].weight: must be a number >= 0`);
      return {
        action: choice.action as ProcessAction,
        weight,
        ...(choice.seconds !== undefined && { seconds: Number(choice.seconds) }),
      };
    });
    return { when: stage.when as GameServerState, delay: parseDelay(stage.delay, `${field}.delay`), next };
  });
  return { name, ping: health.ping !== false, stages };
}

export function loadProfiles(path: string): ProcessProfile[] {
  return loadDocuments(path, parseProfile);
}

/** Reads every YAML document of a file with `parse`; an error names the file and the document (1-based). */
export function loadDocuments<T>(path: string, parse: (document: unknown) => T): T[] {
  let text: string;
  try {
    text = readInputFile(path);
  } catch (error) {
    throw new Error(`cannot read ${path}: ${whyUnreadable(error)}`);
  }
  return yaml()
    .parseAllDocuments(text)
    .map((d) => d.toJSON() as unknown)
    .filter((d) => d !== null)
    .map((d, i) => {
      try {
        return parse(d);
      } catch (error) {
        throw new Error(`${path}, document ${i + 1}: ${(error as Error).message}`);
      }
    });
}
