import type { SeededRandom } from '../clock.js';
import { type FieldPath, FieldError, durationAt, listAt, objectAt, onlyKnown, stringAt } from './fields.js';

/**
 * How long a session lasts, drawn once per arriving player from the scenario's own random stream:
 *
 *   { distribution: fixed, value: 20m }
 *   { distribution: exponential, mean: 20m }
 *   { distribution: uniform, min: 10m, max: 30m }
 *   { distribution: lognormal, median: 18m, p95: 45m }   # the long right tail of real sessions
 *   { values: [12m, 20m, 25m] }                         # a list: each session takes one at random
 */
export interface Distribution {
  /** A draw in milliseconds. */
  draw(rng: SeededRandom): number;
  /** The mean in milliseconds, for the report. */
  readonly meanMs: number;
  /** How the scenario wrote it, for the report. */
  readonly text: string;
}

/** z of the 95th percentile of the standard normal. */
const Z95 = 1.6448536269514722;

function standardNormal(rng: SeededRandom): number {
  // Box–Muller; 1 - next() keeps the logarithm finite.
  return Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
}

export function parseDistribution(value: unknown, path: FieldPath): Distribution {
  const spec = objectAt(value, path);
  if (spec.values !== undefined) {
    onlyKnown(spec, ['values'], path);
    const values = listAt(spec.values, [...path, 'values']).map((v, i) => durationAt(v, [...path, 'values', i], { positive: true }));
    if (values.length === 0) throw new FieldError([...path, 'values'], 'needs at least one session length');
    const meanMs = values.reduce((a, b) => a + b, 0) / values.length;
    return { draw: (rng) => values[rng.int(values.length)]!, meanMs, text: `one of ${values.length} listed lengths` };
  }
  const kind = stringAt(spec.distribution, [...path, 'distribution']);
  const at = (key: string) => durationAt(spec[key], [...path, key], { positive: true });
  switch (kind) {
    case 'fixed': {
      onlyKnown(spec, ['distribution', 'value'], path);
      const ms = at('value');
      return { draw: () => ms, meanMs: ms, text: `fixed ${spec.value}` };
    }
    case 'exponential': {
      onlyKnown(spec, ['distribution', 'mean'], path);
      const mean = at('mean');
      return { draw: (rng) => -mean * Math.log(1 - rng.next()), meanMs: mean, text: `exponential, mean ${spec.mean}` };
    }
    case 'uniform': {
      onlyKnown(spec, ['distribution', 'min', 'max'], path);
      const min = at('min');
      const max = at('max');
      if (max < min) throw new FieldError([...path, 'max'], 'must not be less than min');
      return { draw: (rng) => min + rng.next() * (max - min), meanMs: (min + max) / 2, text: `uniform ${spec.min}–${spec.max}` };
    }
    case 'lognormal': {
      onlyKnown(spec, ['distribution', 'median', 'p95'], path);
      const median = at('median');
      const p95 = at('p95');
      if (p95 <= median) throw new FieldError([...path, 'p95'], 'must be longer than the median');
      const mu = Math.log(median);
      const sigma = (Math.log(p95) - mu) / Z95;
      return {
        draw: (rng) => Math.exp(mu + sigma * standardNormal(rng)),
        meanMs: Math.exp(mu + (sigma * sigma) / 2),
        text: `lognormal, median ${spec.median}, p95 ${spec.p95}`,
      };
    }
    default:
      throw new FieldError([...path, 'distribution'], `"${kind}" is not one of fixed, exponential, uniform, lognormal (or give values: [...])`);
  }
}
