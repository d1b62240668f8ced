import { type ChildProcess } from 'node:child_process';
import { type ContainerStatusJson, type Container, type PodStatus } from './pod.js';
import { type ProbeRunner } from './probes.js';

/** What the kubelet knows of one container of a pod, and how the Pod's status shows it. */

export type Role = 'init' | 'sidecar' | 'regular';

export type Terminated = { kind: 'terminated'; exitCode: number; reason: string; message?: string; startedAt: string; finishedAt: string; containerID: string };

export type RunState = { kind: 'waiting'; reason: string; message?: string } | { kind: 'running'; startedAt: string; pid: number } | Terminated;

export interface ContainerRun {
  spec: Container;
  role: Role;
  state: RunState;
  lastState?: Terminated;
  restartCount: number;
  ready: boolean;
  started: boolean;
  child?: ChildProcess;
  probes: ProbeRunner[];
  backoffMs: number;
  runningSince: number;
  /** The current process's exit code, once it ends. */
  exit: Promise<number>;
}

/** A container before its first start. */
export function containerRun(spec: Container, role: Role): ContainerRun {
  return {
    spec,
    role,
    state: { kind: 'waiting', reason: 'ContainerCreating' },
    restartCount: 0,
    ready: false,
    started: false,
    probes: [],
    backoffMs: 0,
    runningSince: 0,
    exit: Promise.resolve(0),
  };
}

/** RFC 3339 to the second, as the API server's times are. */
export function timestamp(ms = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function stateJson(state: RunState): Record<string, unknown> {
  switch (state.kind) {
    case 'waiting':
      return { waiting: { reason: state.reason, ...(state.message && { message: state.message }) } };
    case 'running':
      return { running: { startedAt: state.startedAt } };
    case 'terminated':
      return {
        terminated: {
          exitCode: state.exitCode,
          reason: state.reason,
          ...(state.message && { message: state.message }),
          startedAt: state.startedAt,
          finishedAt: state.finishedAt,
          containerID: state.containerID,
        },
      };
  }
}

export function containerStatusJson(run: ContainerRun): ContainerStatusJson {
  const containerID = run.state.kind === 'running' ? `process://${run.state.pid}` : run.state.kind === 'terminated' ? run.state.containerID : undefined;
  return {
    name: run.spec.name,
    image: run.spec.image,
    imageID: '',
    ...(containerID && { containerID }),
    ready: run.ready,
    started: run.started,
    restartCount: run.restartCount,
    state: stateJson(run.state),
    lastState: run.lastState ? stateJson(run.lastState) : {},
  };
}

/**
 * The pod's phase: Pending until its init containers are done and its containers have started,
 * Running while one runs or is to run again, Succeeded or Failed once all have ended for good.
 */
export function podPhase(runs: readonly ContainerRun[], initialized: boolean, finished: 'Succeeded' | 'Failed' | undefined): NonNullable<PodStatus['phase']> {
  if (finished) return finished;
  if (!initialized) return 'Pending';
  const regular = runs.filter((run) => run.role === 'regular');
  const everStarted = regular.every((run) => run.state.kind !== 'waiting' || run.restartCount > 0 || run.state.reason === 'CrashLoopBackOff');
  return everStarted ? 'Running' : 'Pending';
}
