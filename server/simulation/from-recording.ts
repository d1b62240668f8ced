import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimulationSummary } from '../../reports/simulation-data.js';
import { type RecordingHistory, readRecording } from '../history/recording.js';
import type { Resource } from '../kinds/resource.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import { NODE_KIND } from '../sim/nodes.js';
import { PROFILE_ANNOTATION } from '../sim/profiles.js';
import { type FieldPath, type Fields, ScenarioError, pathText } from './fields.js';
import { SCENARIO_API_VERSION, SCENARIO_KIND, type ScenarioSource } from './scenario.js';

/**
 * `fleetsim simulate --from-recording out.db`: a scenario made from a recording — the fleets and
 * autoscalers as the recording began, its nodes (count and pods), its demand (each allocation at
 * its time, from its fleet, held as long as it was), the changes people made during it (a fleet
 * scaled or edited by hand, an autoscaler created, edited or deleted, a node added or lost) at
 * their times, and how long its GameServers took to become Ready, as measured. Run first as it is, its figures
 * are checked against the recording's own; `--vary` then asks what another buffer, policy,
 * scheduling or node count would have done with the same traffic.
 */

/** How far the run as recorded may be from the recording and still reproduce it. */
export const TOLERANCE = {
  /** Allocations served: 2 %, at least 1. */
  allocations: { share: 0.02, least: 1 },
  /** Peak replicas (GameServers of the fleets at once): 10 %, at least 2. */
  peakReplicas: { share: 0.1, least: 2 },
};

export const AS_RECORDED = 'as recorded';

/** The profile recorded GameServers start with: from Scheduled to Ready as long as they took. */
const STARTUP_PROFILE = 'recorded-startup';

export interface RecordingScenario {
  history: RecordingHistory;
  /** A fresh scenario document each time (each run's --vary changes its own). */
  read(): ScenarioSource;
}

export interface FromRecordingOptions {
  /** What a node-hour costs (a recording has no prices). */
  nodeHourPrice: number;
}

/** Reads a recording into a scenario; throws ScenarioError when it cannot be one. */
export function recordingScenario(db: string, options: FromRecordingOptions): RecordingScenario {
  let history: RecordingHistory;
  try {
    history = readRecording(db);
  } catch (error) {
    throw new ScenarioError(`--from-recording ${db}: ${(error as Error).message}`);
  }
  // Whole seconds past the last instant recorded: an allocation made then is served too.
  const durationMs = Math.floor((history.endMs - history.startMs) / 1000) * 1000 + 1000;
  if (!history.initial.some((o) => o.kind === FLEET_KIND) && !history.changes.some((c) => 'apply' in c && c.apply.kind === FLEET_KIND)) {
    throw new ScenarioError(`--from-recording ${db}: the recording holds no Fleet to allocate from`);
  }
  if (history.initialNodes.length === 0) throw new ScenarioError(`--from-recording ${db}: the recording holds no Node (record with a kubeconfig that may list nodes)`);
  const profile = startupProfile(history.startupMs);
  const nodeNames = simulatedNodeNames(history);
  const read = (): ScenarioSource => ({
    file: db,
    raw: {
      apiVersion: SCENARIO_API_VERSION,
      kind: SCENARIO_KIND,
      metadata: { name: `recording of ${history.info.cluster}` },
      spec: {
        duration: durationMs / 1000,
        start: new Date(history.startMs).toISOString(),
        resources: history.initial.map((object) => asApplied(object, profile !== undefined)),
        nodes: history.initialNodes.length,
        podsPerNode: mostCommon(history.initialNodes.map((n) => n.pods)),
        ...(profile && { processes: [profile] }),
        demand: { arrivals: { type: 'recording', file: db }, retry: { interval: '1s', timeout: '60s' } },
        prices: { nodeHour: options.nodeHourPrice },
        changes: scenarioChanges(history, durationMs, nodeNames, profile !== undefined),
      },
    },
    locate: (path: FieldPath) => `${db} (${pathText(path)})`,
    overridden: new Map(),
  });
  return { history, read };
}

/** The object as a client would apply it: its name, namespace, labels, annotations and spec. */
function asApplied(object: Resource, startup: boolean): Fields {
  const { name, namespace, labels, annotations } = object.metadata;
  const applied: Fields = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, labels, annotations }, spec: structuredClone(object.spec) };
  if (object.kind !== FLEET_KIND) return applied;
  // A fleetsim stand-in's own process annotations say nothing of the recorded servers: the measured startup does.
  const template = ((applied.spec as Fields).template ??= {}) as Fields;
  const metadata = (template.metadata ??= {}) as Fields;
  const kept = Object.entries((metadata.annotations ?? {}) as Record<string, string>).filter(([key]) => !key.startsWith('fleetsim.dev/'));
  metadata.annotations = Object.fromEntries(startup ? [...kept, [PROFILE_ANNOTATION, STARTUP_PROFILE]] : kept);
  return applied;
}

/** Simulated nodes are node-1… in the order of the recorded ones' names (numbers compared as numbers), then those added. */
function simulatedNodeNames(history: RecordingHistory): Map<string, string> {
  const names = new Map<string, string>();
  const initial = history.initialNodes.map((n) => n.name).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  initial.forEach((name, i) => names.set(name, `node-${i + 1}`));
  let added = initial.length;
  for (const change of history.changes) if ('addNode' in change) names.set(change.addNode.name, `node-${++added}`);
  return names;
}

function scenarioChanges(history: RecordingHistory, durationMs: number, nodeNames: Map<string, string>, startup: boolean): Fields[] {
  const out: Fields[] = [];
  for (const change of history.changes) {
    if (change.atMs >= durationMs) continue;
    const at = change.atMs / 1000;
    if ('apply' in change) out.push({ at, apply: asApplied(change.apply, startup) });
    else if ('delete' in change) out.push({ at, delete: change.delete });
    else if ('addNode' in change) out.push({ at, addNodes: 1 });
    else out.push({ at, delete: { kind: NODE_KIND, name: nodeNames.get(change.deleteNode) ?? change.deleteNode } });
  }
  return out;
}

/** A ProcessProfile starting in the time recorded GameServers took, 10th to 90th percentile; none without a measure. */
function startupProfile(samples: number[]): Fields | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! / 1000;
  return {
    apiVersion: SCENARIO_API_VERSION,
    kind: 'ProcessProfile',
    metadata: { name: STARTUP_PROFILE },
    spec: { stages: [{ when: 'Scheduled', delay: { min: at(0.1), max: at(0.9) }, next: [{ action: 'ready' }] }] },
  };
}

function mostCommon(values: number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0]![0];
}

// -- the comparison ------------------------------------------------------------------------------

export interface Check {
  figure: string;
  recorded: number;
  simulated: number;
  tolerance: number;
  pass: boolean;
}

const within = (recorded: number, simulated: number, rule: { share: number; least: number }): { tolerance: number; pass: boolean } => {
  const tolerance = Math.max(rule.least, Math.ceil(recorded * rule.share));
  return { tolerance, pass: Math.abs(simulated - recorded) <= tolerance };
};

/** The run as recorded against the recording: allocations served and peak replicas, each within its tolerance. */
export function reproductionChecks(history: RecordingHistory, asRecorded: SimulationSummary): Check[] {
  const recordedAllocations = history.figures.allocations + history.figures.initialAllocations;
  return [
    { figure: 'allocations served', recorded: recordedAllocations, simulated: asRecorded.allocations.allocated, ...within(recordedAllocations, asRecorded.allocations.allocated, TOLERANCE.allocations) },
    { figure: 'peak replicas', recorded: history.figures.peakReplicas, simulated: asRecorded.gameServers.peak, ...within(history.figures.peakReplicas, asRecorded.gameServers.peak, TOLERANCE.peakReplicas) },
  ];
}

const fixed = (n: number, digits = 2) => n.toFixed(digits);

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
}

/**
 * The comparison in lines: the checks (PASS/FAIL), then every run beside the recorded reality —
 * allocations, failures, waiting, GameServer-hours (idle Ready ones among them), node-hours and cost.
 */
export function comparisonLines(history: RecordingHistory, checks: Check[], summaries: SimulationSummary[], nodeHourPrice: number): string[] {
  const f = history.figures;
  const lines = [
    `recorded: ${history.info.cluster} (context ${history.info.context}), ${new Date(history.startMs).toISOString()} for ${fixed((history.endMs - history.startMs) / 60_000, 1)} min: ` +
      `${f.allocations} allocations${f.initialAllocations ? ` (and ${f.initialAllocations} already made when it began)` : ''}, peak ${f.peakReplicas} GameServers, ${f.peakNodes} nodes at most`,
    ...history.notes.map((note) => `  note: ${note}`),
    '',
    `run ${AS_RECORDED} against the recording (tolerance: allocations ±${TOLERANCE.allocations.share * 100} % or ${TOLERANCE.allocations.least}, peak replicas ±${TOLERANCE.peakReplicas.share * 100} % or ${TOLERANCE.peakReplicas.least}):`,
    ...table([
      ['figure', 'recorded', 'simulated', 'tolerance', 'verdict'],
      ...checks.map((c) => [c.figure, String(c.recorded), String(c.simulated), `±${c.tolerance}`, c.pass ? 'PASS' : 'FAIL']),
    ]).map((line) => `  ${line}`),
    '',
    'side by side (the cluster records no refused allocation and no waiting, hence n/a):',
  ];
  const money = (hours: number) => (nodeHourPrice > 0 ? fixed(hours * nodeHourPrice) : '-');
  const rows = [
    ['run', 'allocated', 'failed', 'wait p50/p99 s', 'GameServer-h', 'idle Ready-h', 'node-h', 'cost'],
    ['recorded', String(f.allocations + f.initialAllocations), 'n/a', 'n/a', fixed(f.gameServerHours), fixed(f.readyHours), fixed(f.nodeHours), money(f.nodeHours)],
    ...summaries.map((s) => [
      s.variant ?? AS_RECORDED,
      String(s.allocations.allocated),
      String(s.allocations.failed),
      s.waitSeconds ? `${fixed(s.waitSeconds.p50, 1)}/${fixed(s.waitSeconds.p99, 1)}` : '-',
      fixed(s.gameServers.totalHours),
      fixed(s.gameServers.readyHours),
      fixed(s.nodes.nodeHours),
      nodeHourPrice > 0 ? fixed(s.cost.total) : '-',
    ]),
  ];
  return [...lines, ...table(rows).map((line) => `  ${line}`)];
}

/** Writes the comparison beside the runs: recording.md (the lines) and recording.json (figures and checks). */
export function writeComparison(out: string, history: RecordingHistory, checks: Check[], lines: string[]): void {
  writeFileSync(join(out, 'recording.md'), `# ${history.info.cluster}: the recording and its what-if runs\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`);
  const { info, startMs, endMs, figures, notes } = history;
  writeFileSync(join(out, 'recording.json'), `${JSON.stringify({ recording: info, start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString(), figures, notes, checks }, null, 2)}\n`);
}
