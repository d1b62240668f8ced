import { AGE_COLUMN, ALL_VERBS, OPEN_OBJECT, type KindDefinition } from '../registry.js';
import type { Resource } from '../resource.js';
import { bodySchema } from '../../k8s/schema.js';
import { serviceDefaults, validateService } from './service.js';

export const SERVICE_KIND = 'Service';

interface ServiceShape {
  spec?: { type?: string; clusterIP?: string; ports?: Array<{ port?: number; nodePort?: number; protocol?: string }> };
  status?: { loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string }> } };
}

/** `kubectl get services`' PORT(S): 443/TCP, or 443:31234/TCP with a node port. */
function portsColumn(object: Resource): string {
  const ports = (object as ServiceShape).spec?.ports ?? [];
  return ports.map((p) => `${p.port ?? ''}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',') || '<none>';
}

function externalIpColumn(object: Resource): string {
  const ingress = (object as ServiceShape).status?.loadBalancer?.ingress ?? [];
  const shown = ingress.map((i) => i.ip ?? i.hostname ?? '').filter((a) => a !== '');
  if (shown.length > 0) return shown.join(',');
  return (object as ServiceShape).spec?.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

/**
 * Services: those fleetsim itself installs in agones-system (the allocator's `agones-allocator`,
 * the ping service's `agones-ping-http-service` and `agones-ping-udp-service`, each with its load
 * balancer's address in its status), so that clients find them as Agones's guides tell them to,
 * and those clients write (service.ts), through which a FleetAutoscaler's webhook reaches a pod.
 */
export const SERVICE_DEFINITION: KindDefinition = {
  kind: SERVICE_KIND,
  listKind: 'ServiceList',
  group: '',
  version: 'v1',
  plural: 'services',
  singular: 'service',
  shortNames: ['svc'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
    { name: 'External-IP', type: 'string', jsonPath: '.status.loadBalancer.ingress[0].ip', value: externalIpColumn },
    { name: 'Port(s)', type: 'string', jsonPath: '.spec.ports', value: portsColumn },
    AGE_COLUMN,
  ],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
  defaults: (object, _context, old) => serviceDefaults(object, old),
  validate: (object) => validateService(object),
};
