import { createHash } from 'node:crypto';
import type { Resource } from '../resource.js';
import { isJsonObject } from '../common.js';
import { type FieldError, PORT_NUMBER_RANGE, duplicate, invalid, isPortNumber, notSupported, required } from '../../k8s/validation.js';

/**
 * A Service a client writes: the API server's defaults (a cluster IP, TCP, a targetPort equal to
 * the port) and its validation of the fields fleetsim reads. Traffic to it is routed as kube-proxy
 * would (server/controllers/service-routing.ts).
 */

interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
}

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  ports?: ServicePort[];
  selector?: Record<string, string>;
  [field: string]: unknown;
}

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
/** Kubernetes's IsValidPortName: an IANA service name. */
const PORT_NAME = /^(?=.*[a-z])(?!.*--)[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/;

function specOf(object: Resource): ServiceSpec {
  return (isJsonObject(object.spec) ? object.spec : {}) as ServiceSpec;
}

/** A cluster IP in 10.96.0.0/12 drawn from the uid: stable for the object, no allocator to keep. */
function clusterIpOf(uid: string): string {
  const h = createHash('sha1').update(`service/${uid}`).digest();
  return `10.${96 + (h[0]! & 15)}.${h[1]}.${1 + (h[2]! % 254)}`;
}

export function serviceDefaults(object: Resource, old?: Resource): Resource {
  const spec = specOf(object);
  const type = spec.type || 'ClusterIP';
  const ports = (spec.ports ?? []).map((p) => ({ ...p, protocol: p.protocol || 'TCP', targetPort: p.targetPort || p.port }));
  const previousIp = old ? specOf(old).clusterIP : undefined;
  const clusterIP = type === 'ExternalName' ? undefined : spec.clusterIP || previousIp || clusterIpOf(object.metadata.uid);
  return {
    ...object,
    spec: {
      sessionAffinity: 'None',
      ...(type !== 'ExternalName' && { ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' }),
      ...spec,
      type,
      ports,
      ...(clusterIP && { clusterIP, clusterIPs: [clusterIP] }),
    },
    status: old?.status ?? { loadBalancer: {} },
  } as Resource;
}

export function validateService(object: Resource): FieldError[] {
  const errors: FieldError[] = [];
  const spec = specOf(object);
  const type = spec.type ?? 'ClusterIP';
  if (!TYPES.includes(type)) errors.push(notSupported('spec.type', type, TYPES));
  const ports = spec.ports ?? [];
  if (type !== 'ExternalName' && spec.clusterIP !== 'None' && ports.length === 0) errors.push(required('spec.ports'));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `spec.ports[${i}]`;
    if (ports.length > 1 && !p.name) errors.push(required(`${at}.name`));
    if (p.name) {
      if (!PORT_NAME.test(p.name)) errors.push(invalid(`${at}.name`, p.name, 'must be a valid port name (at most 15 lowercase letters, digits and hyphens, with a letter)'));
      if (names.has(p.name)) errors.push(duplicate(`${at}.name`, p.name));
      names.add(p.name);
    }
    if (!isPortNumber(p.port)) errors.push(invalid(`${at}.port`, p.port ?? 0, PORT_NUMBER_RANGE));
    if (p.protocol && !PROTOCOLS.includes(p.protocol)) errors.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
    const target = p.targetPort;
    if (typeof target === 'number' ? !isPortNumber(target) : target !== undefined && !PORT_NAME.test(target)) {
      errors.push(invalid(`${at}.targetPort`, target, 'must be a port number between 1 and 65535 or a valid port name'));
    }
  });
  return errors;
}
