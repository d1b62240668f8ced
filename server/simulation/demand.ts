import { parse as parseCsv } from 'csv-parse/sync';
import type { SeededRandom } from '../clock.js';
import { readInputFile, whyUnreadable } from '../input-file.js';
import { parseRfc3339 } from '../kinds/fleetautoscaler/schedule.js';
import { type FieldPath, type Fields, FieldError, SCENARIO_LIMITS, ScenarioError, countText, durationAt, durationText, listAt, numberAt, objectAt, onlyKnown, stringAt } from './fields.js';
import { type DemandTrace, recordedDemand } from './recorded-demand.js';

/**
 * When players ask for a game server: a rate curve (allocations per second over the run) turned
 * into arrival times by a seeded Poisson process, or the timestamps of a CSV taken from
 * production logs, replayed as they are.
 *
 *   { type: constant, rate: 10 }
 *   { type: steps, steps: [{ at: 0h, rate: 5 }, { at: 6h, rate: 20 }] }
 *   { type: diurnal, min: 3, peak: 50, peakAt: 20h }            # a day's cosine, peak in the evening
 *   { type: spikes, base: 1, spikes: [{ at: 2h, rate: 80, rampUp: 10m, hold: 1h, decay: 3h }] }
 *   { type: csv, file: arrivals.csv, column: timestamp }        # one arrival per row
 *   { type: recording, file: out.db }                            # the allocations a recorded cluster made
 */
export interface Demand {
  /** The arrival times in ms after the start, in order, up to `durationMs`. */
  arrivals(rng: SeededRandom, durationMs: number): Iterator<number>;
  readonly text: string;
  /** A recorded trace: what each arrival, in order, did (server/simulation/recorded-demand.ts). */
  readonly trace?: DemandTrace;
}

interface Curve {
  rateAt(ms: number): number;
  /** An upper bound of the rate, for thinning. */
  max: number;
  /** The field that sets `max`, for an error. */
  maxAt: FieldPath;
  text: string;
}

/** Arrivals of a non-homogeneous Poisson process by thinning (Lewis and Shedler). */
function* poissonArrivals(curve: Curve, rng: SeededRandom, durationMs: number): Generator<number> {
  if (curve.max <= 0) return;
  const meanGapMs = 1000 / curve.max;
  let t = 0;
  for (;;) {
    t += -meanGapMs * Math.log(1 - rng.next());
    if (t >= durationMs) return;
    if (rng.next() * curve.max < curve.rateAt(t)) yield t;
  }
}

/** Thinning draws `max` arrivals a second over the whole run, whatever the curve keeps: bounded so the run ends. */
function curveDemand(curve: Curve, durationMs: number): Demand {
  const drawn = (curve.max * durationMs) / 1000;
  if (drawn > SCENARIO_LIMITS.arrivals) {
    throw new FieldError(curve.maxAt, `${curve.max}/s for ${durationText(durationMs)} is up to ${countText(drawn)} arrivals; a run takes at most ${countText(SCENARIO_LIMITS.arrivals)} (lower the rate or the duration)`);
  }
  return { arrivals: (rng, durationMs) => poissonArrivals(curve, rng, durationMs), text: curve.text };
}

const rate = (spec: Fields, key: string, path: FieldPath) => numberAt(spec[key], [...path, key], { min: 0 });

function constantCurve(spec: Fields, path: FieldPath): Curve {
  onlyKnown(spec, ['type', 'rate'], path);
  const r = rate(spec, 'rate', path);
  return { rateAt: () => r, max: r, maxAt: [...path, 'rate'], text: `constant ${r}/s` };
}

function stepsCurve(spec: Fields, path: FieldPath, durationMs: number): Curve {
  onlyKnown(spec, ['type', 'steps'], path);
  const steps = listAt(spec.steps, [...path, 'steps']).map((raw, i) => {
    const at = [...path, 'steps', i];
    const step = objectAt(raw, at);
    onlyKnown(step, ['at', 'rate'], at);
    return { atMs: durationAt(step.at, [...at, 'at']), rate: rate(step, 'rate', at) };
  });
  if (steps.length === 0) throw new FieldError([...path, 'steps'], 'needs at least one step');
  steps.forEach((step, i) => {
    if (i > 0 && step.atMs <= steps[i - 1]!.atMs) throw new FieldError([...path, 'steps', i, 'at'], 'steps must be in increasing order of time');
    if (step.atMs >= durationMs) throw new FieldError([...path, 'steps', i, 'at'], 'is at or after the end of the run');
  });
  return {
    rateAt: (ms) => {
      let r = 0;
      for (const step of steps) if (step.atMs <= ms) r = step.rate;
      return r;
    },
    max: Math.max(...steps.map((s) => s.rate)),
    maxAt: [...path, 'steps', steps.reduce((top, s, i) => (s.rate > steps[top]!.rate ? i : top), 0), 'rate'],
    text: `${steps.length} steps`,
  };
}

function diurnalCurve(spec: Fields, path: FieldPath): Curve {
  onlyKnown(spec, ['type', 'min', 'peak', 'peakAt', 'period'], path);
  const min = rate(spec, 'min', path);
  const peak = rate(spec, 'peak', path);
  if (peak < min) throw new FieldError([...path, 'peak'], `must not be below min (${min})`);
  const peakAtMs = spec.peakAt === undefined ? 20 * 3_600_000 : durationAt(spec.peakAt, [...path, 'peakAt']);
  const periodMs = spec.period === undefined ? 24 * 3_600_000 : durationAt(spec.period, [...path, 'period'], { positive: true });
  if (peakAtMs >= periodMs) throw new FieldError([...path, 'peakAt'], 'must fall within the period');
  return {
    rateAt: (ms) => min + ((peak - min) * (1 + Math.cos((2 * Math.PI * (ms - peakAtMs)) / periodMs))) / 2,
    max: peak,
    maxAt: [...path, 'peak'],
    text: `diurnal ${min}–${peak}/s, peak at ${String(spec.peakAt ?? '20h')}`,
  };
}

function spikesCurve(spec: Fields, path: FieldPath, durationMs: number): Curve {
  onlyKnown(spec, ['type', 'base', 'spikes'], path);
  const base = rate(spec, 'base', path);
  const spikes = listAt(spec.spikes, [...path, 'spikes']).map((raw, i) => {
    const at = [...path, 'spikes', i];
    const spike = objectAt(raw, at);
    onlyKnown(spike, ['at', 'rate', 'rampUp', 'hold', 'decay'], at);
    const optional = (key: string) => (spike[key] === undefined ? 0 : durationAt(spike[key], [...at, key]));
    const startMs = durationAt(spike.at, [...at, 'at']);
    if (startMs >= durationMs) throw new FieldError([...at, 'at'], 'is at or after the end of the run');
    return { startMs, rate: rate(spike, 'rate', at), rampMs: optional('rampUp'), holdMs: optional('hold'), decayMs: optional('decay') };
  });
  if (spikes.length === 0) throw new FieldError([...path, 'spikes'], 'needs at least one spike');
  return {
    // Each spike adds to the base: a linear rise, a plateau, then an exponential decay.
    rateAt: (ms) => {
      let r = base;
      for (const s of spikes) {
        const t = ms - s.startMs;
        if (t < 0) continue;
        if (t < s.rampMs) r += (s.rate * t) / s.rampMs;
        else if (t < s.rampMs + s.holdMs) r += s.rate;
        else if (s.decayMs > 0) r += s.rate * Math.exp(-(t - s.rampMs - s.holdMs) / s.decayMs);
      }
      return r;
    },
    max: base + spikes.reduce((sum, s) => sum + s.rate, 0),
    maxAt: [...path, 'spikes'],
    text: `base ${base}/s with ${spikes.length} spike${spikes.length === 1 ? '' : 's'}`,
  };
}

/** Seconds since the start, or an RFC 3339 time. */
function timestampMs(text: string, startMs: number): number | undefined {
  if (/^\s*[+-]?\d+(\.\d+)?\s*$/.test(text)) return Number(text) * 1000;
  const ms = parseRfc3339(text.trim());
  return ms === undefined ? undefined : ms - startMs;
}

/** A CSV of arrivals may be larger than a file of configuration: about six million timestamps. */
const MAX_CSV_BYTES = 64 * 1024 * 1024;

/** A CSV of arrival timestamps (a header row naming the column is optional); `dir` resolves its path. */
function csvDemand(spec: Fields, path: FieldPath, context: DemandContext): Demand {
  onlyKnown(spec, ['type', 'file', 'column'], path);
  const file = context.resolve(stringAt(spec.file, [...path, 'file']));
  let text: string;
  try {
    text = readInputFile(file, MAX_CSV_BYTES);
  } catch (error) {
    throw new FieldError([...path, 'file'], `cannot read ${file}: ${whyUnreadable(error)}`);
  }
  let rows: Array<{ record: string[]; info: { lines: number } }>;
  try {
    rows = parseCsv(text, { info: true, skip_empty_lines: true, comment: '#', relax_column_count: true, trim: true }) as unknown as typeof rows;
  } catch (error) {
    throw new ScenarioError(`${file}: ${(error as Error).message}`);
  }
  const wanted = spec.column === undefined ? undefined : stringAt(spec.column, [...path, 'column']);
  let column = 0;
  const first = rows[0]?.record;
  if (first && timestampMs(first[0] ?? '', context.startMs) === undefined && first.every((cell) => /^[A-Za-z_][\w .-]*$/.test(cell))) {
    rows = rows.slice(1); // a header
    if (wanted !== undefined) {
      column = first.indexOf(wanted);
      if (column < 0) throw new FieldError([...path, 'column'], `${file} has no column "${wanted}" (it has ${first.join(', ')})`);
    }
  } else if (wanted !== undefined) {
    throw new FieldError([...path, 'column'], `${file} has no header row to find "${wanted}" in`);
  }
  const times: number[] = [];
  let outside = 0;
  for (const { record, info } of rows) {
    const cell = record[column] ?? '';
    const ms = timestampMs(cell, context.startMs);
    if (ms === undefined) throw new ScenarioError(`${file}:${info.lines}: "${cell}" is not a timestamp (RFC 3339, or seconds since the start)`);
    if (ms < 0 || ms >= context.durationMs) outside++;
    else times.push(ms);
  }
  if (times.length === 0) throw new ScenarioError(`${file}: no timestamp falls within the run (${rows.length} rows; start ${new Date(context.startMs).toISOString()})`);
  times.sort((a, b) => a - b);
  return {
    arrivals: () => times[Symbol.iterator](),
    text: `${times.length} arrivals from ${file}${outside ? ` (${outside} rows outside the run left out)` : ''}`,
  };
}

export interface DemandContext {
  startMs: number;
  durationMs: number;
  /** A path written in the scenario, resolved against the scenario's folder. */
  resolve(path: string): string;
}

export function parseDemand(value: unknown, path: FieldPath, context: DemandContext): Demand {
  const spec = objectAt(value, path);
  const type = stringAt(spec.type, [...path, 'type']);
  switch (type) {
    case 'constant':
      return curveDemand(constantCurve(spec, path), context.durationMs);
    case 'steps':
      return curveDemand(stepsCurve(spec, path, context.durationMs), context.durationMs);
    case 'diurnal':
      return curveDemand(diurnalCurve(spec, path), context.durationMs);
    case 'spikes':
      return curveDemand(spikesCurve(spec, path, context.durationMs), context.durationMs);
    case 'csv':
      return csvDemand(spec, path, context);
    case 'recording':
      return recordedDemand(spec, path, context);
    default:
      throw new FieldError([...path, 'type'], `"${type}" is not one of constant, steps, diurnal, spikes, csv, recording`);
  }
}
