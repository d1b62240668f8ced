import { afterEach, describe, expect, it } from 'vitest';
import { POD_DEFINITION } from '../kinds/pod/definition.js';
import { type AutoscalerWebhookSettings, answerReview, autoscalerWebhookSettings } from './autoscaler-webhook.js';
import { type TestCluster, testCluster } from '../../test/helpers/cluster.js';

const IMAGE = 'us-docker.pkg.dev/agones-images/examples/autoscaler-webhook:0.21';

function settingsOf(env: Record<string, string> = {}, args?: string[]): AutoscalerWebhookSettings {
  const settings = autoscalerWebhookSettings({ name: 'webhook', image: IMAGE, env: Object.entries(env).map(([name, value]) => ({ name, value })), ...(args && { args }) });
  if ('error' in settings) throw new Error(settings.error);
  return settings;
}

function review(replicas: number, allocatedReplicas: number, annotations?: Record<string, string>): string {
  return JSON.stringify({ request: { uid: 'u-1', name: 'f', namespace: 'default', status: { replicas, readyReplicas: replicas - allocatedReplicas, reservedReplicas: 0, allocatedReplicas }, ...(annotations && { annotations }) } });
}

const answer = (body: string, settings = settingsOf()) => {
  const a = answerReview(body, settings);
  return { status: a.status, response: a.status === 200 ? (JSON.parse(a.body) as { response: unknown }).response : a.body };
};

describe("the autoscaler-webhook example's rule", () => {
  it('doubles a fleet whose allocated share is above 0.7, halves one below 0.3 with more than 2 replicas, and leaves the rest', () => {
    expect(answer(review(1, 1)).response).toEqual({ uid: 'u-1', scale: true, replicas: 2 });
    expect(answer(review(3, 3)).response).toEqual({ uid: 'u-1', scale: true, replicas: 6 });
    expect(answer(review(10, 7)).response).toEqual({ uid: 'u-1', scale: false, replicas: 10 });
    expect(answer(review(5, 1)).response).toEqual({ uid: 'u-1', scale: true, replicas: 3 });
    expect(answer(review(2, 0)).response).toEqual({ uid: 'u-1', scale: false, replicas: 2 });
    expect(answer(review(0, 0)).response).toEqual({ uid: 'u-1', scale: false, replicas: 0 });
  });

  it('reads its factor, thresholds and minimum from the environment, keeping the down trigger under up/factor', () => {
    const s = settingsOf({ SCALE_FACTOR: '3', REPLICA_UPSCALE_TRIGGER: '0.9', REPLICA_DOWNSCALE_TRIGGER: '0.2', MIN_REPLICAS_COUNT: '0' });
    expect(s).toMatchObject({ scaleFactor: 3, replicaUpperThreshold: 0.9, replicaLowerThreshold: 0.2, minReplicasCount: 0, port: 8000 });
    // 0.5 is not below 0.9/3, so the default 0.3 stays, which is not below it either: 0.9/(3+1).
    expect(settingsOf({ SCALE_FACTOR: '3', REPLICA_UPSCALE_TRIGGER: '0.9', REPLICA_DOWNSCALE_TRIGGER: '0.5' }).replicaLowerThreshold).toBeCloseTo(0.225);
    expect(settingsOf({ SCALE_FACTOR: '4' }).replicaLowerThreshold).toBeCloseTo(0.7 / 5);
    expect(answer(review(4, 4), s).response).toEqual({ uid: 'u-1', scale: true, replicas: 12 });
    expect(settingsOf({ PORT: '9000' }, ['-port=7000']).port).toBe(9000);
    expect(settingsOf({}, ['-port', '7000']).port).toBe(7000);
    expect(autoscalerWebhookSettings({ image: IMAGE, env: [{ name: 'SCALE_FACTOR', value: 'two' }] })).toEqual({ error: 'Could not parse environment SCALE_FACTOR variable' });
  });

  it('with FIXED_REPLICAS answers the fleet\'s fixedReplicas annotation, refusing one that is not a whole number >= 0', () => {
    const fixed = settingsOf({ FIXED_REPLICAS: 'true' });
    expect(answer(review(1, 1, { fixedReplicas: '11' }), fixed).response).toEqual({ uid: 'u-1', scale: true, replicas: 11 });
    expect(answer(review(1, 1), fixed).response).toEqual({ uid: 'u-1', scale: false, replicas: 1 });
    expect(answer(review(1, 1, { fixedReplicas: 'x' }), fixed)).toEqual({ status: 400, response: 'Invalid fixedReplicas value. Must be an integer.\n' });
    expect(answer(review(1, 1, { fixedReplicas: '-1' }), fixed)).toEqual({ status: 400, response: 'Invalid fixedReplicas value. Must be >= 0.\n' });
    expect(answer('{', fixed).status).toBe(500);
  });
});

describe('a created pod running the example', () => {
  let plane: TestCluster | undefined;
  afterEach(() => plane?.close());

  it('listens while its pod exists, on /scale and /health, and stops when the pod is deleted', async () => {
    plane = await testCluster({ listen: true });
    const { service, podProcesses } = plane;
    await service.create(POD_DEFINITION, 'default', {
      metadata: { name: 'hook' },
      spec: { containers: [{ name: 'webhook', image: IMAGE, ports: [{ name: 'autoscaler', containerPort: 8000 }] }] },
    });
    let endpoint = podProcesses.endpoint('default', 'hook', 8000);
    for (let i = 0; !endpoint && i < 1000; i++) {
      await new Promise((r) => setTimeout(r, 5));
      endpoint = podProcesses.endpoint('default', 'hook', 8000);
    }
    expect(endpoint).toBeDefined();
    const url = `http://${endpoint!.host}:${endpoint!.port}`;
    expect(await (await fetch(`${url}/health`)).text()).toBe('Healthy');
    const scaled = await fetch(`${url}/scale`, { method: 'POST', body: review(1, 1) });
    expect(await scaled.json()).toMatchObject({ response: { scale: true, replicas: 2 } });
    expect((await fetch(`${url}/scale2`, { method: 'POST', body: review(1, 1) })).status).toBe(404);
    expect(podProcesses.endpoint('default', 'hook', 9000)).toBeUndefined();

    await service.delete(POD_DEFINITION, 'default', 'hook');
    expect(podProcesses.endpoint('default', 'hook', 8000)).toBeUndefined();
    await podProcesses.close();
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
