import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { skipWithout } from './helpers/tools.js';

/**
 * Agones's autoscaler-webhook example run as a Pod behind a Service, as Agones's e2e suite sets
 * it up: the Pod, Service, Fleet and a Webhook FleetAutoscaler naming the Service are created
 * with kubectl, a GameServer is allocated, and the fleet scales as the example's rule says
 * (an allocated share above 0.7 doubles the replicas). The Pod's deletion stops its process,
 * and the autoscaler then reports it cannot reach the webhook.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const EVENTS = '/api/v1/namespaces/default/events';
const WEBHOOK_IMAGE = 'us-docker.pkg.dev/agones-images/examples/autoscaler-webhook:0.21';

afterAll(async () => {
  await killAll();
});

describe.sequential('the autoscaler-webhook example as a Pod behind a Service', () => {
  skipWithout(KUBECTL);
  let serve: ServeProcess;
  let kubectl: Kubectl;
  let home: string;

  const request = (method: string, path: string, body?: unknown) => apiRequest(serve.baseUrl, method, path, { body });
  const fleet = async () => (await request('GET', `${FLEETS}/web`)).json as { spec: { replicas: number }; status?: { readyReplicas: number; allocatedReplicas: number } };
  /** Moves the virtual clock a second at a time until `check` holds (the webhook's calls need real round trips between). */
  const advanceUntil = async (what: string, check: () => Promise<boolean>) => {
    for (let step = 0; step < 300; step++) {
      if (await check()) return;
      const res = await request('POST', '/fleetsim/v1/clock', { advanceSeconds: 1 });
      expect(res.status, res.text).toBe(200);
    }
    throw new Error(`${what}: not reached after 300 s of virtual time\n${serve.process.describe()}`);
  };

  beforeAll(async () => {
    serve = await startServe(['--clock', 'virtual', '--db', ':memory:', '--no-default-fleet', '--nodes', '2']);
    home = mkdtempSync(join(tmpdir(), 'fleetsim-webhook-pod-'));
    kubectl = new Kubectl(serve.baseUrl, home);
  });

  it('scales the fleet as the example computes, and stops answering once its Pod is deleted', async () => {
    const manifests = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'webhook', labels: { app: 'webhook' } },
          spec: { containers: [{ name: 'webhook', image: WEBHOOK_IMAGE, ports: [{ name: 'autoscaler', containerPort: 8000 }], env: [{ name: 'FIXED_REPLICAS', value: 'false' }] }] },
        },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'webhook' }, spec: { selector: { app: 'webhook' }, ports: [{ name: 'web', port: 8000, targetPort: 'autoscaler' }] } },
        fleetManifest('web', 1, { spec: { health: { disabled: true } } }),
        {
          apiVersion: 'autoscaling.agones.dev/v1',
          kind: 'FleetAutoscaler',
          metadata: { name: 'web' },
          spec: { fleetName: 'web', policy: { type: 'Webhook', webhook: { service: { name: 'webhook', namespace: 'default', path: 'scale' } } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } } },
        },
      ],
    };
    const file = join(home, 'webhook.json');
    writeFileSync(file, JSON.stringify(manifests));
    expect(await kubectl.ok(['create', '-f', file])).toMatch('pod/webhook created');
    const pod = await kubectl.json<{ status: { phase: string; podIP: string } }>(['get', 'pod', 'webhook', '-o', 'json']);
    expect(pod.status).toMatchObject({ phase: 'Running', podIP: '127.0.0.1' });

    await advanceUntil('the fleet Ready', async () => (await fleet()).status?.readyReplicas === 1);
    const allocation = await request('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'web' } }] },
    });
    expect(allocation.json, allocation.text).toMatchObject({ status: { state: 'Allocated' } });
    // 1 of 1 allocated is above 0.7: the example doubles the fleet; 1 of 2 is within its bounds, so it stays at 2.
    await advanceUntil('the fleet scaled to 2', async () => (await fleet()).spec.replicas === 2);
    await advanceUntil('the fleet Ready at 2', async () => (await fleet()).status?.readyReplicas === 1 && (await fleet()).status?.allocatedReplicas === 1);
    const status = (await request('GET', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/web')).json as { status: { lastAppliedPolicy: string; desiredReplicas: number } };
    expect(status.status).toMatchObject({ lastAppliedPolicy: 'Webhook', desiredReplicas: 2 });
    expect((await fleet()).spec.replicas).toBe(2);

    expect(await kubectl.ok(['delete', 'pod', 'webhook'])).toMatch('pod "webhook" deleted');
    await advanceUntil('a Warning that the webhook is unreachable', async () => {
      const events = (await request('GET', EVENTS)).json as { items: Array<{ type: string; message: string; involvedObject: { kind: string; name: string } }> };
      return events.items.some(
        (e) => e.type === 'Warning' && e.involvedObject.kind === 'FleetAutoscaler' && e.involvedObject.name === 'web' && /Error calculating desired fleet size.*no endpoints available for service "webhook"/.test(e.message),
      );
    });
  });
});
