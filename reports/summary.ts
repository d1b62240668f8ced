/**
 * The key figures of a run: `summary.json` (raw numbers), the rows of figures every page and table
 * shows (one list, so the HTML page, `summary.md` and a comparison agree), and `summary.md`.
 */
import {
  NO_VALUE,
  formatBytes,
  formatCount,
  formatDuration,
  formatMs,
  formatPercent,
  formatRate,
  formatRatio,
  formatSignificant,
  formatTimestamp,
  markdownCode,
  markdownText,
} from './format.js';
import type { LatencySummary, RemoteRun, RunData, TargetResult } from './run-data.js';

export interface TargetSummary {
  /** Requests per second. */
  requestRate: number;
  latencyMs: LatencySummary;
  /** Allocation outcomes by status. */
  outcomes: Record<string, number>;
  /** Allocated / all outcomes; null when no outcomes were recorded. */
  allocatedShare: number | null;
  thresholds: { passed: number; failed: number };
}

export interface ServerSummary {
  cpuSeconds: number;
  /** CPU seconds per second of run: 1 is one core busy throughout. */
  cpuCores: number;
  memoryPeakBytes: number | null;
  memoryMeanBytes: number | null;
  eventsCommitted: number;
  eventsPerSecond: number;
}

/** What `summary.json` holds. Absent parts are null rather than missing, so readers see every key. */
export interface RunSummary {
  scenario: string;
  startedAt: string;
  durationSeconds: number;
  ok: boolean;
  fleetsim: TargetSummary;
  baseline: TargetSummary | null;
  /** fleetsim request rate / baseline request rate. */
  baselineRatio: number | null;
  thresholds: {
    passed: number;
    failed: number;
    results: Array<{ target: TargetResult['target']; metric: string; expression: string; ok: boolean }>;
  };
  server: ServerSummary | null;
  watchDeliveryMs: LatencySummary | null;
  /** The remote cluster the run allocated from (`--target-allocator`), or null for a local fleetsim. */
  remote: RemoteRun | null;
  /** A sentence for each side whose figures other programs disturbed (see `disturbances`); empty on a quiet machine. */
  disturbed: string[];
}

/**
 * Share of the machine (all its cores, over the run) other programs may take before a side's
 * figures are called disturbed: past it, a failed threshold may be the machine's doing.
 */
export const DISTURBED_SHARE = 0.1;

/** Says, for each side of the run, when other programs took more of the machine than DISTURBED_SHARE. */
export function disturbances(run: Pick<RunData, 'durationSeconds' | 'otherPrograms' | 'remote'>): string[] {
  const other = run.otherPrograms;
  if (!other) return [];
  const sides: Array<[string, number | undefined]> = [
    [run.remote ? 'remote' : 'fleetsim', other.fleetsim],
    ['baseline', other.baseline],
  ];
  return sides
    .filter(([, seconds]) => seconds !== undefined && seconds > DISTURBED_SHARE * run.durationSeconds * other.cores)
    .map(([side, seconds]) => `other programs used ${formatSignificant(seconds!)} CPU s during the ${side} run (${other.cores} cores): its figures are disturbed`);
}

/** What the measured side is called: the local fleetsim, or the cluster behind --target-allocator. */
export function measuredName(remote: RemoteRun | null | undefined): string {
  return remote ? 'remote cluster' : 'fleetsim';
}

/** A threshold's target as the report names it. */
export function targetName(target: TargetResult['target'], remote: RemoteRun | null): string {
  return target === 'fleetsim' ? measuredName(remote) : target;
}

/** What a remote run measured and what it could not, in sentences (plain text). */
export function remoteNotes(remote: RemoteRun): string[] {
  const fleet = `${remote.namespace}/${remote.fleet}`;
  return [
    `Allocations went to the allocator service at ${remote.allocator} over mutual TLS; the figures are k6's, measured on this machine.`,
    remote.fleetManagement === 'created'
      ? `Fleet ${fleet} and its autoscaler were created by fleetsim through --kubeconfig (kubectl), its status was followed from the cluster's API, and both were deleted at the end.`
      : `Fleet ${fleet} was assumed to exist (no --kubeconfig): fleetsim neither created it nor read its status, so there is no fleet chart.`,
    "Not measured against a remote cluster: the server's CPU and memory and the events committed to its log — those are figures of a local fleetsim process.",
  ];
}

const OUTCOME_ORDER = ['Allocated', 'UnAllocated', 'Contention', 'error'];

/** Outcome names found in any of the records: the known ones in their usual order, then the rest. */
export function outcomeNames(...records: ReadonlyArray<Record<string, number> | undefined>): string[] {
  const names = new Set(records.flatMap((r) => Object.keys(r ?? {})));
  const rank = (name: string): number => (OUTCOME_ORDER.includes(name) ? OUTCOME_ORDER.indexOf(name) : OUTCOME_ORDER.length);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function summarizeTarget(target: TargetResult): TargetSummary {
  const total = Object.values(target.outcomes).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  const passed = target.thresholds.filter((t) => t.ok).length;
  return {
    requestRate: target.requestRate,
    latencyMs: { ...target.latency },
    outcomes: { ...target.outcomes },
    allocatedShare: total > 0 ? (target.outcomes.Allocated ?? 0) / total : null,
    thresholds: { passed, failed: target.thresholds.length - passed },
  };
}

function mean(values: readonly number[]): number | null {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? null : finite.reduce((a, b) => a + b, 0) / finite.length;
}

function peak(values: readonly number[]): number | null {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? null : Math.max(...finite);
}

export function summarizeRun(run: RunData): RunSummary {
  const targets = [run.fleetsim, ...(run.baseline ? [run.baseline] : [])];
  const results = targets.flatMap((t) => t.thresholds.map((th) => ({ target: t.target, metric: th.metric, expression: th.expression, ok: th.ok })));
  const passed = results.filter((r) => r.ok).length;
  const computedRatio = run.baseline && run.baseline.requestRate > 0 ? run.fleetsim.requestRate / run.baseline.requestRate : null;
  const seconds = run.durationSeconds > 0 ? run.durationSeconds : Number.NaN;
  const memory = run.server?.memory.map(([, bytes]) => bytes) ?? [];
  return {
    scenario: run.scenario,
    startedAt: run.startedAt,
    durationSeconds: run.durationSeconds,
    ok: run.ok,
    fleetsim: summarizeTarget(run.fleetsim),
    baseline: run.baseline ? summarizeTarget(run.baseline) : null,
    baselineRatio: run.baselineRatio ?? computedRatio,
    thresholds: { passed, failed: results.length - passed, results },
    server: run.server
      ? {
          cpuSeconds: run.server.cpuSeconds,
          cpuCores: run.server.cpuSeconds / seconds,
          memoryPeakBytes: peak(memory),
          memoryMeanBytes: mean(memory),
          eventsCommitted: run.server.eventsCommitted,
          eventsPerSecond: run.server.eventsCommitted / seconds,
        }
      : null,
    watchDeliveryMs: run.watchDelivery
      ? (({ count, min, mean: avg, p50, p90, p95, p99, max }) => ({ count, min, mean: avg, p50, p90, p95, p99, max }))(run.watchDelivery)
      : null,
    remote: run.remote ?? null,
    disturbed: disturbances(run),
  };
}

// ---- figures --------------------------------------------------------------------------------

export type Unit = 'rate' | 'ms' | 'count' | 'bytes' | 'duration' | 'seconds' | 'ratio' | 'share' | 'cores';

export interface FigureRow {
  /** Stable identifier, for matching rows of two runs. */
  key: string;
  label: string;
  unit: Unit;
  /** Which way is an improvement, if either. */
  better: 'higher' | 'lower' | null;
  /** A figure of each target (fleetsim, baseline), or of the run and its server (fleetsim only). */
  scope: 'target' | 'run';
  fleetsim: number | null;
  baseline: number | null;
}

export function formatFigure(value: number | null, unit: Unit): string {
  if (value === null || Number.isNaN(value)) return NO_VALUE;
  switch (unit) {
    case 'rate':
      return formatRate(value);
    case 'ms':
      return formatMs(value);
    case 'count':
      return formatCount(value);
    case 'bytes':
      return formatBytes(value);
    case 'duration':
      return formatDuration(value);
    case 'seconds':
      return `${formatSignificant(value)} s`;
    case 'ratio':
      return formatRatio(value);
    case 'share':
      return formatPercent(value);
    case 'cores':
      return `${formatSignificant(value, 2)} ${Math.abs(value) === 1 ? 'core' : 'cores'}`;
  }
}

function outcomeBetter(name: string): FigureRow['better'] {
  if (name === 'Allocated') return 'higher';
  return OUTCOME_ORDER.includes(name) ? 'lower' : null;
}

/** The figures of a run, in reading order: per target first, then the run and server's own. */
export function figureRows(summary: RunSummary): FigureRow[] {
  const { fleetsim, baseline } = summary;
  const both = (key: string, label: string, unit: Unit, better: FigureRow['better'], pick: (t: TargetSummary) => number | null): FigureRow => ({
    key,
    label,
    unit,
    better,
    scope: 'target',
    fleetsim: pick(fleetsim),
    baseline: baseline ? pick(baseline) : null,
  });
  const own = (key: string, label: string, unit: Unit, better: FigureRow['better'], value: number | null): FigureRow => ({
    key,
    label,
    unit,
    better,
    scope: 'run',
    fleetsim: value,
    baseline: null,
  });
  const rows: FigureRow[] = [
    own('duration', 'duration', 'duration', null, summary.durationSeconds),
    both('requestRate', 'request rate', 'rate', 'higher', (t) => t.requestRate),
    both('requests', 'requests', 'count', null, (t) => t.latencyMs.count),
    ...(['p50', 'p90', 'p95', 'p99', 'max'] as const).map((p) => both(`latency.${p}`, `latency ${p}`, 'ms', 'lower', (t) => t.latencyMs[p])),
    ...outcomeNames(fleetsim.outcomes, baseline?.outcomes).map((name) =>
      both(`outcome.${name}`, `outcome ${name}`, 'count', outcomeBetter(name), (t) => t.outcomes[name] ?? 0),
    ),
    both('allocatedShare', 'allocated share', 'share', 'higher', (t) => t.allocatedShare),
    both('thresholdsFailed', 'thresholds failed', 'count', 'lower', (t) => t.thresholds.failed),
  ];
  if (summary.baselineRatio !== null) rows.push(own('baselineRatio', 'rate vs baseline', 'ratio', 'higher', summary.baselineRatio));
  if (summary.server) {
    const s = summary.server;
    rows.push(
      own('server.cpuSeconds', 'server CPU time', 'seconds', 'lower', s.cpuSeconds),
      own('server.cpuCores', 'server CPU, average', 'cores', 'lower', s.cpuCores),
      own('server.memoryPeak', 'server memory, peak', 'bytes', 'lower', s.memoryPeakBytes),
      own('server.eventsCommitted', 'events committed', 'count', null, s.eventsCommitted),
      own('server.eventsPerSecond', 'events committed per second', 'rate', null, s.eventsPerSecond),
    );
  }
  if (summary.watchDeliveryMs) {
    const w = summary.watchDeliveryMs;
    rows.push(
      own('watch.count', 'watch changes delivered', 'count', null, w.count),
      ...(['p50', 'p95', 'p99', 'max'] as const).map((p) => own(`watch.${p}`, `watch delivery ${p}`, 'ms', 'lower', w[p])),
    );
  }
  return rows;
}

// ---- Markdown -------------------------------------------------------------------------------

/** A GitHub Markdown table; cells are Markdown already (escape text with markdownText). */
export function markdownTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, align: ReadonlyArray<'left' | 'right'>): string {
  const rule = align.map((a) => (a === 'right' ? '---:' : '---'));
  return [headers, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

export function statusWord(ok: boolean): string {
  return ok ? 'PASS' : 'FAIL';
}

/** `summary.md`: the verdict, the figures table and the thresholds. */
export function summaryMarkdown(summary: RunSummary): string {
  const hasBaseline = summary.baseline !== null;
  const rows = figureRows(summary).map((row) => [
    markdownText(row.label),
    formatFigure(row.fleetsim, row.unit),
    ...(hasBaseline ? [row.scope === 'run' ? '' : formatFigure(row.baseline, row.unit)] : []),
  ]);
  const lines = [
    `# Load test ${markdownCode(summary.scenario)}`,
    '',
    ...summary.disturbed.flatMap((sentence) => [`> **Warning:** ${markdownText(sentence)}.`, '']),
    `**${statusWord(summary.ok)}** · started ${formatTimestamp(summary.startedAt)} · ${formatDuration(summary.durationSeconds)}` +
      ` · thresholds ${summary.thresholds.passed} of ${summary.thresholds.passed + summary.thresholds.failed} passed`,
    '',
    ...(summary.remote ? remoteNotes(summary.remote).flatMap((note) => [markdownText(note), '']) : []),
    markdownTable(['', measuredName(summary.remote), ...(hasBaseline ? ['baseline'] : [])], rows, ['left', 'right', ...(hasBaseline ? (['right'] as const) : [])]),
  ];
  if (summary.thresholds.results.length > 0) {
    lines.push(
      '',
      '## Thresholds',
      '',
      markdownTable(
        ['target', 'metric', 'threshold', 'result'],
        summary.thresholds.results.map((t) => [targetName(t.target, summary.remote), markdownCode(t.metric, true), markdownCode(t.expression, true), t.ok ? 'pass' : '**FAIL**']),
        ['left', 'left', 'left', 'left'],
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}
