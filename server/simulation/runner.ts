import { SeededRandom, VirtualClock } from '../clock.js';
import { Allocator } from '../allocation/allocator.js';
import { AllocationService } from '../allocation/allocation-service.js';
import { GameServerUpdateConflictError } from '../allocation/batch-allocator.js';
import { loopbackServiceResolver } from '../autoscaler/webhook-client.js';
import { Cluster } from '../cluster.js';
import { FleetAutoscalerController } from '../controllers/fleetautoscaler-controller.js';
import { FleetController } from '../controllers/fleet-controller.js';
import { GameServerController } from '../controllers/gameserver-controller.js';
import { GameServerSetController } from '../controllers/gameserverset-controller.js';
import { EventExpiry } from '../controllers/k8s-events.js';
import { ApiError } from '../k8s/status.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import { processCause } from '../kinds/gameserver/events.js';
import type { GameServerAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';
import type { RequestCause } from '../log/cause.js';
import { applyManifests } from '../manifests.js';
import { ResourceService } from '../resources/service.js';
import { Sidecar } from '../sidecar/sidecar.js';
import { ensureNodes } from '../sim/nodes.js';
import { ensurePoolNodes } from '../sim/node-pools.js';
import { NodeAutoscaler } from '../controllers/node-autoscaler.js';
import { SimulatedProcesses } from '../sim/processes.js';
import { advanceTo } from '../sim/virtual-time.js';
import { SimulationRecorder, type SimulationResult } from './recorder.js';
import { ScenarioError } from './fields.js';
import type { Scenario } from './scenario.js';

/**
 * Runs a scenario on the virtual clock, as fast as the machine allows: the real controllers,
 * allocator and sidecars of `fleetsim serve`, with simulated players as the only clients. Each
 * step fires the timers due in it (arrivals, retries, session ends, the controllers' own) at their
 * instants, then lets the work they caused settle before time moves on.
 */

/** Streams of the scenario's seed that only the players draw from: demand stays the same whatever the cluster does. */
const ARRIVAL_STREAM = 0x5ce_0001;
const SESSION_STREAM = 0x5ce_0002;

export interface SimulateOptions {
  /** The SQLite log to write (a new file). */
  db: string;
  /** Told after each simulated hour: how far, and the wall time so far. */
  onProgress?: (simulatedMs: number, wallMs: number) => void;
}

interface Request {
  id: number;
  arrivedAt: number;
  sessionMs: number;
  attempts: number;
}

/** The cluster of a scenario, its resources applied and its allocation request checked, time not yet run. */
interface SetUp {
  clock: VirtualClock;
  cluster: Cluster;
  controllers: Array<{ start(): void; stop(): void }>;
  allocator: Allocator;
  allocations: AllocationService;
  gsa: GameServerAllocation;
}

async function setUp(scenario: Scenario, db: string): Promise<SetUp> {
  const clock = new VirtualClock(scenario.startMs);
  // No client waits on a commit and none watches: the log is written behind, thousands of events
  // a transaction, and watches keep a short window.
  const cluster = new Cluster({ db, clock, gates: scenario.gates, seed: scenario.seed, writeBehind: true, watchWindow: 1024 });
  const service = new ResourceService(cluster);
  const gameServers = new GameServerController(cluster, { portRange: { min: 7000, max: 8000 } });
  const controllers = [
    gameServers,
    new GameServerSetController(cluster, service),
    new FleetController(cluster, service),
    new FleetAutoscalerController(cluster, service, { resolveService: loopbackServiceResolver }),
    new SimulatedProcesses(cluster, scenario.profiles, { listen: false }),
    new EventExpiry(cluster),
    ...(scenario.nodePools.length ? [new NodeAutoscaler(cluster, scenario.nodePools, gameServers)] : []),
  ];
  const allocator = new Allocator(cluster, scenario.allocator);
  try {
    if (scenario.nodePools.length) await ensurePoolNodes(cluster, scenario.nodePools);
    else await ensureNodes(cluster, scenario.nodes);
    for (const controller of controllers) controller.start();
    for (const resource of scenario.resources) {
      try {
        await applyManifests(service, [resource.object], resource.source);
      } catch (error) {
        throw new ScenarioError((error as Error).message); // a resource the API server refuses, named by its file or line
      }
    }
    const allocations = new AllocationService(cluster, allocator);
    let gsa: GameServerAllocation;
    try {
      gsa = allocations.prepare(scenario.demand.namespace, scenario.demand.allocation);
    } catch (error) {
      const message = error instanceof ApiError ? error.status.message : (error as Error).message;
      throw new ScenarioError(`${scenario.file}: spec.demand.allocation: ${message}`);
    }
    return { clock, cluster, controllers, allocator, allocations, gsa };
  } catch (error) {
    tearDown({ cluster, controllers, allocator });
    throw error;
  }
}

function tearDown(run: Pick<SetUp, 'cluster' | 'controllers' | 'allocator'>): void {
  run.allocator.stop();
  for (const controller of run.controllers) controller.stop();
  run.cluster.close();
}

/** Sets a scenario up in memory and throws what is wrong with it (a resource refused, a bad allocation), running nothing. */
export async function checkScenario(scenario: Scenario): Promise<void> {
  tearDown(await setUp(scenario, ':memory:'));
}

export async function simulate(scenario: Scenario, options: SimulateOptions): Promise<SimulationResult> {
  const wallStart = performance.now();
  const run = await setUp(scenario, options.db);
  const { clock, cluster } = run;
  try {
    const recorder = new SimulationRecorder(cluster, scenario);
    const players = new Players(cluster, scenario, run.allocations, run.gsa, recorder);
    players.start();
    const endMs = scenario.startMs + scenario.durationMs;
    let nextProgress = scenario.startMs + 3_600_000;
    while (clock.now() < endMs) {
      await advanceTo(clock, cluster.log, Math.min(clock.now() + scenario.stepMs, endMs), { stepMs: scenario.stepMs });
      if (players.failure !== undefined) throw players.failure;
      recorder.step(clock.now());
      if (clock.now() >= nextProgress) {
        options.onProgress?.(clock.now() - scenario.startMs, performance.now() - wallStart);
        nextProgress += 3_600_000;
      }
    }
    players.stop();
    return recorder.finish(cluster.log.lastSeq, performance.now() - wallStart);
  } finally {
    tearDown(run);
  }
}

/**
 * The players: arrivals from the demand model, each asking for a game server through the
 * allocator as a client would, retrying while none is free, giving up after the timeout; once
 * allocated, the session runs its drawn length and the game server ends it as the scenario says.
 */
class Players {
  private readonly arrivals: Iterator<number>;
  private readonly sessionRng: SeededRandom;
  /** The resource API path every request names (in its cause). */
  private readonly requestPath: string;
  private nextId = 1;
  private timer: number | undefined;
  private stopped = false;
  /** An allocation that failed outright (not a refusal): the run stops and reports it. */
  failure: unknown;

  constructor(
    private readonly cluster: Cluster,
    private readonly scenario: Scenario,
    private readonly allocations: AllocationService,
    private readonly gsa: GameServerAllocation,
    private readonly recorder: SimulationRecorder,
  ) {
    this.sessionRng = new SeededRandom(scenario.seed, SESSION_STREAM);
    this.arrivals = scenario.demand.arrivals.arrivals(new SeededRandom(scenario.seed, ARRIVAL_STREAM), scenario.durationMs);
    this.requestPath = `/apis/allocation.agones.dev/v1/namespaces/${scenario.demand.namespace}/gameserverallocations`;
  }

  start(): void {
    this.scheduleArrival();
  }

  stop(): void {
    this.stopped = true;
    this.cluster.clock.clearTimeout(this.timer);
  }

  private fail(error: unknown): void {
    this.failure ??= error;
    this.stop();
  }

  private scheduleArrival(): void {
    const next = this.arrivals.next();
    if (next.done) return;
    const at = this.scenario.startMs + next.value;
    this.timer = this.cluster.clock.setTimeout(() => {
      this.arrive();
      this.scheduleArrival();
    }, at - this.cluster.clock.now());
  }

  private arrive(): void {
    // Drawn on arrival, whatever happens next, so every variant of a scenario gets the same sessions.
    const request: Request = { id: this.nextId++, arrivedAt: this.cluster.clock.now(), sessionMs: this.scenario.sessions.length.draw(this.sessionRng), attempts: 0 };
    this.recorder.arrived();
    this.attempt(request);
  }

  private attempt(request: Request): void {
    if (this.stopped) return;
    request.attempts++;
    const at = this.cluster.clock.now();
    const cause: RequestCause = {
      type: 'request',
      method: 'POST',
      path: this.requestPath,
      client: 'simulated player',
      requestId: `player-${request.id}${request.attempts > 1 ? `-attempt-${request.attempts}` : ''}`,
    };
    // The player has its answer when the allocator decided: at once (exact), or at its replica's batch (agones-batch).
    this.allocations.allocate(this.gsa, cause).then(
      (result) => {
        const answeredAt = result.decidedAt ?? at;
        if (result.status.state === 'Allocated' && result.gameServer) return this.allocated(request, answeredAt, result.gameServer);
        this.refused(request, answeredAt);
      },
      // agones-batch's answer once every try lost its race: the player asks again, as for a refusal.
      (error: unknown) => (error instanceof GameServerUpdateConflictError ? this.refused(request, error.decidedAt) : this.fail(error)),
    );
  }

  /** Not allocated: ask again after the retry interval, or give up past the timeout. */
  private refused(request: Request, at: number): void {
    this.recorder.refused();
    if (at + this.scenario.demand.retryIntervalMs - request.arrivedAt > this.scenario.demand.retryTimeoutMs) {
      this.recorder.gaveUp();
      return;
    }
    this.cluster.clock.setTimeout(() => this.attempt(request), at + this.scenario.demand.retryIntervalMs - this.cluster.clock.now());
  }

  private allocated(request: Request, at: number, gs: GameServer): void {
    this.recorder.allocated(at - request.arrivedAt, request.attempts);
    const { namespace, name } = gs.metadata;
    this.cluster.clock.setTimeout(() => void this.endSession(namespace, name, request.sessionMs), at + request.sessionMs - this.cluster.clock.now());
  }

  /** The game server's side of a session's end: what a real one calls on its sidecar. */
  private async endSession(namespace: string, name: string, sessionMs: number): Promise<void> {
    if (this.stopped) return;
    const gs = this.cluster.gameServers.get(namespace, name);
    if (!gs || gs.metadata.deletionTimestamp !== undefined) return;
    const minutes = Math.round(sessionMs / 6000) / 10;
    const end = this.scenario.sessions.end;
    const sidecar = (detail: string) => new Sidecar(this.cluster, namespace, name, { cause: processCause(gs, detail) });
    try {
      if (end.type === 'shutdown') return await sidecar(`a player's session ended after ${minutes} min: the game server called Shutdown()`).shutdown();
      const counter = await sidecar(`a session ended after ${minutes} min: the game server gave its room back (${end.counter} - 1)`).updateCounter({
        name: end.counter,
        countDiff: -1,
      });
      if (Number(counter.count) > 0 || end.whenEmpty === 'stay') return;
      const last = sidecar(`the last session on the game server ended: it called ${end.whenEmpty === 'ready' ? 'Ready()' : 'Shutdown()'}`);
      await (end.whenEmpty === 'ready' ? last.ready() : last.shutdown());
    } catch {
      // The game server went away meanwhile (deleted, unhealthy): its session ended with it.
    }
  }
}
