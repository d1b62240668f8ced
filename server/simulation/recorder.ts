import type { ScaleDecision, SimulationSeries, SimulationSummary, SimulationTiming, WaitSummary } from '../../reports/simulation-data.js';
import type { StoreFeeds, StoreReads } from '../runtime/store-ports.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import type { Scenario } from './scenario.js';

export interface SimulationResult {
  summary: SimulationSummary;
  timing: SimulationTiming;
}

interface FleetFigures {
  replicas?: number;
  readyReplicas?: number;
  allocatedReplicas?: number;
  counters?: Record<string, { count?: unknown; capacity?: unknown }>;
}

/** A growable list of numbers without boxing: a day can hold millions of waits. */
class Numbers {
  private data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/** The value at quantile q of sorted values (nearest rank). */
function quantile(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const round = (n: number, digits = 6) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Counts integrated over time (count × ms), for the whole run and for each sample. */
interface Tally {
  ready: number;
  allocated: number;
  gameServers: number;
  nodes: number;
  roomsInUse: number;
  roomsCapacity: number;
  ms: number;
}

const emptyTally = (): Tally => ({ ready: 0, allocated: 0, gameServers: 0, nodes: 0, roomsInUse: 0, roomsCapacity: 0, ms: 0 });

function addTo(tally: Tally, counts: Omit<Tally, 'ms'>, ms: number): void {
  tally.ready += counts.ready * ms;
  tally.allocated += counts.allocated * ms;
  tally.gameServers += counts.gameServers * ms;
  tally.nodes += counts.nodes * ms;
  tally.roomsInUse += counts.roomsInUse * ms;
  tally.roomsCapacity += counts.roomsCapacity * ms;
  tally.ms += ms;
}
const HOUR = 3_600_000;

/**
 * Gathers a run's figures as it goes: the players' outcomes as they happen, and the cluster's
 * counts (from the fleets' status, as Agones reports them, and the nodes) integrated over every
 * step, so GameServer-hours and node-hours are exact to the step.
 */
export class SimulationRecorder {
  private readonly series: SimulationSeries;
  private readonly waits = new Numbers();
  private readonly rooms: string | undefined;
  private lastStep: number;
  private sampleEnd: number;
  private peakRss = 0;
  private peakHeap = 0;
  // Totals.
  private requests = 0;
  private allocatedCount = 0;
  private firstTry = 0;
  private failed = 0;
  private attempts = 0;
  private refusals = 0;
  private readonly total = emptyTally();
  private peakGameServers = 0;
  private peakNodes = 0;
  private minNodes = Infinity;
  private readonly decisions: ScaleDecision[] = [];
  private readonly desired = new Map<string, number>();
  // The sample in progress.
  private sample = { arrivals: 0, allocated: 0, failed: 0, refused: 0, counts: emptyTally() };
  private sampleWaits: number[] = [];

  constructor(
    private readonly cluster: Pick<StoreReads, 'clock' | 'readModel'> & Pick<StoreFeeds, 'changesOf'>,
    private readonly scenario: Scenario,
  ) {
    this.rooms = scenario.sessions.end.type === 'counter' ? scenario.sessions.end.counter : undefined;
    this.series = {
      t: [],
      arrivalsPerSecond: [],
      allocatedPerSecond: [],
      failedPerSecond: [],
      refusedPerSecond: [],
      waitP50Seconds: [],
      waitP99Seconds: [],
      readyGameServers: [],
      allocatedGameServers: [],
      gameServers: [],
      desiredReplicas: [],
      nodes: [],
      cost: [],
      ...(this.rooms !== undefined && { roomsInUse: [], roomsCapacity: [] }),
    };
    this.lastStep = cluster.clock.now();
    this.sampleEnd = scenario.startMs + scenario.sampleMs;
    for (const fleet of cluster.readModel.list(FLEET_KIND)) this.desired.set(fleet.metadata.name, this.replicasOf(fleet));
    // A fleet's spec.replicas changes only when scaled: by the autoscaler in a scenario.
    cluster.changesOf(FLEET_KIND).subscribe((change) => {
      if (change.derived) return; // only its status moved with its GameServers
      const fleet = cluster.readModel.get(FLEET_KIND, change.namespace, change.name);
      if (!fleet) return;
      const to = this.replicasOf(fleet);
      const from = this.desired.get(change.name);
      this.desired.set(change.name, to);
      if (from !== undefined && from !== to) {
        this.decisions.push({ t: round((cluster.clock.now() - scenario.startMs) / 1000, 3), fleet: change.name, from, to });
      }
    });
  }

  private replicasOf(fleet: { spec?: unknown }): number {
    return (fleet.spec as { replicas?: number } | undefined)?.replicas ?? 0;
  }

  arrived(): void {
    this.requests++;
    this.sample.arrivals++;
  }

  refused(): void {
    this.attempts++;
    this.refusals++;
    this.sample.refused++;
  }

  allocated(waitMs: number, attempts: number): void {
    this.attempts++;
    this.allocatedCount++;
    if (attempts === 1) this.firstTry++;
    this.sample.allocated++;
    this.waits.push(waitMs / 1000);
    this.sampleWaits.push(waitMs / 1000);
  }

  gaveUp(): void {
    this.failed++;
    this.sample.failed++;
  }

  /** After each step: integrates the cluster's counts over it and closes a sample when one ends. */
  step(now: number): void {
    const ms = now - this.lastStep;
    this.lastStep = now;
    let ready = 0;
    let allocated = 0;
    let total = 0;
    let inUse = 0;
    let capacity = 0;
    for (const fleet of this.cluster.readModel.list(FLEET_KIND)) {
      const status = (fleet.status ?? {}) as FleetFigures;
      ready += status.readyReplicas ?? 0;
      allocated += status.allocatedReplicas ?? 0;
      total += status.replicas ?? 0;
      if (this.rooms !== undefined) {
        const counter = status.counters?.[this.rooms];
        inUse += Number(counter?.count ?? 0);
        capacity += Number(counter?.capacity ?? 0);
      }
    }
    const nodes = this.cluster.readModel.store('Node')?.size ?? 0;
    const counts = { ready, allocated, gameServers: total, nodes, roomsInUse: inUse, roomsCapacity: capacity };
    addTo(this.total, counts, ms);
    addTo(this.sample.counts, counts, ms);
    this.peakGameServers = Math.max(this.peakGameServers, total);
    this.peakNodes = Math.max(this.peakNodes, nodes);
    this.minNodes = Math.min(this.minNodes, nodes);
    if (now >= this.sampleEnd || now >= this.scenario.startMs + this.scenario.durationMs) this.closeSample(now);
  }

  private closeSample(now: number): void {
    const s = this.sample;
    const c = s.counts;
    const seconds = c.ms / 1000 || 1;
    const mean = (sum: number) => round(sum / (c.ms || 1), 3);
    const series = this.series;
    series.t.push(round((now - this.scenario.startMs) / 1000, 3));
    series.arrivalsPerSecond.push(round(s.arrivals / seconds, 4));
    series.allocatedPerSecond.push(round(s.allocated / seconds, 4));
    series.failedPerSecond.push(round(s.failed / seconds, 4));
    series.refusedPerSecond.push(round(s.refused / seconds, 4));
    const waits = this.sampleWaits.sort((a, b) => a - b);
    series.waitP50Seconds.push(waits.length ? round(quantile(waits, 0.5), 3) : null);
    series.waitP99Seconds.push(waits.length ? round(quantile(waits, 0.99), 3) : null);
    series.readyGameServers.push(mean(c.ready));
    series.allocatedGameServers.push(mean(c.allocated));
    series.gameServers.push(mean(c.gameServers));
    series.desiredReplicas.push([...this.desired.values()].reduce((a, b) => a + b, 0));
    series.nodes.push(mean(c.nodes));
    series.cost.push(round(this.costSoFar().total, 4));
    series.roomsInUse?.push(mean(c.roomsInUse));
    series.roomsCapacity?.push(mean(c.roomsCapacity));
    this.sample = { arrivals: 0, allocated: 0, failed: 0, refused: 0, counts: emptyTally() };
    this.sampleWaits = [];
    this.sampleEnd += this.scenario.sampleMs;
    // Memory is looked at once a sample: often enough for a peak, rarely enough to cost nothing.
    const memory = process.memoryUsage();
    this.peakRss = Math.max(this.peakRss, memory.rss);
    this.peakHeap = Math.max(this.peakHeap, memory.heapUsed);
  }

  private costSoFar(): { nodes: number; gameServers: number; total: number } {
    const nodes = (this.total.nodes / HOUR) * this.scenario.prices.nodeHour;
    const gameServers = (this.total.gameServers / HOUR) * this.scenario.prices.gameServerHour;
    return { nodes, gameServers, total: nodes + gameServers };
  }

  finish(events: number, wallMs: number): SimulationResult {
    const scenario = this.scenario;
    const waits = this.waits.sorted();
    const wait: WaitSummary | null = waits.length
      ? {
          mean: round(waits.reduce((a, b) => a + b, 0) / waits.length, 3),
          p50: round(quantile(waits, 0.5), 3),
          p90: round(quantile(waits, 0.9), 3),
          p99: round(quantile(waits, 0.99), 3),
          max: round(waits[waits.length - 1]!, 3),
        }
      : null;
    const cost = this.costSoFar();
    const decided = this.allocatedCount + this.failed;
    const summary: SimulationSummary = {
      scenario: scenario.name,
      file: scenario.file,
      variant: null,
      seed: scenario.seed,
      start: new Date(scenario.startMs).toISOString(),
      durationSeconds: scenario.durationMs / 1000,
      demand: scenario.demand.arrivals.text,
      sessions: scenario.sessions.length.text,
      featureGates: scenario.featureGates,
      allocations: {
        requests: this.requests,
        allocated: this.allocatedCount,
        allocatedFirstTry: this.firstTry,
        failed: this.failed,
        waiting: this.requests - decided,
        attempts: this.attempts,
        refusals: this.refusals,
        failureRate: decided ? round(this.failed / decided) : null,
      },
      waitSeconds: wait,
      gameServers: {
        peak: this.peakGameServers,
        readyHours: round(this.total.ready / HOUR, 3),
        allocatedHours: round(this.total.allocated / HOUR, 3),
        totalHours: round(this.total.gameServers / HOUR, 3),
        idleShare: this.total.gameServers ? round(this.total.ready / this.total.gameServers, 4) : null,
      },
      rooms:
        this.rooms === undefined
          ? null
          : {
              counter: this.rooms,
              inUseHours: round(this.total.roomsInUse / HOUR, 3),
              capacityHours: round(this.total.roomsCapacity / HOUR, 3),
              idleShare: this.total.roomsCapacity ? round(1 - this.total.roomsInUse / this.total.roomsCapacity, 4) : null,
            },
      nodes: { peak: this.peakNodes, min: Number.isFinite(this.minNodes) ? this.minNodes : 0, nodeHours: round(this.total.nodes / HOUR, 3) },
      cost: {
        currency: scenario.prices.currency,
        nodeHour: scenario.prices.nodeHour,
        gameServerHour: scenario.prices.gameServerHour,
        nodes: round(cost.nodes, 4),
        gameServers: round(cost.gameServers, 4),
        total: round(cost.total, 4),
        perAllocation: this.allocatedCount ? round(cost.total / this.allocatedCount, 6) : null,
      },
      autoscaler: {
        scaleUps: this.decisions.filter((d) => d.to > d.from).length,
        scaleDowns: this.decisions.filter((d) => d.to < d.from).length,
        decisions: this.decisions,
      },
      events,
      series: this.series,
    };
    const wallSeconds = wallMs / 1000;
    const memory = process.memoryUsage();
    return {
      summary,
      timing: {
        wallSeconds: round(wallSeconds, 3),
        speedup: round(scenario.durationMs / 1000 / wallSeconds, 1),
        peakRssBytes: Math.max(this.peakRss, memory.rss),
        peakHeapBytes: Math.max(this.peakHeap, memory.heapUsed),
      },
    };
  }
}
