import type { Subscription } from 'rxjs';
import type { TimerHandle } from '../clock.js';
import type { GameServer, GameServerState } from '../kinds/gameserver-types.js';
import { SIDECAR_RUNNING_STATES } from '../kinds/gameserver/gameserver.js';
import { creationCommand, processCause } from '../kinds/gameserver/events.js';
import type { SimulatedWorld } from './ports.js';
import { unawaited } from '../runtime/store.js';
import { Sidecar } from '../sidecar/sidecar.js';
import { type ContainerState, terminationGraceMs } from '../kinds/pod/pod.js';
import type { Cause } from '../log/cause.js';
import { containerExit } from '../../machines/pod-lifecycle.js';
import { DEFAULT_PROFILE, NO_PROCESS, PROFILE_ANNOTATION, type ProcessAction, type ProcessProfile } from './profiles.js';
import { SimpleGameServerListener, type SimpleGameServerConfig, configOf, isSimpleGameServer } from './simple-game-server.js';

interface Process {
  profile: ProcessProfile;
  state: GameServerState | undefined;
  stageTimer: TimerHandle | undefined;
  pinging: boolean;
  /** A simulated simple-game-server's sockets and switches (only when listening is on). */
  network?: { listener: SimpleGameServerListener; config: SimpleGameServerConfig; shutdownTimer?: TimerHandle; exitTimer?: TimerHandle };
}

export interface SimulatedProcessesOptions {
  /** Whether simulated simple-game-servers listen on their host ports; off for very large fleets. */
  listen?: boolean;
}

/** Whether two versions of a GameServer name the same process profile (a real command is fixed at creation). */
function sameProcessAnnotations(a: GameServer, b: GameServer): boolean {
  const before = a.metadata.annotations;
  const after = b.metadata.annotations;
  return before === after || before[PROFILE_ANNOTATION] === after[PROFILE_ANNOTATION];
}

/**
 * Simulated game-server processes: one per GameServer whose pod runs, acting through the same
 * sidecar handlers a real game server would call. Every random choice comes from the cluster's
 * seeded generator and every wait from its clock, so a run can be replayed.
 */
export class SimulatedProcesses {
  private readonly processes = new Map<string, Process>();
  private readonly profiles = new Map<string, ProcessProfile>();
  private subscription: Subscription | undefined;
  private readonly closing = new Set<Promise<void>>();
  /** Exited processes the kubelet starts again after its back-off. */
  private readonly restarts = new Map<string, TimerHandle>();
  private readonly listen: boolean;

  constructor(
    private readonly cluster: SimulatedWorld,
    profiles: ProcessProfile[] = [],
    options: SimulatedProcessesOptions = {},
  ) {
    this.listen = options.listen ?? false;
    this.profiles.set(DEFAULT_PROFILE.name, DEFAULT_PROFILE);
    for (const profile of profiles) this.profiles.set(profile.name, profile);
  }

  start(): void {
    for (const [key, gs] of this.cluster.gameServers.entries()) this.observe(key, gs);
    this.subscription = this.cluster.gameServerChanges$.subscribe((change) => {
      const { previous, object } = change;
      // Most changes (a counter, a label, a re-allocation) move nothing a process reacts to: its state, its deletion, its profile.
      if (
        previous &&
        object &&
        previous.status.state === object.status.state &&
        previous.metadata.deletionTimestamp === object.metadata.deletionTimestamp &&
        sameProcessAnnotations(previous, object)
      ) {
        return;
      }
      if (object) this.observe(change.key, object);
      else {
        this.end(change.key);
        this.cluster.clock.clearTimeout(this.restarts.get(change.key));
        this.restarts.delete(change.key);
      }
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    for (const key of [...this.processes.keys()]) this.end(key);
    for (const timer of this.restarts.values()) this.cluster.clock.clearTimeout(timer);
    this.restarts.clear();
  }

  /** Stops, and waits until every simulated server's sockets are closed. */
  async close(): Promise<void> {
    this.stop();
    await Promise.all([...this.closing]);
  }

  /** Whether this GameServer's simulated process listens on its host ports (so they must be unique). */
  listensOn(gs: GameServer): boolean {
    return this.listen && isSimpleGameServer(gs) && this.profileOf(gs) !== undefined;
  }

  get running(): number {
    return this.processes.size;
  }

  private profileOf(gs: GameServer): ProcessProfile | undefined {
    const name = gs.metadata.annotations[PROFILE_ANNOTATION] ?? DEFAULT_PROFILE.name;
    // A GameServer with a real command runs it instead (server/controllers/gameserver-processes.ts).
    if (name === NO_PROCESS || creationCommand(gs) !== undefined) return undefined;
    return this.profiles.get(name) ?? DEFAULT_PROFILE;
  }

  private observe(key: string, gs: GameServer): void {
    const state = gs.status.state;
    let process = this.processes.get(key);
    const restart = this.restarts.get(key);
    if (restart !== undefined && gs.metadata.deletionTimestamp !== undefined) {
      // A terminating pod restarts nothing: its exited container is all there is to wait for.
      this.cluster.clock.clearTimeout(restart);
      this.restarts.delete(key);
      const container = this.cluster.pods.container(key);
      if (container?.lastState) this.cluster.pods.setContainer(key, { ...container, state: container.lastState });
      void this.cluster.termination.processExited(key, processCause(gs, 'the exited process is not restarted in a terminating pod'));
      return;
    }
    if (!process) {
      // The process starts with its pod (Scheduled) and lives while the sidecar does; one that
      // exited starts again when the kubelet's back-off ends.
      if (!SIDECAR_RUNNING_STATES.has(state) || this.restarts.has(key)) return;
      const profile = this.profileOf(gs);
      if (!profile) return;
      process = { profile, state: undefined, stageTimer: undefined, pinging: profile.ping };
      this.processes.set(key, process);
      if (process.pinging && !gs.spec.health.disabled) this.schedulePing(key, gs, process);
      if (this.listensOn(gs)) this.startNetwork(key, gs, process);
    }
    if (process.network && gs.metadata.deletionTimestamp !== undefined && process.network.exitTimer === undefined) this.terminate(key, gs, process.network);
    if (process.network?.config.automaticShutdownDelaySec && state === 'Allocated' && process.state !== 'Allocated') {
      // The example's -automaticShutdownDelaySec: shut down that long after being allocated.
      const network = process.network;
      this.cluster.clock.clearTimeout(network.shutdownTimer);
      network.shutdownTimer = this.cluster.clock.setTimeout(() => {
        this.podLog(key, 'Moving Game Server to Shutdown');
        const cause = processCause(gs, `-automaticShutdownDelaySec ${network.config.automaticShutdownDelaySec} passed after allocation: the process called Shutdown()`);
        void new Sidecar(this.cluster, gs.metadata.namespace, gs.metadata.name, { cause }).shutdown().catch(() => undefined);
      }, network.config.automaticShutdownDelaySec * 1000);
    }
    if (process.state === state) return;
    process.state = state;
    if (state === 'Shutdown' || state === 'Unhealthy' || state === 'Error') {
      this.end(key);
      return;
    }
    this.cluster.clock.clearTimeout(process.stageTimer);
    process.stageTimer = undefined;
    const stage = process.profile.stages.find((s) => s.when === state);
    if (!stage) return;
    // A simple-game-server started with READY=false (or -ready=false) waits to be told.
    if (state === 'Scheduled' && process.network && !process.network.config.ready) return;
    const rng = this.cluster.rng;
    const delay = stage.delay.minMs + rng.next() * (stage.delay.maxMs - stage.delay.minMs);
    const choice = pickWeighted(stage.next, rng.next());
    process.stageTimer = this.cluster.clock.setTimeout(() => {
      process.stageTimer = undefined;
      void this.act(key, gs, choice.action, choice.seconds).catch(() => undefined);
    }, delay);
  }

  /**
   * SIGTERM for a terminating GameServer's simulated simple-game-server: it keeps serving for its
   * -gracefulTerminationDelaySec (at most the pod's grace period), then exits and the GameServer goes.
   */
  private terminate(key: string, gs: GameServer, network: NonNullable<Process['network']>): void {
    this.podLog(key, 'Received SIGTERM, waiting before exiting');
    const delayMs = Math.min(network.config.gracefulTerminationDelaySec * 1000, terminationGraceMs(gs));
    network.exitTimer = this.cluster.clock.setTimeout(() => {
      this.cluster.pods.setContainer(key, {
        state: { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: this.cluster.clock.now() },
        restartCount: 0,
      });
      this.end(key);
      void this.cluster.termination.processExited(key, processCause(gs, 'the process exited after SIGTERM'));
    }, delayMs);
  }

  private schedulePing(key: string, gs: GameServer, _process: Process): void {
    // A ping each period keeps every check satisfied (a check fails only when lastPing + period < now).
    // The health monitor reads the cadence at its deadlines rather than taking a timer per ping.
    const period = (gs.spec.health.periodSeconds ?? 0) * 1000;
    this.cluster.health.pingEvery(key, this.cluster.clock.now() + period * this.cluster.rng.next(), period);
  }

  private async act(key: string, gs: GameServer, action: ProcessAction, seconds: number | undefined): Promise<void> {
    const profile = this.processes.get(key)?.profile.name ?? '';
    const cause = processCause(gs, `the simulated process (profile ${profile}) acted: ${action}${seconds === undefined ? '' : ` ${seconds}s`}`);
    const sidecar = new Sidecar(this.cluster, gs.metadata.namespace, gs.metadata.name, { cause });
    switch (action) {
      case 'ready':
        return sidecar.ready();
      case 'allocate':
        return sidecar.allocate();
      case 'reserve':
        return sidecar.reserve(seconds ?? 0);
      case 'shutdown':
        return sidecar.shutdown();
      case 'crash':
        return this.exited(key, 1, cause);
      case 'stopPinging': {
        const process = this.processes.get(key);
        if (process) process.pinging = false;
        this.cluster.health.stopPinging(key);
        return;
      }
      case 'nothing':
        return;
    }
  }

  /** Listens as Agones's example does; a port it cannot bind kills it, as the example's log.Fatalf does. */
  private startNetwork(key: string, gs: GameServer, process: Process): void {
    const { namespace, name } = gs.metadata;
    const config = configOf(gs);
    const crash = (reason: string, exitCode: number) => {
      if (this.processes.get(key) !== process) return;
      this.podLog(key, reason);
      this.exited(key, exitCode, processCause(gs, `the process exited with code ${exitCode}: ${reason}`));
    };
    const sidecar = new Sidecar(this.cluster, namespace, name, { cause: processCause(gs, 'the simple-game-server acted on a command from a client') });
    const listener = new SimpleGameServerListener({
      sidecar,
      crash,
      stopPinging: () => {
        process.pinging = false;
        this.cluster.health.stopPinging(key);
      },
      log: (line) => this.podLog(key, line),
      exit: () => void sidecar.shutdown().catch(() => undefined),
    });
    process.network = { listener, config };
    const before = this.cluster.pods.container(key);
    this.cluster.pods.setContainer(key, {
      state: { kind: 'running', startedAt: this.cluster.clock.now() },
      restartCount: before?.restartCount ?? 0,
      ...(before?.lastState && { lastState: before.lastState }),
    });
    this.cluster.pods.setStopsSlowly(key, config.gracefulTerminationDelaySec > 0);
    this.podLog(key, 'Creating SDK instance');
    this.podLog(key, 'Starting Health Ping');
    const protocols = new Map(gs.spec.ports.map((p) => [p.name, p.protocol ?? 'UDP']));
    const ports = gs.status.ports.map((p) => ({ port: p.port, protocol: protocols.get(p.name) ?? 'UDP' }));
    listener.listen(gs.status.address || '127.0.0.1', ports, config).catch((error: Error) => crash(`Could not start server: ${error.message}`, 1));
  }

  /**
   * The process exited with `exitCode`: what the kubelet and Agones's controllers do next is
   * machines/pod-lifecycle.ts's to say (a restart, Shutdown when a pod that restarts nothing
   * completes, Unhealthy).
   */
  private exited(key: string, exitCode: number, cause: Cause): void {
    const gs = this.cluster.gameServers.getByKey(key);
    if (!gs || !this.processes.has(key)) return;
    const previous = this.cluster.pods.container(key);
    const finishedAt = this.cluster.clock.now();
    const terminated: Extract<ContainerState, { kind: 'terminated' }> = { kind: 'terminated', exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt };
    const closed = this.end(key);
    const next = containerExit(gs, exitCode, this.cluster.gates);
    if (next.restart && next.gameServer === 'unchanged') return this.restartLater(key, terminated, previous?.restartCount ?? 0, closed);
    this.cluster.pods.setContainer(key, { ...previous, state: terminated, restartCount: previous?.restartCount ?? 0 });
    if (next.gameServer === 'unchanged') return;
    const command =
      next.gameServer === 'shutdown'
        ? ({ type: 'controller.shutdown', message: 'Pod is in Succeeded state' } as const)
        : ({ type: 'controller.unhealthy', message: 'Issue with Gameserver pod' } as const);
    unawaited(this.cluster.actors.sendByKey(key, command, cause));
  }

  /**
   * The kubelet's restart: at once the first time, then after a back-off of 10 s doubling to 5
   * minutes; never before the exited process's sockets are closed (the new one binds them again).
   */
  private restartLater(key: string, terminated: Extract<ContainerState, { kind: 'terminated' }>, restarts: number, closed: Promise<void>): void {
    const waitMs = restarts === 0 ? 0 : Math.min(10_000 * 2 ** (restarts - 1), 300_000);
    const restartCount = restarts + 1;
    this.cluster.pods.setContainer(key, {
      state: { kind: 'waiting', reason: restarts === 0 ? 'ContainerCreating' : 'CrashLoopBackOff' },
      lastState: terminated,
      restartCount,
    });
    const timer = this.cluster.clock.setTimeout(() => {
      void closed.then(() => {
        if (this.restarts.get(key) !== timer) return;
        this.restarts.delete(key);
        const gs = this.cluster.gameServers.getByKey(key);
        if (!gs) return;
        this.observe(key, gs);
        // A process that does not listen reports no container of its own: the kubelet's restart does.
        if (this.processes.has(key) && !this.processes.get(key)!.network) {
          this.cluster.pods.setContainer(key, { state: { kind: 'running', startedAt: this.cluster.clock.now() }, lastState: terminated, restartCount });
        }
      });
    }, waitMs);
    this.restarts.set(key, timer);
  }

  /** A line of the simulated process's output, as Go's log prints it. */
  private podLog(key: string, line: string): void {
    const now = this.cluster.clock.now();
    const stamp = new Date(now).toISOString().replace('T', ' ').replace(/-/g, '/').slice(0, 19);
    this.cluster.pods.appendLog(key, 'stdout', `${stamp} ${line}`, now);
  }

  /** Ends the process; resolves when its sockets are closed. */
  private end(key: string): Promise<void> {
    const process = this.processes.get(key);
    if (!process) return Promise.resolve();
    let closing = Promise.resolve();
    if (process.network) {
      this.cluster.clock.clearTimeout(process.network.shutdownTimer);
      this.cluster.clock.clearTimeout(process.network.exitTimer);
      closing = process.network.listener.close();
      this.closing.add(closing);
      void closing.finally(() => this.closing.delete(closing));
    }
    this.cluster.clock.clearTimeout(process.stageTimer);
    this.cluster.health.stopPinging(key);
    this.processes.delete(key);
    return closing;
  }
}

function pickWeighted<T extends { weight: number }>(choices: T[], r: number): T {
  const total = choices.reduce((sum, c) => sum + c.weight, 0);
  let point = r * total;
  for (const choice of choices) {
    point -= choice.weight;
    if (point < 0) return choice;
  }
  return choices[choices.length - 1]!;
}

