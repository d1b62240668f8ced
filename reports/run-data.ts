/**
 * What one load-test run records, written by the harness (`loadtest/`) as `run.json` in the run's
 * folder and read by the report renderer (`reports/`). One definition, so the two stay in step.
 */

/** A value over time: [seconds since the run started, value]. */
export type Series = Array<[number, number]>;

export interface LatencySummary {
  count: number;
  /** Milliseconds. */
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

export interface ThresholdResult {
  metric: string;
  expression: string;
  ok: boolean;
}

/** One side of a run: fleetsim, or the baseline server answering canned responses. */
export interface TargetResult {
  target: 'fleetsim' | 'baseline';
  /** Requests per second completed over the measured part of the run. */
  requestRate: number;
  /** Request latency (k6 http_req_duration, or the scenario's own trend). */
  latency: LatencySummary;
  /** Per-second series from k6's JSON output. */
  series: {
    requestRate: Series;
    latencyP50: Series;
    latencyP95: Series;
    latencyP99: Series;
  };
  /** Allocation outcomes, by status: Allocated, UnAllocated, Contention, error. */
  outcomes: Record<string, number>;
  thresholds: ThresholdResult[];
  /** k6's own end-of-test summary (`--summary-export`), kept whole. */
  k6Summary: unknown;
}

export interface ServerFigures {
  /** Allocation latency measured inside the server (ms), as a histogram: upper bound -> count. */
  allocationLatencyHistogram: Array<{ le: number; count: number }>;
  eventsCommitted: number;
  /** Process CPU seconds used during the run, and samples of resident memory (bytes). */
  cpuSeconds: number;
  memory: Series;
}

export interface FleetSample {
  /** Seconds since the run started. */
  t: number;
  replicas: number;
  ready: number;
  allocated: number;
}

/** A run against another cluster's allocator service (`fleetsim bench --target-allocator`). */
export interface RemoteRun {
  /** https://HOST:PORT */
  allocator: string;
  namespace: string;
  fleet: string;
  /**
   * created: fleetsim created the fleet through --kubeconfig, followed its status and deleted it;
   * assumed: no --kubeconfig, so the fleet was expected to exist and its status was not read.
   */
  fleetManagement: 'created' | 'assumed';
}

/**
 * CPU time other programs on the machine took while each side ran: they take CPU from the server
 * and k6 alike, so a run they took much from measured the machine's business, not fleetsim.
 */
export interface OtherPrograms {
  /** The machine's cores. */
  cores: number;
  /** CPU seconds used by everything but the server and k6 during the fleetsim (or remote) run. */
  fleetsim: number;
  /** The same during the baseline's run, when one ran. */
  baseline?: number;
}

export interface RunData {
  /** Schema of this file. */
  version: 1;
  scenario: string;
  startedAt: string;
  durationSeconds: number;
  options: Record<string, string | number | boolean>;
  /** The measured side: the local fleetsim, or with `remote` the remote cluster. */
  fleetsim: TargetResult;
  baseline?: TargetResult;
  /** Set when the run went to another cluster: `server` figures are then absent. */
  remote?: RemoteRun;
  /** fleetsim rate / baseline rate, when a baseline ran. */
  baselineRatio?: number;
  server?: ServerFigures;
  /** Fleet size over time, read from the event log (remote: from the cluster's API). */
  fleet: FleetSample[];
  /** What other programs took from the machine meanwhile (absent in runs recorded before it was). */
  otherPrograms?: OtherPrograms;
  /** Watch delivery latency (ms) per change, for the watch fan-out scenario. */
  watchDelivery?: LatencySummary & { histogram: Array<{ le: number; count: number }> };
  ok: boolean;
}
