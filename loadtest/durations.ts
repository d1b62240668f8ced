/**
 * Durations as k6 and Agones's scenario files write them: `500ms`, `30s`, `10m`, `1h`, `1m30s`,
 * or a bare number of seconds.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let total = 0;
  let rest = trimmed;
  if (rest === '') throw new Error('an empty duration');
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) throw new Error(`"${text}" is not a duration (use 500ms, 30s, 10m or 1h30m)`);
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Seconds as a short k6 duration: whole seconds when they are whole, else milliseconds. */
export function formatDuration(seconds: number): string {
  if (Number.isInteger(seconds)) return `${seconds}s`;
  return `${Math.max(1, Math.round(seconds * 1000))}ms`;
}

/** One line of an Agones load-test scenario file: `duration,clients,intervalMs`. */
export interface AgonesStage {
  line: number;
  seconds: number;
  clients: number;
  intervalMs: number;
}

/**
 * Reads an Agones scenario file: k6 (scenarios/agones-scenario.ts) and the harness (to scale it
 * and to know how long the run lasts) both use this. Plain TypeScript with no imports, so k6
 * loads it as it is.
 */
export function parseAgonesScenario(text: string): AgonesStage[] {
  const stages: AgonesStage[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split(',').map((f) => f.trim());
    if (fields.length !== 3) throw new Error(`line ${index + 1}: expected duration,clients,intervalMs, got "${line}"`);
    const seconds = parseDuration(fields[0]!);
    const clients = Number(fields[1]);
    const intervalMs = Number(fields[2]);
    if (!(seconds > 0)) throw new Error(`line ${index + 1}: duration must be positive`);
    if (!Number.isInteger(clients) || clients < 1) throw new Error(`line ${index + 1}: clients must be a whole number >= 1`);
    if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new Error(`line ${index + 1}: intervalMs must be a whole number >= 1`);
    stages.push({ line: index + 1, seconds, clients, intervalMs });
  });
  if (stages.length === 0) throw new Error('the scenario file has no stages');
  return stages;
}

/** Allocations per second a stage asks for: each client, one per interval. */
export function stageRate(stage: AgonesStage): number {
  return (stage.clients * 1000) / stage.intervalMs;
}
