import { afterEach, describe, expect, it } from 'vitest';
import { POD_DEFINITION } from '../kinds/pod/definition.js';
import { SERVICE_DEFINITION } from '../kinds/service/definition.js';
import { serviceRouting } from './service-routing.js';
import { type TestCluster, testCluster } from '../../test/helpers/cluster.js';

const IMAGE = 'us-docker.pkg.dev/agones-images/examples/autoscaler-webhook:0.21';

describe('a webhook service reference, routed as kube-proxy would', () => {
  let plane: TestCluster | undefined;
  afterEach(() => plane?.close());

  it("reaches the listener of a pod the Service's selector picks, by the targetPort's name; says why when nothing can be reached", async () => {
    plane = await testCluster({ listen: true });
    const { service, podProcesses, cluster } = plane;
    const resolve = serviceRouting(cluster, podProcesses, cluster.rng);
    const pod = (name: string, app: string, image: string) =>
      service.create(POD_DEFINITION, 'default', { metadata: { name, labels: { app } }, spec: { containers: [{ name: 'c', image, ports: [{ name: 'autoscaler', containerPort: 8000 }] }] } });
    const svc = (name: string, app: string) => service.create(SERVICE_DEFINITION, 'default', { metadata: { name }, spec: { selector: { app }, ports: [{ port: 8000, targetPort: 'autoscaler' }] } });

    // A Service fleetsim does not hold is whatever listens on the loopback on its port.
    expect(resolve({ namespace: 'default', name: 'elsewhere', port: 8000 })).toEqual({ host: '127.0.0.1', port: 8000 });

    await svc('empty', 'none');
    expect(() => resolve({ namespace: 'default', name: 'empty', port: 8000 })).toThrow('no endpoints available for service "empty" in namespace "default"');
    expect(() => resolve({ namespace: 'default', name: 'empty', port: 80 })).toThrow('service "empty" in namespace "default" has no port 80');

    await pod('nginx', 'web', 'nginx:alpine');
    await svc('web', 'web');
    expect(() => resolve({ namespace: 'default', name: 'web', port: 8000 })).toThrow(/connection refused: no process listens/);

    await pod('hook', 'hook', IMAGE);
    await svc('hook', 'hook');
    const address = await (async () => {
      for (let i = 0; i < 1000; i++) {
        const listening = podProcesses.endpoint('default', 'hook', 8000);
        if (listening) return listening;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error('the example never listened');
    })();
    expect(resolve({ namespace: 'default', name: 'hook', port: 8000 })).toEqual(address);
  });

  it('picks one of several endpoints at random for each call, as kube-proxy does, by the seeded draws', async () => {
    plane = await testCluster({ listen: true });
    const { service, podProcesses, cluster } = plane;
    for (const name of ['hook-a', 'hook-b', 'hook-c']) {
      await service.create(POD_DEFINITION, 'default', {
        metadata: { name, labels: { app: 'hooks' } },
        spec: { containers: [{ name: 'c', image: IMAGE, ports: [{ name: 'autoscaler', containerPort: 8000 }] }] },
      });
    }
    await service.create(SERVICE_DEFINITION, 'default', { metadata: { name: 'hooks' }, spec: { selector: { app: 'hooks' }, ports: [{ port: 8000, targetPort: 'autoscaler' }] } });
    const listeners = new Map<string, string>();
    for (let i = 0; i < 1000 && listeners.size < 3; i++) {
      for (const name of ['hook-a', 'hook-b', 'hook-c']) {
        const endpoint = podProcesses.endpoint('default', name, 8000);
        if (endpoint) listeners.set(`${endpoint.host}:${endpoint.port}`, name);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(listeners.size).toBe(3);
    const reference = { namespace: 'default', name: 'hooks', port: 8000 };
    const podReached = (address: { host: string; port: number }) => listeners.get(`${address.host}:${address.port}`);

    // Each draw names the endpoint, in the pods' name order.
    const draws = [2, 0, 1, 2];
    const scripted = serviceRouting(cluster, podProcesses, { int: () => draws.shift()! });
    expect([1, 2, 3, 4].map(() => podReached(scripted(reference)))).toEqual(['hook-c', 'hook-a', 'hook-b', 'hook-c']);

    // With the cluster's generator, calls spread over every pod.
    const resolve = serviceRouting(cluster, podProcesses, cluster.rng);
    const reached = new Set(Array.from({ length: 60 }, () => podReached(resolve(reference))));
    expect(reached).toEqual(new Set(['hook-a', 'hook-b', 'hook-c']));
  });
});
