import { SeededRandom, VirtualClock } from '../clock.js';
import { AllocationService } from '../allocation/allocation-service.js';
import { GameServerUpdateConflictError } from '../allocation/batch-allocator.js';
import { type Cluster, createCluster } from '../cluster.js';
import { type Controller, controlPlane } from '../controllers/control-plane.js';
import { ApiError } from '../k8s/status.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { processCause } from '../kinds/gameserver/events.js';
import type { GameServerAllocation } from '../kinds/gameserverallocation/gameserverallocation.js';
import type { RequestCause } from '../log/cause.js';
import type { WriteBehind } from '../log/event-log.js';
import { applyManifests } from '../manifests.js';
import type { ResourceService } from '../resources/service.js';
import { Sidecar } from '../sidecar/sidecar.js';
import { ensureNodes, nodeCreation, nodeName } from '../sim/nodes.js';
import { definitionOfKind } from '../kinds/definitions.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import { type TimedChange, changeText } from './changes.js';
import { ensurePoolNodes } from '../sim/node-pools.js';
import { advanceTo } from '../sim/virtual-time.js';
import { SimulationRecorder, type SimulationResult } from './recorder.js';
import { ScenarioError } from './fields.js';
import type { Scenario, SessionEnd } from './scenario.js';

/**
 * Runs a scenario on the virtual clock, as fast as the machine allows: the real controllers,
 * allocator and sidecars of `fleetsim serve`, with simulated players as the only clients. Each
 * step fires the timers due in it (arrivals, retries, session ends, the controllers' own) at their
 * instants, then lets the work they caused settle before time moves on.
 */

/** Streams of the scenario's seed that only the players draw from: demand stays the same whatever the cluster does. */
const ARRIVAL_STREAM = 0x5ce_0001;
const SESSION_STREAM = 0x5ce_0002;

/**
 * What a run keeps of its events: every one, a row each (`full`: the log a server writes, read
 * fastest by explain); every one, in compressed blocks (`compact`, a tenth of the size: replay,
 * explain and the dashboard read it alike, and it opens read-only); or none (no log at all).
 */
export type EventLogDetail = 'full' | 'compact' | 'none';

export const EVENT_LOG_DETAILS: readonly EventLogDetail[] = ['full', 'compact', 'none'];

const WRITE_BEHIND: Record<EventLogDetail, WriteBehind> = { full: 'rows', compact: 'blocks', none: 'none' };

export interface SimulateOptions {
  /** The SQLite log to write (a new file); unused when `eventLog` is none. */
  db: string;
  /** Default compact. */
  eventLog?: EventLogDetail;
  /**
   * Whether a core is free for the log's writer thread (default true). A variant run beside others
   * on every core writes its log itself: the thread would only take a core from them.
   */
  spareCore?: boolean;
  /** Told a second after the run starts, then every few seconds of wall time: how far it is. */
  onProgress?: (progress: SimulationProgress) => void;
}

/** How far a run is, when it tells. */
export interface SimulationProgress {
  simulatedMs: number;
  durationMs: number;
  /** Wall time since the run started (its set-up included). */
  wallMs: number;
  /** Events written to the log so far. */
  events: number;
}

/** Wall time to the first progress report (a person sees at once that it runs), and between the next ones. */
const FIRST_PROGRESS_MS = 1000;
const PROGRESS_EVERY_MS = 5000;

interface Request {
  id: number;
  arrivedAt: number;
  /** Infinity: the session outlasts the run (a recorded one still going when the recording ended). */
  sessionMs: number;
  attempts: number;
  /** What it asks for (per fleet, for a recorded demand), and what its game server does when the session ends. */
  ask: Ask;
  end: SessionEnd | { type: 'ready' };
}

/** A prepared GameServerAllocation and the resource API path a client would post it to. */
interface Ask {
  gsa: GameServerAllocation;
  path: string;
}

/** The cluster of a scenario, its resources applied and its allocation request checked, time not yet run. */
interface SetUp {
  clock: VirtualClock;
  cluster: Cluster;
  controllers: readonly Controller[];
  service: ResourceService;
  allocations: AllocationService;
  /** The allocation every arrival sends, or one per fleet (`namespace/name`) for a recorded demand. */
  asks: Map<string | undefined, Ask>;
  /** Nodes the scenario's changes have added: new ones are numbered after the first nodes and them, never reusing a lost one's name. */
  nodesAdded: number;
}

async function setUp(scenario: Scenario, db: string, writeBehind: WriteBehind = 'rows', writerThread = true): Promise<SetUp> {
  const clock = new VirtualClock(scenario.startMs);
  // No client waits on a commit and none watches: the log is written behind, thousands of events
  // a transaction, and watches keep a short window.
  const cluster = createCluster({ db, clock, gates: scenario.gates, seed: scenario.seed, writeBehind, writerThread, watchWindow: 1024 });
  const { service, controllers } = controlPlane(cluster, { profiles: scenario.profiles, nodePools: scenario.nodePools });
  const allocations = new AllocationService(cluster, { allocator: scenario.allocator });
  try {
    if (scenario.nodePools.length) await ensurePoolNodes(cluster, scenario.nodePools);
    else await ensureNodes(cluster, scenario.nodes, scenario.podsPerNode);
    for (const controller of controllers) controller.start();
    for (const resource of scenario.resources) {
      try {
        await applyManifests(service, [resource.object], resource.source);
      } catch (error) {
        throw new ScenarioError((error as Error).message); // a resource the API server refuses, named by its file or line
      }
    }
    const asks = new Map<string | undefined, Ask>();
    const prepare = (namespace: string, allocation: unknown, what: string) => {
      try {
        return { gsa: allocations.prepare(namespace, allocation), path: `/apis/allocation.agones.dev/v1/namespaces/${namespace}/gameserverallocations` };
      } catch (error) {
        const message = error instanceof ApiError ? error.status.message : (error as Error).message;
        throw new ScenarioError(`${scenario.file}: ${what}: ${message}`);
      }
    };
    const trace = scenario.demand.arrivals.trace;
    if (scenario.demand.allocation !== undefined || !trace) {
      asks.set(undefined, prepare(scenario.demand.namespace, scenario.demand.allocation, 'spec.demand.allocation'));
    } else {
      for (const fleet of new Set(trace.fleets)) {
        const [namespace, name] = fleet.split('/') as [string, string];
        asks.set(fleet, prepare(namespace, fleetAllocation(scenario, namespace, name), `the recorded allocations from fleet ${fleet}`));
      }
    }
    return { clock, cluster, controllers, service, allocations, asks, nodesAdded: 0 };
  } catch (error) {
    tearDown({ cluster, controllers, allocations });
    throw error;
  }
}

function tearDown(run: Pick<SetUp, 'cluster' | 'controllers' | 'allocations'>): void {
  run.allocations.stop();
  for (const controller of run.controllers) controller.stop();
  run.cluster.close();
}

/**
 * Sets a scenario up in memory and throws what is wrong with it (a resource refused, a bad
 * allocation, a change the cluster would refuse: the changes are made at once, in order), running
 * no time.
 */
export async function checkScenario(scenario: Scenario): Promise<void> {
  const run = await setUp(scenario, ':memory:');
  try {
    for (const change of scenario.changes) await makeChange(run, scenario, change);
  } finally {
    tearDown(run);
  }
}

/**
 * Makes one of the scenario's changes, as a client of the resource API would (a deletion of
 * what is already gone changes nothing); a change the cluster refuses is a ScenarioError naming it.
 */
async function makeChange(run: SetUp, scenario: Scenario, change: TimedChange): Promise<void> {
  const cause: RequestCause = { type: 'request', method: change.type === 'delete' ? 'DELETE' : 'PATCH', path: changeText(change), client: 'the scenario', requestId: change.source };
  try {
    if (change.type === 'apply') {
      await applyManifests(run.service, [change.object], change.source, cause);
    } else if (change.type === 'delete') {
      const definition = definitionOfKind(change.kind)!;
      if (run.cluster.get(change.kind, change.namespace, change.name)) await run.service.delete(definition, change.namespace, change.name, { cause });
    } else {
      const events = [];
      for (let n = 0; n < change.count; n++) {
        const ordinal = scenario.nodes + run.nodesAdded++;
        events.push(nodeCreation(run.cluster, { name: nodeName(ordinal), pods: scenario.podsPerNode, network: 0, ordinal }));
      }
      await run.cluster.commit(events, cause);
    }
  } catch (error) {
    const message = error instanceof ApiError ? error.status.message : (error as Error).message;
    throw new ScenarioError(`${change.source}: ${changeText(change)}: ${message}`);
  }
}

/** The allocation a recorded arrival sends: its fleet, by the fleet's own scheduling (Packed unless it says Distributed). */
function fleetAllocation(scenario: Scenario, namespace: string, name: string): unknown {
  const declared = [...scenario.resources.map((r) => r.object), ...scenario.changes.flatMap((c) => (c.type === 'apply' ? [c.object] : []))].find((object) => {
    const o = object as { kind?: string; metadata?: { name?: string; namespace?: string } };
    return o.kind === FLEET_KIND && o.metadata?.name === name && (o.metadata.namespace ?? 'default') === namespace;
  }) as { spec?: { scheduling?: string } } | undefined;
  const scheduling = declared?.spec?.scheduling === 'Distributed' ? 'Distributed' : 'Packed';
  return { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': name } }], scheduling } };
}

export async function simulate(scenario: Scenario, options: SimulateOptions): Promise<SimulationResult> {
  const wallStart = performance.now();
  const detail = options.eventLog ?? 'compact';
  const run = await setUp(scenario, detail === 'none' ? ':memory:' : options.db, WRITE_BEHIND[detail], options.spareCore ?? true);
  const { clock, cluster } = run;
  try {
    const recorder = new SimulationRecorder(cluster, scenario);
    const players = new Players(cluster, scenario, run.allocations, run.asks, recorder);
    players.start();
    let changeFailure: unknown;
    for (const change of scenario.changes) {
      clock.setTimeout(() => void makeChange(run, scenario, change).catch((error: unknown) => (changeFailure ??= error)), scenario.startMs + change.atMs - clock.now());
    }
    const endMs = scenario.startMs + scenario.durationMs;
    let nextProgress = wallStart + FIRST_PROGRESS_MS;
    while (clock.now() < endMs) {
      await advanceTo(clock, cluster.log, Math.min(clock.now() + scenario.stepMs, endMs), { stepMs: scenario.stepMs });
      if (players.failure !== undefined) throw players.failure;
      if (changeFailure !== undefined) throw changeFailure;
      recorder.step(clock.now());
      const wall = performance.now();
      if (wall >= nextProgress && clock.now() < endMs) {
        options.onProgress?.({ simulatedMs: clock.now() - scenario.startMs, durationMs: scenario.durationMs, wallMs: wall - wallStart, events: cluster.log.lastSeq });
        nextProgress = wall + PROGRESS_EVERY_MS;
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
  private nextId = 1;
  private timer: number | undefined;
  private stopped = false;
  /** An allocation that failed outright (not a refusal): the run stops and reports it. */
  failure: unknown;

  constructor(
    private readonly cluster: Cluster,
    private readonly scenario: Scenario,
    private readonly allocations: AllocationService,
    private readonly asks: Map<string | undefined, Ask>,
    private readonly recorder: SimulationRecorder,
  ) {
    this.sessionRng = new SeededRandom(scenario.seed, SESSION_STREAM);
    this.arrivals = scenario.demand.arrivals.arrivals(new SeededRandom(scenario.seed, ARRIVAL_STREAM), scenario.durationMs);
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
    const id = this.nextId++;
    const trace = this.scenario.demand.arrivals.trace;
    let request: Request;
    if (trace) {
      // A recorded arrival: its fleet, its hold and what its game server did then, as they were.
      const i = id - 1;
      const ask = this.asks.get(undefined) ?? this.asks.get(trace.fleets[i]!)!;
      const end = trace.ends[i] === 'ready' ? ({ type: 'ready' } as const) : ({ type: 'shutdown' } as const);
      request = { id, arrivedAt: this.cluster.clock.now(), sessionMs: trace.holdMs[i] ?? Infinity, attempts: 0, ask, end };
    } else {
      // Drawn on arrival, whatever happens next, so every variant of a scenario gets the same sessions.
      const sessionMs = this.scenario.sessions.length.draw(this.sessionRng);
      request = { id, arrivedAt: this.cluster.clock.now(), sessionMs, attempts: 0, ask: this.asks.get(undefined)!, end: this.scenario.sessions.end };
    }
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
      path: request.ask.path,
      client: 'simulated player',
      requestId: `player-${request.id}${request.attempts > 1 ? `-attempt-${request.attempts}` : ''}`,
    };
    // The player has its answer when the allocator decided: at once (exact), or at its replica's batch (agones-batch).
    this.allocations.allocate(request.ask.gsa, cause).then(
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
    if (request.sessionMs === Infinity) return;
    const { namespace, name } = gs.metadata;
    this.cluster.clock.setTimeout(() => void this.endSession(namespace, name, request), at + request.sessionMs - this.cluster.clock.now());
  }

  /** The game server's side of a session's end: what a real one calls on its sidecar. */
  private async endSession(namespace: string, name: string, request: Request): Promise<void> {
    if (this.stopped) return;
    const gs = this.cluster.gameServers.get(namespace, name);
    if (!gs || gs.metadata.deletionTimestamp !== undefined) return;
    const minutes = Math.round(request.sessionMs / 6000) / 10;
    const end = request.end;
    const sidecar = (detail: string) => new Sidecar(this.cluster, namespace, name, { cause: processCause(gs, detail) });
    try {
      if (end.type === 'shutdown') return await sidecar(`a player's session ended after ${minutes} min: the game server called Shutdown()`).shutdown();
      if (end.type === 'ready') return await sidecar(`a session ended after ${minutes} min: the game server called Ready() to take another`).ready();
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
