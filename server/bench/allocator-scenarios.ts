import { matchesSelector } from '../../machines/allocation.js';
import { AllocationService } from '../allocation/allocation-service.js';
import type { AllocatorOptions } from '../allocation/allocator.js';
import { GameServerUpdateConflictError } from '../allocation/batch-allocator.js';
import { VirtualClock } from '../clock.js';
import { createCluster } from '../cluster.js';
import { parseFeatureGates } from '../features.js';
import { FLEET_LABEL } from '../kinds/fleet/fleet.js';
import { type GameServerAllocation, toSelectors } from '../kinds/gameserverallocation/gameserverallocation.js';
import { settle } from '../sim/virtual-time.js';
import { commitReadyFleet } from './ready-fleet.js';

/**
 * Bursts of allocations against a fleet that has room for all of them, on the virtual clock, in
 * process: the shapes of the failures users file against Agones's allocator, and whether a model
 * reproduces them. Every figure is counted from the run; nothing here knows what a model should give.
 */

export interface BurstScenario {
  name: string;
  /** What it reproduces. */
  shape: string;
  /** Ready GameServers of fleet `burst` before the first request (health checks off: nothing else changes them). */
  servers: number;
  /** Extra spec of each GameServer (a counter of rooms…). */
  spec?: Record<string, unknown>;
  /** Clients sending at once: each sends its next request as soon as its last is answered. */
  clients: number;
  /** Requests in all. */
  requests: number;
  /** The GameServerAllocation each request sends. */
  allocation: Record<string, unknown>;
  /** Feature gates, as `--feature-gates` takes them. */
  gates?: string;
}

const FLEET = 'burst';

/**
 * #1856: 50 clients allocating Ready servers of a large Packed fleet — contention between
 * allocator replicas. The fleet never runs out: every failure is one while Ready servers exist.
 */
export const READY_BURST: BurstScenario = {
  name: 'ready-burst',
  shape: '#1856: contention between replicas',
  servers: 1500,
  spec: { health: { disabled: true } },
  clients: 50,
  requests: 1000,
  allocation: { spec: { selectors: [{ matchLabels: { [FLEET_LABEL]: FLEET } }], scheduling: 'Packed' } },
};

/**
 * #4142: a few high-capacity servers, each allocation taking one room (Allocated servers with
 * room first, then Ready ones): under a burst, "no available GameServer" while servers have room.
 */
export const ROOMS_BURST: BurstScenario = {
  name: 'rooms-burst',
  shape: '#4142: UnAllocated under bursts while servers have room',
  gates: 'CountsAndLists=true',
  servers: 4,
  spec: { health: { disabled: true }, counters: { rooms: { count: 0, capacity: 999999 } } },
  clients: 20,
  requests: 600,
  allocation: {
    spec: {
      selectors: [
        { matchLabels: { [FLEET_LABEL]: FLEET }, gameServerState: 'Allocated', counters: { rooms: { minAvailable: 1 } } },
        { matchLabels: { [FLEET_LABEL]: FLEET }, gameServerState: 'Ready', counters: { rooms: { minAvailable: 1 } } },
      ],
      scheduling: 'Packed',
      counters: { rooms: { action: 'Increment', amount: 1 } },
    },
  },
};

export const BURST_SCENARIOS = [READY_BURST, ROOMS_BURST];

export interface BurstFigures {
  requests: number;
  allocated: number;
  /** Answered UnAllocated (429 / ResourceExhausted through the allocator service). */
  unallocated: number;
  /** Answered with an error or Contention: every attempt lost its race. */
  failed: number;
  /** Requests not allocated while the store held a server their selectors matched. */
  failedWithRoom: number;
  /** Update conflicts: a replica's update refused because another changed the server first. */
  conflicts: number;
  /** Tries beyond the first. */
  retries: number;
  /** Distinct GameServers allocated: how well the burst was packed. */
  serversUsed: number;
  /** Virtual milliseconds from request to answer. */
  p50Ms: number;
  p99Ms: number;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** One burst against a fresh cluster on the virtual clock, allocated by `model`. */
export async function runBurst(scenario: BurstScenario, model: AllocatorOptions, seed: number): Promise<BurstFigures> {
  const clock = new VirtualClock();
  const cluster = createCluster({ db: ':memory:', clock, gates: parseFeatureGates(scenario.gates ?? ''), seed });
  let allocator: AllocationService | undefined;
  try {
    await commitReadyFleet(cluster, { size: scenario.servers, fleet: FLEET, spec: scenario.spec });
    const service = (allocator = new AllocationService(cluster, { allocator: model }));
    const gsa: GameServerAllocation = service.prepare('default', scenario.allocation);
    const selectors = toSelectors(gsa);
    const hasRoom = () => [...cluster.gameServers.values()].some((gs) => selectors.some((s) => matchesSelector(gs, s, cluster.gates)));

    const figures: BurstFigures = { requests: 0, allocated: 0, unallocated: 0, failed: 0, failedWithRoom: 0, conflicts: 0, retries: 0, serversUsed: 0, p50Ms: 0, p99Ms: 0 };
    const latencies: number[] = [];
    const used = new Set<string>();
    let answered = 0;
    const send = (): void => {
      if (figures.requests >= scenario.requests) return;
      figures.requests++;
      const sentAt = clock.now();
      const answer = (allocated: boolean) => {
        answered++;
        latencies.push(clock.now() - sentAt);
        if (!allocated && hasRoom()) figures.failedWithRoom++;
        send();
      };
      service.allocate(gsa).then(
        (result) => {
          figures.retries += (result.attempts ?? 1) - 1;
          if (result.status.state === 'Allocated') {
            figures.allocated++;
            used.add(result.status.gameServerName!);
          } else if (result.status.state === 'UnAllocated') figures.unallocated++;
          else figures.failed++;
          answer(result.status.state === 'Allocated');
        },
        (error: unknown) => {
          if (!(error instanceof GameServerUpdateConflictError)) throw error;
          figures.retries += error.attempts - 1;
          figures.failed++;
          answer(false);
        },
      );
    };
    for (let i = 0; i < scenario.clients; i++) send();
    // Time moves on only once nothing more happens at this instant (answers cause requests).
    let seen = -1;
    while (answered < scenario.requests) {
      if (answered !== seen) {
        seen = answered;
        await settle(clock);
      } else if (clock.step()) {
        seen = -1;
      } else {
        throw new Error(`${scenario.name}: ${scenario.requests - answered} requests never answered`);
      }
    }
    latencies.sort((a, b) => a - b);
    figures.conflicts = allocator.batch?.stats.conflicts ?? 0;
    figures.serversUsed = used.size;
    figures.p50Ms = quantile(latencies, 0.5);
    figures.p99Ms = quantile(latencies, 0.99);
    return figures;
  } finally {
    allocator?.stop();
    cluster.close();
  }
}

/** The same burst over several seeds, figures summed (latencies: the worst seed's). */
export async function runBursts(scenario: BurstScenario, model: AllocatorOptions, seeds: readonly number[]): Promise<BurstFigures> {
  const total: BurstFigures = { requests: 0, allocated: 0, unallocated: 0, failed: 0, failedWithRoom: 0, conflicts: 0, retries: 0, serversUsed: 0, p50Ms: 0, p99Ms: 0 };
  for (const seed of seeds) {
    const run = await runBurst(scenario, model, seed);
    for (const key of ['requests', 'allocated', 'unallocated', 'failed', 'failedWithRoom', 'conflicts', 'retries', 'serversUsed'] as const) total[key] += run[key];
    total.p50Ms = Math.max(total.p50Ms, run.p50Ms);
    total.p99Ms = Math.max(total.p99Ms, run.p99Ms);
  }
  return total;
}
