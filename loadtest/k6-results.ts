import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { LatencySummary, Series, ThresholdResult } from '../reports/run-data.js';
import type { MetricSelector } from './scenarios.js';
import { PerSecond, histogram, latencySummary } from './stats.js';

/**
 * Reading what k6 wrote: `--summary-export` (end-of-test totals and threshold results) and
 * `--out json` (one line per sample, read here into per-second series).
 */

/** The part of k6's `--summary-export` file the harness reads; the rest is kept as it is. */
export interface K6Summary {
  metrics: Record<string, Record<string, number | Record<string, boolean>> & { thresholds?: Record<string, boolean> }>;
  [field: string]: unknown;
}

export function readSummary(path: string): K6Summary {
  const summary = JSON.parse(readFileSync(path, 'utf8')) as K6Summary;
  if (typeof summary !== 'object' || summary === null || typeof summary.metrics !== 'object') throw new Error(`${path}: not a k6 summary export`);
  return summary;
}

/**
 * Threshold results. In `--summary-export`, each threshold maps to whether it was *crossed*:
 * `{"p(99)<50": true}` means the p99 was 50 or more.
 */
export function thresholdResults(summary: K6Summary): ThresholdResult[] {
  const results: ThresholdResult[] = [];
  for (const [metric, values] of Object.entries(summary.metrics)) {
    const thresholds = values.thresholds;
    if (!thresholds || typeof thresholds !== 'object') continue;
    for (const [expression, crossed] of Object.entries(thresholds)) results.push({ metric, expression, ok: crossed !== true });
  }
  return results.sort((a, b) => a.metric.localeCompare(b.metric) || a.expression.localeCompare(b.expression));
}

/** A Counter's total in the summary (0 when the metric never got a sample). */
export function counterTotal(summary: K6Summary, metric: string): number {
  const count = summary.metrics[metric]?.count;
  return typeof count === 'number' ? count : 0;
}

/** One sample line of k6's JSON output. */
interface PointLine {
  type: 'Point';
  metric: string;
  data: { time: string; value: number; tags?: Record<string, string> | null };
}

export interface SampleSeries {
  /** Selected request samples, per second since t0. */
  requests: PerSecond;
  /** Selected latency samples (ms), per second since t0. */
  latency: PerSecond;
  requestCount: number;
  firstRequestMs: number | undefined;
  lastRequestMs: number | undefined;
}

function selects(selector: MetricSelector, metric: string, tags: Record<string, string> | null | undefined): boolean {
  if (metric !== selector.metric) return false;
  if (!selector.endpoints) return true;
  const endpoint = tags?.endpoint;
  return endpoint !== undefined && selector.endpoints.includes(endpoint);
}

/**
 * Streams k6's JSON output once, keeping only the samples the two selectors pick. Lines are
 * filtered on their text before being parsed: a run writes a dozen lines per request.
 */
export async function readSamples(path: string, t0Ms: number, requests: MetricSelector, latency: MetricSelector): Promise<SampleSeries> {
  const result: SampleSeries = {
    requests: new PerSecond(t0Ms),
    latency: new PerSecond(t0Ms),
    requestCount: 0,
    firstRequestMs: undefined,
    lastRequestMs: undefined,
  };
  const wanted = [...new Set([requests.metric, latency.metric])].map((m) => `"metric":"${m}"`);
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    // Sample lines begin `{"metric":"<name>",`; the metric declarations begin `{"type":"Metric"`.
    if (!wanted.some((w) => line.startsWith(w, 1))) continue;
    let point: PointLine;
    try {
      point = JSON.parse(line) as PointLine;
    } catch {
      continue; // a line cut short when k6 was stopped
    }
    if (point.type !== 'Point') continue;
    const time = Date.parse(point.data.time);
    if (selects(requests, point.metric, point.data.tags)) {
      result.requests.add(time, point.data.value);
      result.requestCount++;
      if (result.firstRequestMs === undefined || time < result.firstRequestMs) result.firstRequestMs = time;
      if (result.lastRequestMs === undefined || time > result.lastRequestMs) result.lastRequestMs = time;
    }
    if (selects(latency, point.metric, point.data.tags)) result.latency.add(time, point.data.value);
  }
  return result;
}

export interface SeriesFigures {
  requestRateSeries: Series;
  latencyP50: Series;
  latencyP95: Series;
  latencyP99: Series;
  latency: LatencySummary;
  latencyHistogram: Array<{ le: number; count: number }>;
}

export function seriesFigures(samples: SampleSeries): SeriesFigures {
  const values = [...samples.latency.values()];
  return {
    // A request is one sample of value 1 (http_reqs, watch_delivered): the count per second is the rate.
    requestRateSeries: samples.requests.counts(),
    latencyP50: samples.latency.percentiles(50),
    latencyP95: samples.latency.percentiles(95),
    latencyP99: samples.latency.percentiles(99),
    latency: latencySummary(values),
    latencyHistogram: histogram(values),
  };
}
