import { describe, expect, it } from 'vitest';
import { type ContainerRun, containerRun, containerStatusJson, podPhase } from './status.js';

const run = (state: ContainerRun['state'], extra: Partial<ContainerRun> = {}): ContainerRun => ({
  ...containerRun({ name: 'game', image: 'simple-game-server' }, 'regular'),
  state,
  ...extra,
});

describe("a pod's status as the stand-in kubelet writes it", () => {
  it('is Pending until initialized and started, Running while a container runs or restarts, then its end', () => {
    expect(podPhase([run({ kind: 'waiting', reason: 'ContainerCreating' })], false, undefined)).toBe('Pending');
    expect(podPhase([run({ kind: 'waiting', reason: 'ErrImagePull' })], true, undefined)).toBe('Pending');
    expect(podPhase([run({ kind: 'running', startedAt: 't', pid: 7 })], true, undefined)).toBe('Running');
    expect(podPhase([run({ kind: 'waiting', reason: 'CrashLoopBackOff' }, { restartCount: 2 })], true, undefined)).toBe('Running');
    expect(podPhase([run({ kind: 'running', startedAt: 't', pid: 7 })], true, 'Failed')).toBe('Failed');
  });

  it("shows a container's state, its last run's end, and an id naming its process", () => {
    const ended = { kind: 'terminated' as const, exitCode: 137, reason: 'Error', startedAt: 'a', finishedAt: 'b', containerID: 'process://6' };
    expect(containerStatusJson(run({ kind: 'running', startedAt: 't', pid: 7 }, { restartCount: 1, lastState: ended, ready: true, started: true }))).toEqual({
      name: 'game',
      image: 'simple-game-server',
      imageID: '',
      containerID: 'process://7',
      ready: true,
      started: true,
      restartCount: 1,
      state: { running: { startedAt: 't' } },
      lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: 'a', finishedAt: 'b', containerID: 'process://6' } },
    });
    expect(containerStatusJson(run({ kind: 'waiting', reason: 'ImagePullBackOff', message: 'Back-off' })).state).toEqual({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off' } });
  });
});
