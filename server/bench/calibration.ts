import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventLog, type NewEvent, SCHEMA_VERSION } from '../log/event-log.js';

/**
 * The machine's speed, measured in the same run as a benchmark so that its targets can be stated
 * as ratios to it: a figure that follows the machine (a slower or busier one) keeps its ratio,
 * and only a change of the code moves it.
 *
 * Two measures: raw batched inserts into the event log's table (SQLite, the JSON of a payload, the
 * file system: what most of fleetsim's work leans on), and a fixed CPU-bound loop (the core
 * alone). Targets are ratios to the inserts, the measure recorded beside the figures of earlier
 * days; the loop tells whether a slow run was the core or the rest.
 */

export interface Calibration {
  /** Raw inserts into the events table, 1,000 rows a transaction: rows per second. */
  insertsPerSecond: number;
  /** Iterations of `cpuLoop` per second. */
  cpuLoopsPerSecond: number;
}

export type CalibrationName = 'inserts';

/** The rows of one insert round: bench:log's event count, so the figure compares with its raw inserts. */
const INSERT_ROWS = 200_000;
/** Group commit's mean transaction with bench:log's 1,000 callers. */
const INSERT_BATCH = 1000;
const LOOP_ITERATIONS = 50_000_000;
const ROUNDS = 3;

/** A row as a busy sidecar would append it. */
export function sampleEvent(i: number): NewEvent {
  return {
    type: 'GameServerCounterSet',
    kind: 'GameServer',
    namespace: 'default',
    name: `fleet-abcde-${i % 1000}`,
    payload: { counter: 'rooms', count: i % 10, capacity: 10 },
  };
}

/** An event log in a temporary folder, and what removes it. */
export function temporaryLog(): { log: EventLog; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-bench-'));
  const log = new EventLog(join(dir, 'events.db'));
  return {
    log,
    cleanup: () => {
      log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `rows` rows inserted into a fresh log's table in transactions of `batchSize`, with no log around them: rows per second. */
export function rawInsertRate(rows: number, batchSize: number): number {
  const { log, cleanup } = temporaryLog();
  try {
    const insert = log.database.prepare(
      'INSERT INTO events (seq, time, type, kind, namespace, name, payload, schema_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const insertMany = log.database.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const e = sampleEvent(i);
        insert.run(i + 1, 0, e.type, e.kind, e.namespace, e.name, JSON.stringify(e.payload), SCHEMA_VERSION);
      }
    });
    const start = process.hrtime.bigint();
    for (let from = 0; from < rows; from += batchSize) insertMany(from, Math.min(rows, from + batchSize));
    return rows / (Number(process.hrtime.bigint() - start) / 1e9);
  } finally {
    cleanup();
  }
}

/** Integer work with no memory traffic (xorshift); the sum is returned so that none of it can be left out. */
export function cpuLoop(iterations: number): number {
  let x = 2463534242;
  let sum = 0;
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    sum = (sum + ((x >>> 0) % 1000)) | 0;
  }
  return sum;
}

function cpuLoopRate(): number {
  const start = process.hrtime.bigint();
  if (cpuLoop(LOOP_ITERATIONS) === 0.5) throw new Error('unreachable: keeps the loop from being dropped');
  return LOOP_ITERATIONS / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Each measure's best of three rounds: on a shared machine a round that another program slowed says nothing about the machine. */
export function measureCalibration(): Calibration {
  let inserts = 0;
  let loops = 0;
  for (let round = 0; round < ROUNDS; round++) {
    inserts = Math.max(inserts, rawInsertRate(INSERT_ROWS, INSERT_BATCH));
    loops = Math.max(loops, cpuLoopRate());
  }
  return { insertsPerSecond: inserts, cpuLoopsPerSecond: loops };
}

/** The calibration of a run measured at its start and its end: the mean of both. */
export function meanCalibration(samples: Calibration[]): Calibration {
  if (samples.length === 0) throw new Error('no calibration measured');
  const mean = (pick: (c: Calibration) => number) => samples.reduce((sum, c) => sum + pick(c), 0) / samples.length;
  return { insertsPerSecond: mean((c) => c.insertsPerSecond), cpuLoopsPerSecond: mean((c) => c.cpuLoopsPerSecond) };
}

// -- targets ------------------------------------------------------------------------------------

/**
 * What a figure must reach. Absolute (in the figure's own unit) for what does not follow the
 * machine's speed (bytes, ratios measured within the run); otherwise relative to the run's
 * calibration: a rate divided by it, a duration (seconds) multiplied by it, so either is a pure
 * number that a faster or slower machine leaves the same.
 */
export interface Target {
  /** At least, at most, or strictly more than `value`. */
  bound: 'min' | 'max' | 'above';
  value: number;
  relativeTo?: { calibration: CalibrationName; figure: 'rate' | 'duration' };
  /** Where the bound comes from, for the record and the docs (an issue, a figure of a reference day). */
  basis?: string;
}

export interface Verdict {
  /** The figure as the target compares it: the figure itself, or its ratio to the calibration. */
  compared: number;
  /** The target in the figure's own unit on the machine of this run. */
  bound: number;
  pass: boolean;
}

function calibrationValue(calibration: Calibration, name: CalibrationName): number {
  if (name === 'inserts') return calibration.insertsPerSecond;
  throw new Error(`unknown calibration ${String(name)}`);
}

export function judge(value: number, target: Target, calibration: Calibration): Verdict {
  let compared = value;
  let bound = target.value;
  if (target.relativeTo) {
    const scale = calibrationValue(calibration, target.relativeTo.calibration);
    if (!(scale > 0)) throw new Error(`the calibration's ${target.relativeTo.calibration} is ${scale}: nothing to compare with`);
    if (target.relativeTo.figure === 'rate') {
      compared = value / scale;
      bound = target.value * scale;
    } else {
      compared = value * scale;
      bound = target.value / scale;
    }
  }
  const pass = target.bound === 'min' ? compared >= target.value : target.bound === 'max' ? compared <= target.value : compared > target.value;
  return { compared, bound, pass };
}

/**
 * A rate's target as a ratio to raw inserts, from an absolute target and the inserts of the days
 * it was set on (figure / inserts, to three significant digits, rounded so it is not stricter).
 */
export function rateTarget(absolute: number, referenceInserts: number, basis: string): Target {
  return { bound: 'min', value: roundTo3(absolute / referenceInserts, 'down'), relativeTo: { calibration: 'inserts', figure: 'rate' }, basis };
}

/** A duration's target as seconds × raw inserts/s (the rows the machine inserts in that time), from an absolute bound and the reference inserts. */
export function durationTarget(seconds: number, referenceInserts: number, basis: string): Target {
  return { bound: 'max', value: roundTo3(seconds * referenceInserts, 'up'), relativeTo: { calibration: 'inserts', figure: 'duration' }, basis };
}

function roundTo3(value: number, way: 'up' | 'down'): number {
  const unit = 10 ** (Math.floor(Math.log10(Math.abs(value))) - 2);
  const units = way === 'up' ? Math.ceil(value / unit - 1e-9) : Math.floor(value / unit + 1e-9);
  // Rounded again so the bound prints as written (0.34, not 0.34000000000000002).
  return Number((units * unit).toPrecision(3));
}

/** Raw inserts per second on the days the absolute targets were met (bench:log, README of those days): the reference the ratios are derived from. */
export const REFERENCE_INSERTS_PER_SECOND = 440_000;
