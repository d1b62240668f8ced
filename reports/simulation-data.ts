/**
 * What `fleetsim simulate` writes to `summary.json`: the figures of one run of a scenario, all
 * derived from simulated time, so the same scenario and seed give the same file byte for byte.
 * (How long the machine took is in `timing.json`, which differs run to run.)
 */

export interface WaitSummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** One value per sample of the run, `t` in seconds since its start (the sample's end). */
export interface SimulationSeries {
  t: number[];
  /** Players who asked, per second (mean over the sample). */
  arrivalsPerSecond: number[];
  allocatedPerSecond: number[];
  /** Players who gave up, per second. */
  failedPerSecond: number[];
  /** Allocation attempts answered UnAllocated, per second. */
  refusedPerSecond: number[];
  /** Wait from asking to allocated, of the allocations made in the sample (null: none). */
  waitP50Seconds: Array<number | null>;
  waitP99Seconds: Array<number | null>;
  /** Means over the sample. */
  readyGameServers: number[];
  allocatedGameServers: number[];
  gameServers: number[];
  /** The fleets' spec.replicas (what the autoscaler asked for), at the sample's end. */
  desiredReplicas: number[];
  nodes: number[];
  /** Spent so far, at the sample's end. */
  cost: number[];
  /** For a scenario whose sessions are rooms on a counter: rooms in use and rooms in all, means over the sample. */
  roomsInUse?: number[];
  roomsCapacity?: number[];
}

export interface ScaleDecision {
  /** Seconds since the start. */
  t: number;
  fleet: string;
  from: number;
  to: number;
}

export interface SimulationSummary {
  scenario: string;
  file: string;
  /** `bufferSize=10` for a run made by --vary; null otherwise. */
  variant: string | null;
  seed: number;
  start: string;
  durationSeconds: number;
  demand: string;
  sessions: string;
  featureGates: string;
  allocations: {
    requests: number;
    allocated: number;
    allocatedFirstTry: number;
    /** Players who gave up after the retry timeout. */
    failed: number;
    /** Still waiting when the run ended. */
    waiting: number;
    attempts: number;
    refusals: number;
    /** failed / (allocated + failed); null without requests. */
    failureRate: number | null;
  };
  waitSeconds: WaitSummary | null;
  gameServers: {
    peak: number;
    readyHours: number;
    allocatedHours: number;
    totalHours: number;
    /** Ready-but-idle hours / all GameServer hours. */
    idleShare: number | null;
  };
  rooms: { counter: string; inUseHours: number; capacityHours: number; idleShare: number | null } | null;
  nodes: { peak: number; min: number; nodeHours: number };
  cost: {
    currency: string;
    nodeHour: number;
    gameServerHour: number;
    nodes: number;
    gameServers: number;
    total: number;
    /** total / allocated; null without allocations. */
    perAllocation: number | null;
  };
  autoscaler: { scaleUps: number; scaleDowns: number; decisions: ScaleDecision[] };
  /** Events in the run's log. */
  events: number;
  series: SimulationSeries;
}

/** What the machine did: differs run to run, so kept out of summary.json. */
export interface SimulationTiming {
  wallSeconds: number;
  /** Simulated seconds per wall second. */
  speedup: number;
  peakRssBytes: number;
  peakHeapBytes: number;
}
