import { readRecording } from '../history/recording.js';
import type { Distribution } from './distributions.js';
import { type FieldPath, type Fields, FieldError, onlyKnown, stringAt } from './fields.js';

/** For the i-th arrival of a recorded demand: where it was allocated from, how long it held its GameServer, and what the GameServer did then. */
export interface DemandTrace {
  /** `namespace/name` of the fleet. */
  fleets: readonly string[];
  /** Undefined: still held when the recording ended. */
  holdMs: ReadonlyArray<number | undefined>;
  ends: ReadonlyArray<'shutdown' | 'ready'>;
}

/** A Demand (server/simulation/demand.ts) with its trace. */
export interface RecordedDemand {
  arrivals(): Iterator<number>;
  readonly text: string;
  readonly trace: DemandTrace;
}

/**
 * `{ type: recording, file: out.db }`: the demand a recorded cluster served (`fleetsim record`),
 * replayed as it was — each allocation at its time (an offset from the recording's start), from
 * its fleet, holding its GameServer as long as it did and then shutting it down or giving it back
 * (Ready) as it did. A cluster keeps no trace of allocations it refused, so the demand is what was
 * served. Allocations still held when the recording ended hold to the run's end.
 */
export function recordedDemand(spec: Fields, path: FieldPath, context: { durationMs: number; resolve(path: string): string }): RecordedDemand {
  onlyKnown(spec, ['type', 'file'], path);
  const file = context.resolve(stringAt(spec.file, [...path, 'file']));
  let allocations;
  try {
    allocations = readRecording(file).allocations;
  } catch (error) {
    throw new FieldError([...path, 'file'], (error as Error).message);
  }
  const within = allocations.filter((a) => a.atMs < context.durationMs);
  const initial = within.filter((a) => a.initial).length;
  const times = within.map((a) => a.atMs);
  return {
    arrivals: () => times[Symbol.iterator](),
    text: `${within.length} allocations recorded in ${file}${initial ? ` (${initial} already made when it began)` : ''}`,
    trace: { fleets: within.map((a) => a.fleet), holdMs: within.map((a) => a.holdMs), ends: within.map((a) => a.end) },
  };
}

/** The recorded hold durations as a distribution: a draw is one of them (the run itself uses each arrival's own). */
export function recordedHolds(holds: ReadonlyArray<number | undefined>): Distribution {
  const ended = holds.filter((h): h is number => h !== undefined).sort((a, b) => a - b);
  const meanMs = ended.length ? ended.reduce((a, b) => a + b, 0) / ended.length : 0;
  const median = ended.length ? ended[Math.floor(ended.length / 2)]! : 0;
  return {
    draw: (rng) => (ended.length ? ended[rng.int(ended.length)]! : 0),
    meanMs,
    text: `as recorded: ${ended.length} sessions ended, median ${Math.round(median / 1000)} s${holds.length > ended.length ? `, ${holds.length - ended.length} still held at its end` : ''}`,
  };
}
