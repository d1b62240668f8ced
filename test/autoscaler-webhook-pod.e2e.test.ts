import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { skipWithout } from './helpers/tools.js';
import { createServerCertificate, createTestCa } from './helpers/tls.js';

/**
 * Agones's autoscaler-webhook example run as a Pod behind a Service, as Agones's e2e suite sets
 * it up: the Pod, Service, Fleet and a Webhook FleetAutoscaler naming the Service are created
 * with kubectl, a GameServer is allocated, and the fleet scales as the example's rule says
 * (an allocated share above 0.7 doubles the replicas). The Pod's deletion stops its process,
 * and the autoscaler then reports it cannot reach the webhook. With a TLS Secret mounted at the
 * example's certs path it serves HTTPS, which the autoscaler reaches only with the `caBundle` of
 * the CA that signed it.
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
  const fleet = async (name = 'webhook') => (await request('GET', `${FLEETS}/${name}`)).json as { spec: { replicas: number }; status?: { readyReplicas: number; allocatedReplicas: number } };
  const autoscalerWarned = async (name: string, message: RegExp) => {
    const events = (await request('GET', EVENTS)).json as { items: Array<{ type: string; message: string; involvedObject: { kind: string; name: string } }> };
    return events.items.some((e) => e.type === 'Warning' && e.involvedObject.kind === 'FleetAutoscaler' && e.involvedObject.name === name && message.test(e.message));
  };
  const allocate = async (fleetName: string) => {
    const allocation = await request('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': fleetName } }] },
    });
    expect(allocation.json, allocation.text).toMatchObject({ status: { state: 'Allocated' } });
  };
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

  /** The example's Pod (a volume and its mount when given), a Service to it, a fleet and a Webhook autoscaler of one name. */
  const webhookSetup = (name: string, options: { caBundle?: string; volume?: unknown; mountPath?: string } = {}) => {
    const autoscaler = (caBundle?: string) => ({
      apiVersion: 'autoscaling.agones.dev/v1',
      kind: 'FleetAutoscaler',
      metadata: { name },
      spec: {
        fleetName: name,
        policy: { type: 'Webhook', webhook: { service: { name, namespace: 'default', path: 'scale' }, ...(caBundle && { caBundle }) } },
        sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } },
      },
    });
    const container = {
      name: 'webhook',
      image: WEBHOOK_IMAGE,
      ports: [{ name: 'autoscaler', containerPort: 8000 }],
      env: [{ name: 'FIXED_REPLICAS', value: 'false' }],
      ...(options.volume !== undefined && { volumeMounts: [{ name: 'secret-volume', mountPath: options.mountPath }] }),
    };
    const items = [
      { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { containers: [container], ...(options.volume !== undefined && { volumes: [options.volume] }) } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ports: [{ name: 'web', port: 8000, targetPort: 'autoscaler' }] } },
      fleetManifest(name, 1, { spec: { health: { disabled: true } } }),
      autoscaler(options.caBundle),
    ];
    return { list: { apiVersion: 'v1', kind: 'List', items }, autoscaler };
  };

  it('scales the fleet as the example computes, and stops answering once its Pod is deleted', async () => {
    const file = join(home, 'webhook.json');
    writeFileSync(file, JSON.stringify(webhookSetup('webhook').list));
    expect(await kubectl.ok(['create', '-f', file])).toMatch('pod/webhook created');
    const pod = await kubectl.json<{ status: { phase: string; podIP: string } }>(['get', 'pod', 'webhook', '-o', 'json']);
    expect(pod.status).toMatchObject({ phase: 'Running', podIP: '127.0.0.1' });

    await advanceUntil('the fleet Ready', async () => (await fleet()).status?.readyReplicas === 1);
    await allocate('webhook');
    // 1 of 1 allocated is above 0.7: the example doubles the fleet; 1 of 2 is within its bounds, so it stays at 2.
    await advanceUntil('the fleet scaled to 2', async () => (await fleet()).spec.replicas === 2);
    await advanceUntil('the fleet Ready at 2', async () => (await fleet()).status?.readyReplicas === 1 && (await fleet()).status?.allocatedReplicas === 1);
    const status = (await request('GET', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/webhook')).json as { status: { lastAppliedPolicy: string; desiredReplicas: number } };
    expect(status.status).toMatchObject({ lastAppliedPolicy: 'Webhook', desiredReplicas: 2 });
    expect((await fleet()).spec.replicas).toBe(2);

    expect(await kubectl.ok(['delete', 'pod', 'webhook'])).toMatch('pod "webhook" deleted');
    await advanceUntil('a Warning that the webhook is unreachable', () => autoscalerWarned('webhook', /Error calculating desired fleet size.*no endpoints available for service "webhook"/));
  });

  it('serves HTTPS with a TLS Secret mounted at the example\'s certs path, trusted through the caBundle only', async () => {
    const ca = createTestCa('webhook test CA');
    const other = createTestCa('another CA');
    const certificate = createServerCertificate(ca, ['webhook-tls.default.svc']);
    writeFileSync(join(home, 'tls.crt'), certificate.cert);
    writeFileSync(join(home, 'tls.key'), certificate.key);
    expect(await kubectl.ok(['create', 'secret', 'tls', 'webhook-certs', `--cert=${join(home, 'tls.crt')}`, `--key=${join(home, 'tls.key')}`])).toMatch('secret/webhook-certs created');
    // Signed by another CA at first: the example's certificate is not trusted.
    const setup = webhookSetup('webhook-tls', { caBundle: other.caBundle, volume: { name: 'secret-volume', secret: { secretName: 'webhook-certs' } }, mountPath: '/home/service/certs' });
    const file = join(home, 'webhook-tls.json');
    writeFileSync(file, JSON.stringify(setup.list));
    expect(await kubectl.ok(['create', '-f', file])).toMatch('pod/webhook-tls created');
    const pod = await kubectl.json<{ spec: { volumes: unknown[]; containers: Array<{ volumeMounts: unknown[] }> } }>(['get', 'pod', 'webhook-tls', '-o', 'json']);
    expect(pod.spec.volumes).toEqual([{ name: 'secret-volume', secret: { secretName: 'webhook-certs' } }]);
    expect(pod.spec.containers[0]!.volumeMounts).toEqual([{ name: 'secret-volume', mountPath: '/home/service/certs' }]);

    await advanceUntil('the fleet Ready', async () => (await fleet('webhook-tls')).status?.readyReplicas === 1);
    await allocate('webhook-tls');
    await advanceUntil('a Warning that the webhook is not trusted', () => autoscalerWarned('webhook-tls', /the certificate of the webhook https:\/\/webhook-tls\.default\.svc:8000\/scale is not trusted/));
    expect((await fleet('webhook-tls')).spec.replicas).toBe(1);

    writeFileSync(file, JSON.stringify(setup.autoscaler(ca.caBundle)));
    expect(await kubectl.ok(['apply', '-f', file])).toMatch('fleetautoscaler.autoscaling.agones.dev/webhook-tls');
    await advanceUntil('the fleet scaled to 2 over HTTPS', async () => (await fleet('webhook-tls')).spec.replicas === 2);
    const status = (await request('GET', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/webhook-tls')).json as { status: { lastAppliedPolicy: string } };
    expect(status.status.lastAppliedPolicy).toBe('Webhook');
  });
});
