import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Api, ApiError } from '../api.js';
import { postEvent } from '../events.js';
import { programOf } from '../images.js';
import { CONTAINER_LAUNCHER } from '../paths.js';
import { run } from '../shell.js';
import { containerEnv, expand } from './env.js';
import { type HostPorts } from './host-ports.js';
import { type PlannedMount, hostView, mountPlan } from './mounts.js';
import { type Container, type Pod, type PodCondition, type PodStatus } from './pod.js';
import { ProbeRunner } from './probes.js';
import { type ContainerRun, type Role, containerRun, containerStatusJson, podPhase, timestamp } from './status.js';
import { PodVolumes, type SourceObject, type SourcePlural, VolumeError } from './volumes.js';

/**
 * One pod on one node, from its sandbox to its deletion: a network namespace with an address on
 * the node's bridge and the pod's host ports opened on the node, its volumes, its init containers
 * in order (sidecars, `restartPolicy: Always`, started and left running), then its containers;
 * probes, restarts by policy with the kubelet's back-off, and its status written to the API server
 * as each of these changes. Deleted with a grace period, it stops its containers (SIGTERM, then
 * SIGKILL when the grace is over; sidecars after the others), and deletes the pod for good.
 */

export interface NodeContext {
  api: Api;
  nodeName: string;
  nodeIP: string;
  /** The node's bridge address: its pods' default route. */
  podGateway: string;
  hostPorts: HostPorts;
  images: Parameters<typeof programOf>[1];
  podsDir: string;
  hostsFile: string;
  allocateIP(uid: string): string;
  releaseIP(uid: string): void;
  log(line: string): void;
}

const BACKOFF_START_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;
/** A container that ran this long starts its back-off afresh. */
const BACKOFF_RESET_MS = 600_000;
const RETRY_MS = 2000;

export class PodWorker {
  private pod: Pod;
  private readonly uid: string;
  private readonly dir: string;
  private readonly netns: string;
  private podIP = '';
  private sandboxReady = false;
  private initialized = false;
  private finished: 'Succeeded' | 'Failed' | undefined;
  private terminating = false;
  private gone = false;
  private readonly runs: ContainerRun[];
  private volumes: PodVolumes | undefined;
  private readonly openedPorts: { protocol: string; port: number }[] = [];
  private readonly startTime = timestamp();
  private readonly transitions = new Map<string, { status: string; time: string }>();
  private publishTimer: NodeJS.Timeout | undefined;
  private publishing: Promise<void> = Promise.resolve();
  /** Resolves when the pod's containers have all stopped and it is torn down. */
  readonly done: Promise<void>;
  private wake: () => void = () => undefined;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly node: NodeContext,
    pod: Pod,
  ) {
    this.pod = pod;
    this.uid = pod.metadata.uid!;
    this.dir = join(node.podsDir, `${pod.metadata.namespace}_${pod.metadata.name}_${this.uid}`);
    this.netns = `fleetsim-oracle-pod-${this.uid.replace(/-/g, '').slice(0, 16)}`;
    const role = (container: Container, init: boolean): Role => (!init ? 'regular' : container.restartPolicy === 'Always' ? 'sidecar' : 'init');
    this.runs = [
      ...(pod.spec.initContainers ?? []).map((spec) => containerRun(spec, role(spec, true))),
      ...pod.spec.containers.map((spec) => containerRun(spec, 'regular')),
    ];
    this.done = this.lifecycle();
  }

  /** The latest of the pod from the API server; a deletion timestamp starts its termination. */
  update(pod: Pod): void {
    this.pod = pod;
    if (pod.metadata.deletionTimestamp && !this.terminating) void this.terminate((pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30) * 1000, true);
  }

  /** A Secret or ConfigMap changed: the pod's volumes that show it are written again. */
  sourceChanged(plural: SourcePlural, object: SourceObject): void {
    this.volumes?.refresh(plural, object);
  }

  /** The pod is no longer in the API server (deleted without grace): stop at once. */
  removed(): void {
    this.gone = true;
    if (!this.terminating) void this.terminate(0, false);
  }

  /** The kubelet is stopping: containers get a short grace, the pod is left in the API server. */
  shutdown(): Promise<void> {
    this.gone = true;
    if (!this.terminating) void this.terminate(2000, false);
    return this.done;
  }

  private get namespace(): string {
    return this.pod.metadata.namespace ?? 'default';
  }

  private get label(): string {
    return `${this.namespace}/${this.pod.metadata.name}`;
  }

  // -- the pod's life ------------------------------------------------------------------------------

  private async lifecycle(): Promise<void> {
    try {
      await this.setUp();
      if (!this.terminating) await this.runInitContainers();
      if (!this.terminating && !this.finished) {
        this.initialized = true;
        for (const container of this.runs.filter((c) => c.role === 'regular')) await this.start(container);
        this.publish();
      }
    } catch (error) {
      this.node.log(`${this.label}: ${(error as Error).message}`);
    }
    while (!this.terminating) await new Promise<void>((resolve) => (this.wake = resolve));
    await this.terminated;
    await this.tearDown();
  }

  private async setUp(): Promise<void> {
    mkdirSync(join(this.dir, 'logs'), { recursive: true });
    this.podIP = this.node.allocateIP(this.uid);
    await run('ip', ['netns', 'add', this.netns]);
    const hostSide = `fsp${this.uid.replace(/-/g, '').slice(0, 10)}`;
    await run('ip', ['-b', '-'], {
      input: [`link add ${hostSide} type veth peer name eth0 netns ${this.netns}`, `link set ${hostSide} master cbr0`, `link set ${hostSide} up`, ''].join('\n'),
    });
    await run('ip', ['-n', this.netns, '-b', '-'], {
      input: ['link set lo up', `addr add ${this.podIP}/24 dev eth0`, 'link set eth0 up', `route add default via ${this.node.podGateway}`, ''].join('\n'),
    });
    for (const container of [...(this.pod.spec.initContainers ?? []), ...this.pod.spec.containers]) {
      for (const port of container.ports ?? []) {
        if (!port.hostPort) continue;
        const protocol = port.protocol ?? 'TCP';
        try {
          await this.node.hostPorts.open(this.uid, protocol, port.hostPort, this.podIP, port.containerPort);
          this.openedPorts.push({ protocol, port: port.hostPort });
        } catch (error) {
          this.node.log(`${this.label}: host port ${protocol}/${port.hostPort}: ${(error as Error).message}`);
        }
      }
    }
    this.sandboxReady = true;
    for (const container of this.runs) container.state = { kind: 'waiting', reason: container.role === 'regular' && this.runs.some((c) => c.role !== 'regular') ? 'PodInitializing' : 'ContainerCreating' };
    this.publish();
    this.volumes = new PodVolumes(this.node.api, this.pod, join(this.dir, 'volumes'), this.addresses, this.node.log);
    for (;;) {
      try {
        await this.volumes.prepare();
        return;
      } catch (error) {
        if (!(error instanceof VolumeError) && !(error instanceof ApiError)) throw error;
        if (this.terminating) return;
        postEvent(this.node.api, this.pod, 'Warning', 'FailedMount', `MountVolume.SetUp failed: ${error.message}`, 'kubelet', this.node.nodeName);
        await this.pause(RETRY_MS);
      }
    }
  }

  private async runInitContainers(): Promise<void> {
    for (const container of this.runs.filter((c) => c.role !== 'regular')) {
      if (container.role === 'sidecar') {
        await this.start(container);
        while (!container.started && !this.terminating) await this.pause(100);
        continue;
      }
      for (;;) {
        await this.start(container);
        const code = await container.exit;
        if (this.terminating) return;
        if (code === 0) break;
        if ((this.pod.spec.restartPolicy ?? 'Always') === 'Never') {
          this.finish();
          return;
        }
        await this.backOff(container);
        if (this.terminating) return;
      }
    }
  }

  private get addresses() {
    return { podIP: this.podIP, hostIP: this.node.nodeIP };
  }

  // -- containers ----------------------------------------------------------------------------------

  /** Starts a container's process, or leaves it waiting (with the reason) when it cannot start. */
  private async start(container: ContainerRun): Promise<void> {
    for (;;) {
      if (this.terminating) return;
      const program = programOf(container.spec, this.node.images);
      if ('error' in program) {
        container.state = { kind: 'waiting', reason: 'ErrImagePull', message: program.error };
        this.publish();
        postEvent(this.node.api, this.pod, 'Warning', 'Failed', `Failed to pull image "${container.spec.image}": ${program.error}`, 'kubelet', this.node.nodeName);
        await this.pause(RETRY_MS);
        container.state = { kind: 'waiting', reason: 'ImagePullBackOff', message: `Back-off pulling image "${container.spec.image}"` };
        this.publish();
        await this.pause(BACKOFF_START_MS);
        continue;
      }
      let env: Record<string, string>;
      try {
        env = await containerEnv(this.node.api, this.pod, container.spec, this.addresses);
      } catch (error) {
        container.state = { kind: 'waiting', reason: 'CreateContainerConfigError', message: (error as Error).message };
        this.publish();
        await this.pause(RETRY_MS);
        continue;
      }
      if (this.terminating) return;
      this.launch(container, program.argv.map((arg) => expand(arg, env)), env, program.mount);
      return;
    }
  }

  private launch(container: ContainerRun, argv: string[], env: Record<string, string>, program: { target: string; source: string } | undefined): void {
    const stage = join(this.dir, 'stage', `${container.spec.name}-${container.restartCount}`);
    mkdirSync(stage, { recursive: true });
    const mounts: PlannedMount[] = [];
    for (const mount of container.spec.volumeMounts ?? []) {
      const volume = this.volumes?.paths.get(mount.name);
      if (volume === undefined) continue;
      const source = mount.subPath ? join(volume, mount.subPath) : volume;
      let file = false;
      try {
        file = statSync(source).isFile();
      } catch {
        mkdirSync(source, { recursive: true });
      }
      mounts.push({ target: mount.mountPath, source, file, readOnly: mount.readOnly ?? false });
    }
    if (program) mounts.push({ ...program, file: true, readOnly: true });
    if (!mounts.some((mount) => mount.target === '/etc/hosts')) mounts.push({ target: '/etc/hosts', source: this.node.hostsFile, file: true, readOnly: true });
    const plan = mountPlan(mounts, stage, hostView);
    const planFile = join(stage, 'plan');
    writeFileSync(planFile, `${plan.lines.join('\n')}\n`);
    const log = openSync(join(this.dir, 'logs', `${container.spec.name}.log`), 'a');
    const startedAt = timestamp();
    let child: ChildProcess;
    try {
      child = spawn('ip', ['netns', 'exec', this.netns, CONTAINER_LAUNCHER, planFile, plan.root, container.spec.workingDir ?? '/', '--', ...argv], {
        env,
        detached: true,
        stdio: ['ignore', log, log],
      });
    } finally {
      closeSync(log);
    }
    container.child = child;
    container.runningSince = Date.now();
    container.state = { kind: 'running', startedAt, pid: child.pid ?? 0 };
    container.exit = new Promise<number>((resolve) => {
      child.once('error', (error) => {
        this.node.log(`${this.label}: ${container.spec.name}: ${error.message}`);
      });
      child.once('exit', (code, signal) => {
        const exitCode = code ?? 128 + signalNumber(signal);
        this.exited(container, exitCode, startedAt);
        resolve(exitCode);
      });
    });
    this.startProbes(container);
    if (!container.spec.startupProbe) container.started = true;
    container.ready = container.started && !container.spec.readinessProbe;
    this.publish();
  }

  private startProbes(container: ContainerRun): void {
    const target = {
      podIP: this.podIP,
      ports: (container.spec.ports ?? []).concat(this.runs.flatMap((c) => c.spec.ports ?? [])),
      pid: () => (container.state.kind === 'running' ? container.state.pid : undefined),
    };
    const afterStart = () => {
      if (container.spec.livenessProbe) {
        const liveness = new ProbeRunner(container.spec.livenessProbe, target, (ok, why) => {
          if (ok || container.state.kind !== 'running') return;
          postEvent(this.node.api, this.pod, 'Warning', 'Unhealthy', `Liveness probe failed: ${why}`, 'kubelet', this.node.nodeName);
          postEvent(this.node.api, this.pod, 'Normal', 'Killing', `Container ${container.spec.name} failed liveness probe, will be restarted`, 'kubelet', this.node.nodeName);
          void this.kill(container, (container.spec.livenessProbe?.terminationGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000);
        });
        container.probes.push(liveness);
        liveness.start();
      }
      if (container.spec.readinessProbe) {
        const readiness = new ProbeRunner(container.spec.readinessProbe, target, (ok, why) => {
          if (!ok && container.ready) postEvent(this.node.api, this.pod, 'Warning', 'Unhealthy', `Readiness probe failed: ${why}`, 'kubelet', this.node.nodeName);
          container.ready = ok && container.state.kind === 'running';
          this.publish();
        });
        container.probes.push(readiness);
        readiness.start();
      }
    };
    if (container.spec.startupProbe) {
      const startup = new ProbeRunner(container.spec.startupProbe, target, (ok, why) => {
        startup.stop();
        if (ok) {
          container.started = true;
          container.ready = !container.spec.readinessProbe;
          this.publish();
          afterStart();
        } else {
          postEvent(this.node.api, this.pod, 'Warning', 'Unhealthy', `Startup probe failed: ${why}`, 'kubelet', this.node.nodeName);
          void this.kill(container, (this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000);
        }
      });
      container.probes.push(startup);
      startup.start();
    } else afterStart();
  }

  private exited(container: ContainerRun, exitCode: number, startedAt: string): void {
    for (const probe of container.probes.splice(0)) probe.stop();
    container.child = undefined;
    container.ready = false;
    container.started = false;
    container.state = {
      kind: 'terminated',
      exitCode,
      reason: exitCode === 0 ? 'Completed' : 'Error',
      startedAt,
      finishedAt: timestamp(),
      containerID: `process://${container.state.kind === 'running' ? container.state.pid : 0}`,
    };
    this.publish();
    if (this.terminating || this.finished) return;
    if (container.role === 'sidecar') void this.restart(container);
    else if (container.role === 'regular') {
      const policy = this.pod.spec.restartPolicy ?? 'Always';
      if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) void this.restart(container);
      else if (this.runs.filter((c) => c.role === 'regular').every((c) => c.state.kind === 'terminated')) this.finish();
    }
  }

  private async restart(container: ContainerRun): Promise<void> {
    await this.backOff(container);
    if (this.terminating || this.finished) return;
    await this.start(container);
  }

  /** The kubelet's crash-loop back-off: the first restart at once, then 10s doubling to 5 minutes. */
  private async backOff(container: ContainerRun): Promise<void> {
    const terminated = container.state.kind === 'terminated' ? container.state : undefined;
    if (terminated) container.lastState = terminated;
    container.restartCount++;
    if (Date.now() - container.runningSince > BACKOFF_RESET_MS) container.backoffMs = 0;
    const delay = container.backoffMs;
    container.backoffMs = delay === 0 ? BACKOFF_START_MS : Math.min(delay * 2, BACKOFF_MAX_MS);
    if (delay > 0) {
      container.state = {
        kind: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${delay / 1000}s restarting failed container=${container.spec.name} pod=${this.pod.metadata.name}_${this.namespace}(${this.uid})`,
      };
      this.publish();
      postEvent(this.node.api, this.pod, 'Warning', 'BackOff', 'Back-off restarting failed container', 'kubelet', this.node.nodeName);
      await this.pause(delay);
    }
  }

  /** An ended pod holds no host ports (the scheduler may give them to another pod). */
  private releasePorts(): void {
    for (const { protocol, port } of this.openedPorts.splice(0)) this.node.hostPorts.close(this.uid, protocol, port);
  }

  /** Every container that is to run has ended for good: stop the sidecars and end the pod. */
  private finish(): void {
    const regular = this.runs.filter((c) => c.role !== 'sidecar');
    this.finished = regular.every((c) => c.state.kind === 'terminated' && c.state.exitCode === 0) ? 'Succeeded' : 'Failed';
    void (async () => {
      for (const sidecar of this.runs.filter((c) => c.role === 'sidecar').reverse()) await this.kill(sidecar, (this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000);
      this.releasePorts();
      this.publish();
    })();
  }

  /** SIGTERM to the container's process group, SIGKILL when `graceMs` is over; resolves when it has exited. */
  private async kill(container: ContainerRun, graceMs: number): Promise<void> {
    const child = container.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    await container.exit;
    clearTimeout(timer);
  }

  // -- termination ---------------------------------------------------------------------------------

  private terminated: Promise<void> = new Promise(() => undefined);

  private terminate(graceMs: number, deleteAfter: boolean): Promise<void> {
    this.terminating = true;
    this.terminated = (async () => {
      const deadline = Date.now() + graceMs;
      const left = () => Math.max(0, deadline - Date.now());
      for (const container of this.runs) for (const probe of container.probes.splice(0)) probe.stop();
      await Promise.all(this.runs.filter((c) => c.role !== 'sidecar').map((c) => this.kill(c, left())));
      for (const sidecar of this.runs.filter((c) => c.role === 'sidecar').reverse()) await this.kill(sidecar, left());
      if (deleteAfter && !this.gone) {
        await this.flush();
        await this.node.api
          .delete(`/api/v1/namespaces/${this.namespace}/pods/${this.pod.metadata.name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: this.uid } })
          .catch((error: Error) => {
            if (!(error instanceof ApiError && (error.status === 404 || error.status === 409))) this.node.log(`${this.label}: deleting: ${error.message}`);
          });
      }
    })();
    this.wake();
    for (const sleeper of [...this.sleepers]) sleeper();
    return this.terminated;
  }

  private async tearDown(): Promise<void> {
    this.volumes?.stop();
    clearTimeout(this.publishTimer);
    this.releasePorts();
    await run('ip', ['netns', 'del', this.netns]).catch(() => undefined);
    this.node.releaseIP(this.uid);
  }

  /** Waits `ms`, cut short by termination. */
  private pause(ms: number): Promise<void> {
    if (this.terminating) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  // -- status --------------------------------------------------------------------------------------

  /** Writes the pod's status soon; changes close together go in one write. */
  private publish(): void {
    if (this.publishTimer || this.gone) return;
    this.publishTimer = setTimeout(() => {
      this.publishTimer = undefined;
      this.publishing = this.publishing.then(() => this.writeStatus());
    }, 20);
  }

  private async flush(): Promise<void> {
    if (this.publishTimer) {
      clearTimeout(this.publishTimer);
      this.publishTimer = undefined;
      this.publishing = this.publishing.then(() => this.writeStatus());
    }
    await this.publishing;
  }

  private async writeStatus(): Promise<void> {
    if (this.gone) return;
    try {
      await this.node.api.patch(`/api/v1/namespaces/${this.namespace}/pods/${this.pod.metadata.name}/status`, { status: this.status() });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) this.gone = true;
      else this.node.log(`${this.label}: status: ${(error as Error).message}`);
    }
  }

  status(): PodStatus {
    const regular = this.runs.filter((c) => c.role === 'regular');
    const init = this.runs.filter((c) => c.role !== 'regular');
    const notReady = [...init.filter((c) => c.role === 'sidecar'), ...regular].filter((c) => !c.ready).map((c) => c.spec.name);
    const incompleteInit = init.filter((c) => (c.role === 'sidecar' ? !c.started : !(c.state.kind === 'terminated' && c.state.exitCode === 0))).map((c) => c.spec.name);
    const initialized = this.initialized || incompleteInit.length === 0;
    const condition = (type: string, ok: boolean, reason?: string, message?: string): PodCondition => {
      const status = ok ? 'True' : 'False';
      const previous = this.transitions.get(type);
      const time = previous?.status === status ? previous.time : timestamp();
      this.transitions.set(type, { status, time });
      return { type, status, lastProbeTime: null, lastTransitionTime: time, ...(!ok && reason && { reason, message }) };
    };
    const containersReady = notReady.length === 0 && !this.finished;
    const scheduled = (this.pod.status?.conditions ?? []).filter((c) => c.type === 'PodScheduled');
    const finishedReason = this.finished ? 'PodCompleted' : undefined;
    const conditions: PodCondition[] = [
      condition('PodReadyToStartContainers', this.sandboxReady && !this.finished),
      condition('Initialized', initialized, finishedReason ?? 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
      condition('Ready', containersReady, finishedReason ?? 'ContainersNotReady', `containers with unready status: [${notReady.join(' ')}]`),
      condition('ContainersReady', containersReady, finishedReason ?? 'ContainersNotReady', `containers with unready status: [${notReady.join(' ')}]`),
      ...scheduled,
    ];
    return {
      phase: podPhase(this.runs, this.initialized, this.finished),
      conditions,
      hostIP: this.node.nodeIP,
      hostIPs: [{ ip: this.node.nodeIP }],
      ...(this.podIP && { podIP: this.podIP, podIPs: [{ ip: this.podIP }] }),
      startTime: this.startTime,
      containerStatuses: regular.map(containerStatusJson),
      ...(init.length > 0 && { initContainerStatuses: init.map(containerStatusJson) }),
    };
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 } as Record<string, number>)[signal] ?? 0;
}
