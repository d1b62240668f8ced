/**
 * Reading a run's `run.json`: checks its shape against `RunData` (so a harness bug surfaces as a
 * message naming the field, not a crash mid-render) and normalises what JSON cannot carry.
 */
import { join } from 'node:path';
import { readInputFile, whyUnreadable } from '../server/input-file.js';
import type { FleetSample, LatencySummary, OtherPrograms, RemoteRun, RunData, Series, ServerFigures, TargetResult, ThresholdResult } from './run-data.js';
import type { Bucket } from './charts/histogram.js';

export class RunFileError extends Error {}

type Json = Record<string, unknown>;

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

function fail(path: string, expected: string, value: unknown): never {
  throw new RunFileError(`${path} should be ${expected}, but is ${describe(value)}`);
}

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
  return value as Json;
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'a list', value);
  return value;
}

/** A number; null (what JSON.stringify makes of NaN and Infinity) reads as NaN, shown as "—". */
function number(value: unknown, path: string): number {
  if (value === null) return Number.NaN;
  if (typeof value !== 'number') fail(path, 'a number', value);
  return value;
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, 'a string', value);
  return value;
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') fail(path, 'true or false', value);
  return value;
}

function series(value: unknown, path: string): Series {
  return list(value, path).map((pair, i) => {
    const [t, v] = list(pair, `${path}[${i}]`);
    return [number(t, `${path}[${i}][0]`), number(v, `${path}[${i}][1]`)];
  });
}

/** Histogram buckets; an upper bound of null stands for +Inf (JSON has no Infinity). */
function buckets(value: unknown, path: string): Array<{ le: number; count: number }> {
  return list(value, path).map((item, i) => {
    const bucket = object(item, `${path}[${i}]`);
    const le = bucket.le === null ? Infinity : number(bucket.le, `${path}[${i}].le`);
    return { le, count: number(bucket.count, `${path}[${i}].count`) };
  });
}

function latency(value: unknown, path: string): LatencySummary {
  const o = object(value, path);
  const field = (name: keyof LatencySummary): number => number(o[name], `${path}.${name}`);
  return {
    count: field('count'),
    min: field('min'),
    mean: field('mean'),
    p50: field('p50'),
    p90: field('p90'),
    p95: field('p95'),
    p99: field('p99'),
    max: field('max'),
  };
}

function threshold(value: unknown, path: string): ThresholdResult {
  const o = object(value, path);
  return { metric: string(o.metric, `${path}.metric`), expression: string(o.expression, `${path}.expression`), ok: boolean(o.ok, `${path}.ok`) };
}

function target(value: unknown, path: string, expected: TargetResult['target']): TargetResult {
  const o = object(value, path);
  const s = object(o.series, `${path}.series`);
  const outcomes = object(o.outcomes, `${path}.outcomes`);
  return {
    target: expected,
    requestRate: number(o.requestRate, `${path}.requestRate`),
    latency: latency(o.latency, `${path}.latency`),
    series: {
      requestRate: series(s.requestRate, `${path}.series.requestRate`),
      latencyP50: series(s.latencyP50, `${path}.series.latencyP50`),
      latencyP95: series(s.latencyP95, `${path}.series.latencyP95`),
      latencyP99: series(s.latencyP99, `${path}.series.latencyP99`),
    },
    outcomes: Object.fromEntries(Object.entries(outcomes).map(([k, v]) => [k, number(v, `${path}.outcomes.${k}`)])),
    thresholds: list(o.thresholds ?? [], `${path}.thresholds`).map((t, i) => threshold(t, `${path}.thresholds[${i}]`)),
    k6Summary: o.k6Summary,
  };
}

function server(value: unknown, path: string): ServerFigures {
  const o = object(value, path);
  return {
    allocationLatencyHistogram: buckets(o.allocationLatencyHistogram ?? [], `${path}.allocationLatencyHistogram`),
    eventsCommitted: number(o.eventsCommitted, `${path}.eventsCommitted`),
    cpuSeconds: number(o.cpuSeconds, `${path}.cpuSeconds`),
    memory: series(o.memory ?? [], `${path}.memory`),
  };
}

function fleetSample(value: unknown, path: string): FleetSample {
  const o = object(value, path);
  return {
    t: number(o.t, `${path}.t`),
    replicas: number(o.replicas, `${path}.replicas`),
    ready: number(o.ready, `${path}.ready`),
    allocated: number(o.allocated, `${path}.allocated`),
  };
}

function remote(value: unknown, path: string): RemoteRun {
  const o = object(value, path);
  const management = o.fleetManagement;
  if (management !== 'created' && management !== 'assumed') fail(`${path}.fleetManagement`, '"created" or "assumed"', management);
  return {
    allocator: string(o.allocator, `${path}.allocator`),
    namespace: string(o.namespace, `${path}.namespace`),
    fleet: string(o.fleet, `${path}.fleet`),
    fleetManagement: management,
  };
}

function otherPrograms(value: unknown, path: string): OtherPrograms {
  const o = object(value, path);
  return {
    cores: number(o.cores, `${path}.cores`),
    fleetsim: number(o.fleetsim, `${path}.fleetsim`),
    ...(o.baseline !== undefined && o.baseline !== null ? { baseline: number(o.baseline, `${path}.baseline`) } : {}),
  };
}

function optionValue(value: unknown, path: string): string | number | boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  fail(path, 'a string, number or boolean', value);
}

/** Checks parsed `run.json` content and returns it as `RunData`; `source` names it in errors. */
export function parseRun(value: unknown, source = 'run.json'): RunData {
  const o = object(value, source);
  if (o.version !== 1) throw new RunFileError(`${source}: schema version ${String(o.version)} is not one this renderer reads (1)`);
  const options = object(o.options ?? {}, `${source}.options`);
  return {
    version: 1,
    scenario: string(o.scenario, `${source}.scenario`),
    startedAt: string(o.startedAt, `${source}.startedAt`),
    durationSeconds: number(o.durationSeconds, `${source}.durationSeconds`),
    options: Object.fromEntries(Object.entries(options).map(([k, v]) => [k, optionValue(v, `${source}.options.${k}`)])),
    fleetsim: target(o.fleetsim, `${source}.fleetsim`, 'fleetsim'),
    ...(o.baseline !== undefined && o.baseline !== null ? { baseline: target(o.baseline, `${source}.baseline`, 'baseline') } : {}),
    ...(typeof o.baselineRatio === 'number' ? { baselineRatio: o.baselineRatio } : {}),
    ...(o.remote !== undefined && o.remote !== null ? { remote: remote(o.remote, `${source}.remote`) } : {}),
    ...(o.server !== undefined && o.server !== null ? { server: server(o.server, `${source}.server`) } : {}),
    fleet: list(o.fleet ?? [], `${source}.fleet`).map((s, i) => fleetSample(s, `${source}.fleet[${i}]`)),
    ...(o.otherPrograms !== undefined && o.otherPrograms !== null ? { otherPrograms: otherPrograms(o.otherPrograms, `${source}.otherPrograms`) } : {}),
    ...(o.watchDelivery !== undefined && o.watchDelivery !== null
      ? {
          watchDelivery: {
            ...latency(o.watchDelivery, `${source}.watchDelivery`),
            histogram: buckets(object(o.watchDelivery, `${source}.watchDelivery`).histogram ?? [], `${source}.watchDelivery.histogram`),
          },
        }
      : {}),
    ok: boolean(o.ok, `${source}.ok`),
  };
}

/** A run's record holds its time series: larger than configuration, still bounded. */
const MAX_RUN_FILE_BYTES = 256 * 1024 * 1024;

/** Reads and checks `<dir>/run.json`. */
export async function readRun(dir: string): Promise<RunData> {
  const file = join(dir, 'run.json');
  let text: string;
  try {
    text = readInputFile(file, MAX_RUN_FILE_BYTES);
  } catch (error) {
    throw new RunFileError(`cannot read ${file}: ${whyUnreadable(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RunFileError(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseRun(value, file);
}

/**
 * Histogram buckets as counts per bucket, ascending by upper bound. `RunData` does not say whether
 * counts are per bucket or cumulative (Prometheus style); when the total is known and the counts
 * only make sense as cumulative (never decreasing, the last equal to the total, the sum above it),
 * they are taken as cumulative and differenced.
 */
export function bucketCounts(histogram: ReadonlyArray<{ le: number; count: number }>, total?: number): Bucket[] {
  const sorted = [...histogram].sort((a, b) => a.le - b.le);
  const counts = sorted.map((b) => b.count);
  const sum = counts.reduce((a, b) => a + b, 0);
  const cumulative =
    total !== undefined &&
    Number.isFinite(total) &&
    counts.length > 1 &&
    counts.every((c, i) => i === 0 || c >= counts[i - 1]!) &&
    counts[counts.length - 1] === total &&
    sum > total;
  return sorted.map((b, i) => ({ le: b.le, count: cumulative && i > 0 ? b.count - sorted[i - 1]!.count : b.count }));
}
