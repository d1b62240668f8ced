import { isIP } from 'node:net';
import type { AgonesInstallPort } from './ports.js';
import { rfc3339 } from '../kinds/meta.js';
import { NAMESPACE_KIND, namespaceObject } from '../kinds/namespace/namespace.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { SERVICE_KIND } from '../kinds/service/definition.js';
import type { Cause } from '../log/cause.js';

/**
 * What fleetsim installs of Agones's own deployment, where Agones's Helm chart puts it: objects in
 * `agones-system` (the allocator's Service and Secrets, the ping Services), written to the log at
 * start-up so that clients find them through the API as they would in a cluster.
 */

export const AGONES_NAMESPACE = 'agones-system';

/** The address a client reaches a listener on `host` by: loopback when it listens everywhere. */
export function ingressAddress(host: string | undefined): string {
  if (!host || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** The metadata of an object the install makes (uid and creation kept from `current` when it is rewritten). */
export function installedMeta(cluster: AgonesInstallPort, namespace: string, name: string, labels: Record<string, string>, current?: Resource): Resource['metadata'] {
  return {
    name,
    namespace,
    uid: current?.metadata.uid ?? cluster.rng.uid(),
    resourceVersion: '0',
    generation: 1,
    creationTimestamp: current?.metadata.creationTimestamp ?? rfc3339(cluster.clock.now()),
    labels,
    annotations: {},
  };
}

/** The event creating `agones-system`, when the log has not got it. */
export function agonesNamespaceCreation(cluster: AgonesInstallPort) {
  if (cluster.get(NAMESPACE_KIND, '', AGONES_NAMESPACE)) return [];
  const object = namespaceObject(AGONES_NAMESPACE, cluster.rng.uid(), cluster.clock.now());
  return [resourceEvent('ResourceCreated', NAMESPACE_KIND, '', AGONES_NAMESPACE, { object })];
}

export interface InstalledService {
  labels: Record<string, string>;
  selector: Record<string, string>;
  ports: Array<{ name: string; protocol: 'TCP' | 'UDP'; port: number }>;
  /** The address its listeners are bound to. */
  host: string | undefined;
}

/**
 * A LoadBalancer Service in agones-system for listeners fleetsim runs itself: its ingress is the
 * address a client reaches them by, and since each listener is its own load balancer, a port is
 * the one it listens on. Written at each start (ports may change); `undefined` removes it.
 */
export async function publishAgonesService(cluster: AgonesInstallPort, name: string, service: InstalledService | undefined, cause: Cause): Promise<void> {
  const current = cluster.get(SERVICE_KIND, AGONES_NAMESPACE, name);
  if (!service) {
    if (current) await cluster.commit([resourceEvent('ResourceDeleted', SERVICE_KIND, AGONES_NAMESPACE, name, {})], cause);
    return;
  }
  const ingress = ingressAddress(service.host);
  const spec = {
    type: 'LoadBalancer',
    selector: service.selector,
    ports: service.ports.map((p) => ({ ...p, targetPort: p.port })),
    externalTrafficPolicy: 'Cluster',
  };
  const status = { loadBalancer: { ingress: [isIP(ingress) ? { ip: ingress } : { hostname: ingress }] } };
  if (current && JSON.stringify([current.spec, current.status]) === JSON.stringify([spec, status])) return;
  const object = { apiVersion: 'v1', kind: SERVICE_KIND, metadata: installedMeta(cluster, AGONES_NAMESPACE, name, service.labels, current), spec, status } as Resource;
  const type = current ? 'ResourceUpdated' : 'ResourceCreated';
  await cluster.commit([...agonesNamespaceCreation(cluster), resourceEvent(type, SERVICE_KIND, AGONES_NAMESPACE, name, { object })], cause);
}
