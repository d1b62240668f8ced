import { loopbackServiceResolver, type ServiceResolver } from '../autoscaler/webhook-client.js';
import { containersOf } from '../kinds/pod/created-pod.js';
import { hasLabels } from '../kinds/label-selector.js';
import { POD_KIND } from '../kinds/pod/pod.js';
import type { Resource } from '../kinds/resource.js';
import { SERVICE_KIND } from '../kinds/service/definition.js';
import type { StoreReads } from '../runtime/store-ports.js';
import type { SeededRandom } from '../clock.js';
import type { StoredPodProcesses } from '../sim/pod-processes.js';

interface ServicePortSpec {
  port?: number;
  targetPort?: number | string;
}

/** The container port a Service's targetPort names on a pod: a number as it is, a name by the pod's container ports. */
function podPortOf(pod: Resource, targetPort: number | string): number | undefined {
  if (typeof targetPort === 'number') return targetPort;
  if (/^\d+$/.test(targetPort)) return Number(targetPort);
  for (const container of containersOf(pod)) {
    const port = container.ports?.find((p) => p.name === targetPort);
    if (port?.containerPort) return port.containerPort;
  }
  return undefined;
}

/**
 * How a webhook's `service` reference is reached, as kube-proxy would route it: the Service's
 * port, then one of its endpoints (the Running pods its selector picks that have the targetPort)
 * chosen at random for each call, with the cluster's seeded generator; a call to an endpoint whose
 * process does not listen there is refused, as it would be. A Service fleetsim does not know (one
 * created elsewhere, as the webhook tests of fleetsim's own suite do with a local server) is
 * whatever listens on 127.0.0.1 on its port.
 */
export function serviceRouting(
  store: Pick<StoreReads, 'get' | 'readModel'>,
  processes: Pick<StoredPodProcesses, 'endpoint'>,
  rng: Pick<SeededRandom, 'int'>,
): ServiceResolver {
  return (reference) => {
    const { namespace, name, port } = reference;
    const service = store.get(SERVICE_KIND, namespace, name);
    if (!service) return loopbackServiceResolver(reference);
    const spec = (service.spec ?? {}) as { selector?: Record<string, string>; ports?: ServicePortSpec[] };
    const servicePort = spec.ports?.find((p) => p.port === port);
    if (!servicePort) throw new Error(`service "${name}" in namespace "${namespace}" has no port ${port}`);
    const selector = spec.selector ?? {};
    if (Object.keys(selector).length === 0) throw new Error(`service "${name}" in namespace "${namespace}" has no selector: fleetsim routes to the pods a selector picks`);
    const endpoints = store.readModel
      .list(POD_KIND, namespace)
      .filter((pod) => !pod.metadata.deletionTimestamp && (pod.status as { phase?: string } | undefined)?.phase === 'Running' && hasLabels(pod.metadata.labels, selector))
      .map((pod) => ({ pod: pod.metadata.name, port: podPortOf(pod, servicePort.targetPort ?? port) }))
      .filter((endpoint): endpoint is { pod: string; port: number } => endpoint.port !== undefined)
      // In a fixed order, so that the same draws pick the same pods.
      .sort((a, b) => a.pod.localeCompare(b.pod));
    if (endpoints.length === 0) throw new Error(`no endpoints available for service "${name}" in namespace "${namespace}"`);
    const chosen = endpoints[rng.int(endpoints.length)]!;
    const endpoint = processes.endpoint(namespace, chosen.pod, chosen.port);
    if (endpoint) return endpoint;
    throw new Error(
      `connection refused: no process listens on port ${chosen.port} of pod "${chosen.pod}", an endpoint of service "${name}" in namespace "${namespace}" (fleetsim runs the autoscaler-webhook example's image only)`,
    );
  };
}
