import { describe, expect, it } from 'vitest';
import { gameServer } from '../../../test/helpers/gameservers.js';
import { hasPod, podOf, podReady, podRestarts, podStatusText } from './pod.js';

const withTemplate = (state: Parameters<typeof gameServer>[1] extends infer F ? F : never) => {
  const gs = gameServer('gs-1', { node: 'node-1', ...state });
  gs.spec.container = 'game';
  gs.spec.ports = [{ name: 'p', portPolicy: 'Dynamic', containerPort: 7777, hostPort: 7123, protocol: 'UDP' }] as typeof gs.spec.ports;
  gs.spec.template = { metadata: { labels: { tier: 'a' } }, spec: { containers: [{ name: 'game', image: 'img:1' }] } };
  return gs;
};

describe('the Pod of a GameServer', () => {
  it('exists once the controller created it', () => {
    expect(hasPod(withTemplate({ state: 'Creating' }))).toBe(false);
    expect(hasPod(withTemplate({ state: 'Starting' }))).toBe(true);
  });

  it('carries Agones labels, annotations, owner, ports and the SDK sidecar', () => {
    const pod = podOf(withTemplate({}), undefined);
    expect(pod.metadata.labels).toEqual({ tier: 'a', 'agones.dev/role': 'gameserver', 'agones.dev/gameserver': 'gs-1' });
    expect(pod.metadata.annotations['agones.dev/container']).toBe('game');
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'GameServer', name: 'gs-1', uid: 'uid-gs-1', controller: true })]);
    const spec = pod.spec as { nodeName: string; containers: Array<{ ports: unknown[] }>; initContainers: Array<{ name: string; restartPolicy: string }> };
    expect(spec.nodeName).toBe('node-1');
    expect(spec.containers[0]!.ports).toEqual([{ name: 'p', containerPort: 7777, hostPort: 7123, protocol: 'UDP' }]);
    expect(spec.initContainers[0]).toMatchObject({ name: 'agones-gameserver-sidecar', restartPolicy: 'Always' });
    expect(podReady(pod)).toBe('2/2');
    expect(podStatusText(pod)).toBe('Running');
  });

  it('takes its phase and container state from the kubelet when a process runs', () => {
    const waiting = podOf(withTemplate({ state: 'Scheduled' }), {
      state: { kind: 'waiting', reason: 'CrashLoopBackOff' },
      lastState: { kind: 'terminated', exitCode: 127, reason: 'Error', finishedAt: 0 },
      restartCount: 2,
    });
    expect(podStatusText(waiting)).toBe('CrashLoopBackOff');
    expect(podRestarts(waiting)).toBe(2);
    expect(podReady(waiting)).toBe('1/2');
    const failed = podOf(withTemplate({ state: 'Unhealthy' }), { state: { kind: 'terminated', exitCode: 3, reason: 'Error', finishedAt: 0 }, restartCount: 0 });
    expect((failed.status as { phase: string }).phase).toBe('Failed');
    const done = podOf(withTemplate({ state: 'Shutdown' }), { state: { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: 0 }, restartCount: 0 });
    expect((done.status as { phase: string }).phase).toBe('Succeeded');
    expect((podOf(withTemplate({ state: 'Starting' }), undefined).status as { phase: string }).phase).toBe('Pending');
  });
});
