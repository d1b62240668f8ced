/**
 * A realistic `RunData` built from a seed: an allocation burst against fleetsim and the baseline,
 * with per-second series, outcomes, thresholds, server figures, fleet samples and watch delivery.
 * The report tests render it.
 */
import type { LatencySummary, RunData, Series, TargetResult } from './run-data.js';

export interface SampleOptions {
  scenario?: string;
  seed?: number;
  durationSeconds?: number;
  /** Scales fleetsim's request rate (1 = about 1,150 requests/s). */
  rateScale?: number;
  /** Scales fleetsim's latencies. */
  latencyScale?: number;
  baseline?: boolean;
  watch?: boolean;
}

/** Deterministic numbers in [0, 1): a linear congruential generator. */
function random(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function round(value: number, decimals = 2): number {
  return Number(value.toFixed(decimals));
}

function latencySummary(count: number, p50: number, p95: number, p99: number): LatencySummary {
  return {
    count,
    min: round(p50 * 0.18),
    mean: round(p50 * 1.25),
    p50: round(p50),
    p90: round(p50 + (p95 - p50) * 0.7),
    p95: round(p95),
    p99: round(p99),
    max: round(p99 * 3.4),
  };
}

interface TargetShape {
  target: TargetResult['target'];
  rate: number;
  p50: number;
  p95: number;
  p99: number;
  /** Seconds of a slowdown (a fleet scale-up under load, say): [start, end). */
  spike?: [number, number];
  outcomes: Record<string, number>;
  thresholds: TargetResult['thresholds'];
}

function target(shape: TargetShape, duration: number, next: () => number): TargetResult {
  const series = { requestRate: [] as Series, latencyP50: [] as Series, latencyP95: [] as Series, latencyP99: [] as Series };
  let total = 0;
  for (let t = 1; t <= duration; t++) {
    const warm = Math.min(1, t / 15);
    const inSpike = shape.spike !== undefined && t >= shape.spike[0] && t < shape.spike[1];
    const slow = inSpike ? 3.2 : 1;
    const noise = () => 0.9 + next() * 0.2;
    const rate = shape.rate * warm * (inSpike ? 0.62 : 1) * noise();
    total += rate;
    series.requestRate.push([t, round(rate, 1)]);
    series.latencyP50.push([t, round(shape.p50 * slow * noise() * (1.4 - 0.4 * warm))]);
    series.latencyP95.push([t, round(shape.p95 * slow * noise() * (1.5 - 0.5 * warm))]);
    series.latencyP99.push([t, round(shape.p99 * slow * (0.85 + next() * 0.4) * (1.6 - 0.6 * warm))]);
  }
  const count = Math.round(total);
  return {
    target: shape.target,
    requestRate: round(total / duration, 1),
    latency: latencySummary(count, shape.p50, shape.p95 * 1.08, shape.p99 * 1.9),
    series,
    outcomes: shape.outcomes,
    thresholds: shape.thresholds,
    k6Summary: { metrics: { http_reqs: { count, rate: round(total / duration, 1) } } },
  };
}

export function sampleRun(options: SampleOptions = {}): RunData {
  const duration = options.durationSeconds ?? 180;
  const next = random(options.seed ?? 1);
  const rateScale = options.rateScale ?? 1;
  const latencyScale = options.latencyScale ?? 1;
  const spike: [number, number] = [Math.round(duration * 0.55), Math.round(duration * 0.55) + 12];

  const fleetsim = target(
    {
      target: 'fleetsim',
      rate: 1150 * rateScale,
      p50: 3.1 * latencyScale,
      p95: 8.7 * latencyScale,
      p99: 17.5 * latencyScale,
      spike,
      outcomes: { Allocated: Math.round(186_420 * rateScale), UnAllocated: 1_240, Contention: 318, error: 12 },
      thresholds: [
        { metric: 'http_req_duration', expression: 'p(95)<25', ok: true },
        { metric: 'http_req_duration', expression: 'p(99)<60', ok: true },
        { metric: 'checks', expression: 'rate>0.99', ok: true },
        { metric: 'allocation_errors', expression: 'count<50', ok: true },
      ],
    },
    duration,
    next,
  );
  const baseline =
    options.baseline === false
      ? undefined
      : target(
          {
            target: 'baseline',
            rate: 1480,
            p50: 1.2,
            p95: 2.6,
            p99: 4.3,
            outcomes: { Allocated: 262_310 },
            thresholds: [{ metric: 'http_req_duration', expression: 'p(95)<25', ok: true }],
          },
          duration,
          next,
        );

  // The fleet autoscaler keeps a buffer of 50 Ready servers while allocations climb.
  const fleet: RunData['fleet'] = [];
  let replicas = 100;
  let allocated = 0;
  for (let t = 0; t <= duration; t += 2) {
    allocated = Math.min(allocated + Math.round((t < 15 ? 2 : 5.5) * rateScale * (0.8 + next() * 0.4)), 900);
    const wanted = allocated + 50;
    if (t % 10 === 0 && wanted > replicas) replicas = Math.ceil(wanted / 10) * 10;
    const starting = Math.max(0, Math.round((replicas - allocated - 50) * 0.4));
    fleet.push({ t, replicas, ready: Math.max(0, replicas - allocated - starting), allocated });
  }

  const memory: Series = [];
  for (let t = 0; t <= duration; t += 5) {
    const growth = 96 + 180 * (t / duration);
    const sawtooth = (t % 30) * 1.6;
    memory.push([t, Math.round((growth + sawtooth + next() * 6) * 2 ** 20)]);
  }

  const watchCounts = [1_840, 12_600, 21_950, 9_400, 2_210, 640, 118, 21, 3];
  const watchBounds = [0.5, 1, 2, 5, 10, 20, 50, 100, Infinity];
  const watchTotal = watchCounts.reduce((a, b) => a + b, 0);

  return {
    version: 1,
    scenario: options.scenario ?? 'allocate-burst',
    startedAt: '2025-03-01T14:05:09.000Z',
    durationSeconds: duration,
    options: { vus: 64, fleetReplicas: 100, autoscalerBuffer: 50, clock: 'real', allocatorModel: 'exact' },
    fleetsim,
    ...(baseline ? { baseline, baselineRatio: round(fleetsim.requestRate / baseline.requestRate, 3) } : {}),
    server: {
      allocationLatencyHistogram: [0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, Infinity].map((le, i) => ({
        le,
        count: Math.round([4_200, 31_800, 72_400, 51_300, 19_700, 6_100, 1_420, 380, 95, 25][i]! * rateScale),
      })),
      eventsCommitted: Math.round(1_612_345 * rateScale),
      cpuSeconds: round(97.3 * rateScale, 1),
      memory,
    },
    fleet,
    // A quiet machine: other programs took about 1 % of it.
    otherPrograms: { cores: 2, fleetsim: 3.4, ...(baseline ? { baseline: 2.9 } : {}) },
    ...(options.watch === false
      ? {}
      : {
          watchDelivery: {
            ...latencySummary(watchTotal, 1.6 * latencyScale, 6.8 * latencyScale, 14.2 * latencyScale),
            histogram: watchBounds.map((le, i) => ({ le, count: watchCounts[i]! })),
          },
        }),
    ok: true,
  };
}
