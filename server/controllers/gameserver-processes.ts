import { type ChildProcess, spawn } from 'node:child_process';
import type { Subscription } from 'rxjs';
import type { GameServer } from '../kinds/gameserver-types.js';
import { SIDECAR_RUNNING_STATES } from '../kinds/gameserver/gameserver.js';
import { objectKey } from '../kinds/meta.js';
import type { GameServerProcessesPort } from './ports.js';
import { type ContainerState, podReference, terminationGraceMs } from '../kinds/pod/pod.js';
import { creationCommand, processCause } from '../kinds/gameserver/events.js';
import { EventRecorder } from './k8s-events.js';

/** A GameServer's own sidecar, listening on its two loopback ports. */
export interface SidecarHandle {
  httpPort: number;
  grpcPort: number;
  close(): Promise<void>;
}

/** Starts a GameServer's sidecar on free ports of the range (serve wires it; controllers do not serve HTTP). */
export type StartSidecar = (namespace: string, name: string) => Promise<SidecarHandle>;

/** Marks the processes of this run of serve so that none outlives it (process-watchdog.ts). */
export interface RunMark {
  /** FLEETSIM_RUN in every process's environment. */
  readonly run: string;
  /** Called before a process starts. */
  watch(): void;
}

/** Consecutive failed starts before Ready after which the GameServer is given up as Unhealthy. */
export const MAX_FAILED_STARTS = 5;
/** The first restart's wait; it doubles per failed start (kubelet's back-off, shortened for local work). */
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** How long fleetsim's own shutdown lets a process go before killing it. */
const SHUTDOWN_GRACE_MS = 5000;
/** Retry of a sidecar that found no free port. */
const SIDECAR_RETRY_MS = 5000;

const SERVING_STATES = new Set(['Ready', 'Allocated', 'Reserved']);

interface GameProcess {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  sidecar: SidecarHandle | undefined;
  child: ChildProcess | undefined;
  /** Resolves when the current child has exited. */
  exited: Promise<void> | undefined;
  failedStarts: number;
  restartCount: number;
  everReady: boolean;
  timer: NodeJS.Timeout | undefined;
  /** Set once the process is being stopped for good. */
  stopping: Promise<void> | undefined;
  /** The pod's terminationGracePeriodSeconds, as last seen. */
  graceMs: number;
}

/** The pod template's spec, as far as a process needs it. */
interface PodSpec {
  containers?: Array<{ name?: string; env?: Array<{ name?: string; value?: string }>; image?: string }>;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
}

function podSpecOf(gs: GameServer): PodSpec {
  return ((gs.spec.template as { spec?: PodSpec }).spec ?? {}) as PodSpec;
}

/** Whether a GameServer runs a real command (its host ports are then listened on). */
export function hasCommand(gs: GameServer): boolean {
  return creationCommand(gs) !== undefined;
}

/** `FLEETSIM_PORT_<NAME>`: the port's name upper-cased, any other character as `_`. */
export function portVariable(name: string): string {
  return `FLEETSIM_PORT_${name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}

/**
 * A game-server process's environment, as a pod's container gets it: the container's `env`,
 * PATH and HOME so a command line resolves as in the shell that started fleetsim, its sidecar's
 * ports, its host ports (a local process listens on the host port) and its node's address (where
 * to listen so that pods on two nodes may hold one host port).
 */
export function processEnvironment(gs: GameServer, sidecar: { httpPort: number; grpcPort: number }, base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME']) if (base[name] !== undefined) env[name] = base[name]!;
  const spec = podSpecOf(gs);
  const containers = spec.containers ?? [];
  const container = containers.find((c) => c.name === gs.spec.container) ?? (containers.length === 1 ? containers[0] : undefined);
  for (const variable of container?.env ?? []) {
    if (typeof variable.name === 'string' && variable.name !== '') env[variable.name] = variable.value ?? '';
  }
  env.AGONES_SDK_GRPC_PORT = String(sidecar.grpcPort);
  env.AGONES_SDK_HTTP_PORT = String(sidecar.httpPort);
  const ports = gs.status.ports ?? [];
  if (gs.status.address) env.FLEETSIM_ADDRESS = gs.status.address;
  if (ports.length > 0) env.PORT = String(ports[0]!.port);
  for (const port of ports) if (port.name) env[portVariable(port.name)] = String(port.port);
  return env;
}

/** The wait before restart number `failedStarts` (1-based). */
export function backoffMs(failedStarts: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failedStarts - 1));
}

function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by signal ${signal}` : `exited with code ${code ?? 0}`;
}

/**
 * Real game-server processes: a GameServer created with the annotation `fleetsim.dev/command`
 * runs that command line (`/bin/sh -c`, in serve's working directory) as its game container,
 * with its own sidecar on two loopback ports, from the moment its pod would start (Scheduled).
 * As the kubelet and Agones treat a container: an exit before the GameServer was ever Ready
 * restarts it (with back-off, and gives up as Unhealthy after repeated failures); an exit later
 * makes it Unhealthy; a GameServer that is finished or deleted gets SIGTERM, its grace period,
 * then SIGKILL. Output and container state go to `cluster.pods`.
 */
export class GameServerProcesses {
  private readonly processes = new Map<string, GameProcess>();
  private subscription: Subscription | undefined;
  private readonly events: EventRecorder;

  constructor(
    private readonly cluster: GameServerProcessesPort,
    private readonly startSidecar: StartSidecar,
    private readonly options: { cwd?: string; env?: NodeJS.ProcessEnv; mark?: RunMark } = {},
  ) {
    this.events = new EventRecorder(cluster, 'kubelet');
  }

  /** Processes running now. */
  get running(): number {
    let n = 0;
    for (const p of this.processes.values()) if (p.child) n++;
    return n;
  }

  start(): void {
    // A restart on the same log starts again the processes of GameServers still there.
    for (const [key, gs] of this.cluster.gameServers.entries()) this.observe(key, gs);
    this.subscription = this.cluster.gameServerChanges$.subscribe((change) => this.observe(change.key, change.object));
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /** Stops every process fleetsim started (SIGTERM, a short grace, SIGKILL) and their sidecars. */
  async close(): Promise<void> {
    this.stop();
    await Promise.all([...this.processes.values()].map((p) => this.terminate(p, SHUTDOWN_GRACE_MS)));
  }

  private observe(key: string, gs: GameServer | undefined): void {
    const known = this.processes.get(key);
    if (!gs) {
      // Deleted: the pod goes with its grace period (the GameServer's last template said how long).
      if (known) void this.terminate(known, known.graceMs);
      return;
    }
    // Only the command the GameServer was created with runs: never one its annotations gained later.
    if (!known && !hasCommand(gs)) return;
    const state = gs.status.state;
    const terminating = gs.metadata.deletionTimestamp !== undefined;
    if (known) {
      if (SERVING_STATES.has(state)) known.everReady = true;
      known.graceMs = terminationGraceMs(gs);
      if (terminating) {
        void this.terminate(known, known.graceMs).then(() => this.cluster.termination.processExited(key, processCause(gs, 'the process exited after SIGTERM')));
      }
      else if (!SIDECAR_RUNNING_STATES.has(state)) void this.terminate(known, known.graceMs);
      return;
    }
    // Terminating with no process (fleetsim restarted meanwhile): nothing is left to wait for.
    if (terminating) return void this.cluster.termination.processExited(key, processCause(gs, 'no process is left to wait for (fleetsim restarted)'));
    if (!SIDECAR_RUNNING_STATES.has(state)) return;
    const created: GameProcess = {
      key,
      namespace: gs.metadata.namespace,
      name: gs.metadata.name,
      sidecar: undefined,
      child: undefined,
      exited: undefined,
      failedStarts: 0,
      restartCount: 0,
      everReady: SERVING_STATES.has(state),
      timer: undefined,
      stopping: undefined,
      graceMs: terminationGraceMs(gs),
    };
    this.processes.set(key, created);
    // A real process is told to stop and given its grace period: its GameServer terminates first.
    this.cluster.pods.setStopsSlowly(key, true);
    void this.launch(created);
  }

  private async launch(p: GameProcess): Promise<void> {
    p.timer = undefined;
    if (p.stopping) return;
    const gs = this.cluster.gameServers.getByKey(p.key);
    const command = gs && creationCommand(gs);
    if (!gs || !command) return this.forget(p);
    if (!p.sidecar) {
      try {
        p.sidecar = await this.startSidecar(p.namespace, p.name);
      } catch (error) {
        await this.record(gs, 'Warning', 'FailedSidecar', `could not start the sidecar: ${(error as Error).message}; retrying in ${SIDECAR_RETRY_MS / 1000}s`);
        p.timer = setTimeout(() => void this.launch(p), SIDECAR_RETRY_MS);
        return;
      }
      if (p.stopping) return;
    }
    const mark = this.options.mark;
    mark?.watch();
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: this.options.cwd ?? process.cwd(),
      env: { ...processEnvironment(gs, p.sidecar, this.options.env ?? process.env), ...(mark && { FLEETSIM_RUN: mark.run }) },
      // Its own process group, so stopping it reaches whatever the shell started.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.child = child;
    const startedAt = this.cluster.clock.now();
    this.setContainer(p, { kind: 'running', startedAt });
    this.collect(p, child, 'stdout');
    this.collect(p, child, 'stderr');
    p.exited = new Promise<void>((resolve) => {
      // 'error' (the shell itself could not start) is followed by 'close' only sometimes: settle once.
      let settled = false;
      const settle = (code: number | null, signal: NodeJS.Signals | null) => {
        if (settled) return;
        settled = true;
        p.child = undefined;
        resolve();
        void this.exited(p, code, signal, startedAt);
      };
      child.once('error', () => settle(127, null));
      child.once('close', settle);
    });
    if (child.pid !== undefined) await this.record(gs, 'Normal', 'Started', `Started container with command: ${command}`);
  }

  /** Keeps the process's output per GameServer (the pod's log). */
  private collect(p: GameProcess, child: ChildProcess, stream: 'stdout' | 'stderr'): void {
    const source = child[stream];
    if (!source) return;
    source.setEncoding('utf8');
    source.on('data', (chunk: string) => this.cluster.pods.writeOutput(p.key, stream, chunk, this.cluster.clock.now()));
    source.on('end', () => this.cluster.pods.endOutput(p.key, stream, this.cluster.clock.now()));
  }

  private async exited(p: GameProcess, code: number | null, signal: NodeJS.Signals | null, startedAt: number): Promise<void> {
    const finishedAt = this.cluster.clock.now();
    const terminated: Extract<ContainerState, { kind: 'terminated' }> = {
      kind: 'terminated',
      exitCode: code ?? 128 + (signal ? signalNumber(signal) : 0),
      ...(signal && { signal }),
      reason: code === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt,
    };
    if (p.stopping) {
      this.setContainer(p, terminated);
      return;
    }
    const gs = this.cluster.gameServers.getByKey(p.key);
    if (!gs) return void this.terminate(p, 0);
    const what = `the game server process ${exitText(code, signal)}`;
    const neverRestart = podSpecOf(gs).restartPolicy === 'Never';
    if (p.everReady || neverRestart || gs.status.state === 'Shutdown') {
      this.setContainer(p, terminated);
      if (gs.status.state !== 'Shutdown') {
        // A clean exit the pod does not restart completes it (Succeeded), which Agones's
        // controller turns into Shutdown; any other end is a failure: Unhealthy.
        const command =
          code === 0 && this.completesOnCleanExit(gs)
            ? ({ type: 'controller.shutdown', message: 'Pod is in Succeeded state' } as const)
            : ({ type: 'controller.unhealthy', message: `${what} (${p.everReady ? 'after Ready' : 'restartPolicy Never'})` } as const);
        await this.cluster.actors.sendByKey(p.key, command, processCause(gs, what));
      }
      return void this.terminate(p, 0);
    }
    p.failedStarts++;
    if (p.failedStarts >= MAX_FAILED_STARTS) {
      this.setContainer(p, terminated);
      const message = `${what}; gave up after ${p.failedStarts} failed starts before Ready (CrashLoopBackOff)`;
      await this.cluster.actors.sendByKey(p.key, { type: 'controller.unhealthy', message }, processCause(gs, message));
      return void this.terminate(p, 0);
    }
    const wait = backoffMs(p.failedStarts);
    p.restartCount++;
    this.cluster.pods.setContainer(p.key, {
      state: { kind: 'waiting', reason: 'CrashLoopBackOff', message: `back-off ${wait / 1000}s restarting failed container` },
      lastState: terminated,
      restartCount: p.restartCount,
    });
    await this.record(gs, 'Warning', 'BackOff', `Back-off restarting failed container: ${what}; restarting in ${wait / 1000}s`);
    p.timer = setTimeout(() => void this.launch(p), wait);
  }

  /**
   * Whether the kubelet leaves a container that exited 0 stopped, so the pod completes:
   * restartPolicy Never or OnFailure, or none given while SidecarContainers is on (Agones then
   * makes it Never).
   */
  private completesOnCleanExit(gs: GameServer): boolean {
    const policy = podSpecOf(gs).restartPolicy;
    return policy === 'Never' || policy === 'OnFailure' || (!policy && this.cluster.gates.SidecarContainers);
  }

  /** SIGTERM to the process group, SIGKILL after the grace period; then the sidecar closes. */
  private terminate(p: GameProcess, graceMs: number): Promise<void> {
    p.stopping ??= (async () => {
      clearTimeout(p.timer);
      const child = p.child;
      if (child?.pid !== undefined && p.exited) {
        signalGroup(child.pid, 'SIGTERM');
        const kill = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), graceMs);
        await p.exited;
        clearTimeout(kill);
        // Whatever the shell left behind in the group goes too.
        signalGroup(child.pid, 'SIGKILL');
      }
      await p.sidecar?.close();
      this.forget(p);
    })();
    return p.stopping;
  }


  private forget(p: GameProcess): void {
    if (this.processes.get(p.key) === p) this.processes.delete(p.key);
  }

  private setContainer(p: GameProcess, state: ContainerState): void {
    const previous = this.cluster.pods.container(p.key);
    this.cluster.pods.setContainer(p.key, {
      state,
      ...(previous?.lastState && { lastState: previous.lastState }),
      restartCount: p.restartCount,
    });
  }

  private async record(gs: GameServer, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    if (!this.cluster.gameServers.getByKey(objectKey(gs.metadata.namespace, gs.metadata.name))) return;
    // As the kubelet does, on the pod: `kubectl describe pod` lists them.
    await this.cluster.commit([this.events.event(podReference(gs), { type, reason, message })], processCause(gs, message)).catch(() => undefined);
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function signalNumber(signal: NodeJS.Signals): number {
  return { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 }[signal as string] ?? 0;
}
