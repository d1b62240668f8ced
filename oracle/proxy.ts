import { writeFileSync } from 'node:fs';
import { type Api, Informer, type KubeObject } from './api.js';
import { type Forward, type Target, forward } from './forward.js';
import { CLUSTER_DOMAIN } from './paths.js';
import { run } from './shell.js';

/**
 * The stand-in kube-proxy and cluster DNS, run by the supervisor in the control namespace. Each
 * Service's cluster IP becomes an address of that namespace, where its ports relay to the Service's
 * ready endpoints (from EndpointSlices) in turn; pods reach it through their node's route. Names
 * (`<service>.<namespace>.svc[.cluster.local]`) are written to a hosts file every container sees
 * as /etc/hosts. A LoadBalancer Service gets its cluster IP as its ingress address.
 */

interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
}

interface Service extends KubeObject {
  spec: { clusterIP?: string; type?: string; ports?: ServicePort[] };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}

interface EndpointSlice extends KubeObject {
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

const SERVICE_LABEL = 'kubernetes.io/service-name';

export class ServiceProxy {
  private readonly services: Informer<Service>;
  private readonly slices: Informer<EndpointSlice>;
  private readonly listening = new Map<string, Forward>();
  private readonly addresses = new Set<string>();
  private readonly turn = new Map<string, number>();
  private sync: Promise<void> = Promise.resolve();
  private hosts = '';

  constructor(
    private readonly api: Api,
    private readonly hostsFile: string,
    private readonly log: (line: string) => void,
  ) {
    this.services = new Informer<Service>(api, '/api/v1/services', () => this.changed(), (error) => log(`proxy: services: ${error.message}`));
    this.slices = new Informer<EndpointSlice>(api, '/apis/discovery.k8s.io/v1/endpointslices', () => undefined, (error) => log(`proxy: endpointslices: ${error.message}`));
  }

  stop(): void {
    this.services.stop();
    this.slices.stop();
    for (const listener of this.listening.values()) listener.close();
  }

  private changed(): void {
    this.sync = this.sync.then(() => this.reconcile()).catch((error: Error) => this.log(`proxy: ${error.message}`));
  }

  private async reconcile(): Promise<void> {
    const wanted = new Map<string, { service: Service; port: ServicePort }>();
    const lines = ['127.0.0.1 localhost', '::1 localhost'];
    for (const service of this.services.cache.values()) {
      const ip = service.spec.clusterIP;
      if (!ip || ip === 'None') continue;
      const { name, namespace } = service.metadata;
      lines.push(`${ip} ${name}.${namespace}.svc.${CLUSTER_DOMAIN} ${name}.${namespace}.svc ${name}.${namespace}`);
      for (const port of service.spec.ports ?? []) wanted.set(`${port.protocol ?? 'TCP'}/${ip}/${port.port}`, { service, port });
      if (service.spec.type === 'LoadBalancer' && !service.status?.loadBalancer?.ingress?.length) {
        await this.api.patch(`/api/v1/namespaces/${namespace}/services/${name}/status`, { status: { loadBalancer: { ingress: [{ ip, ipMode: 'VIP' }] } } }).catch((error: Error) => this.log(`proxy: ${namespace}/${name}: ${error.message}`));
      }
    }
    const hosts = `${lines.join('\n')}\n`;
    if (hosts !== this.hosts) {
      // In place, not by rename: containers see the file through a bind mount of this inode.
      writeFileSync(this.hostsFile, hosts);
      this.hosts = hosts;
    }
    for (const [key, listener] of this.listening) {
      if (wanted.has(key)) continue;
      listener.close();
      this.listening.delete(key);
    }
    for (const [key, { service, port }] of wanted) {
      if (this.listening.has(key)) continue;
      const [protocol, ip] = key.split('/') as [string, string];
      if (!this.addresses.has(ip)) {
        await run('ip', ['addr', 'replace', `${ip}/32`, 'dev', 'lo']);
        this.addresses.add(ip);
      }
      try {
        this.listening.set(key, await forward(protocol, ip, port.port, () => this.endpoint(service, port)));
      } catch (error) {
        this.log(`proxy: ${service.metadata.namespace}/${service.metadata.name} ${key}: ${(error as Error).message}`);
      }
    }
  }

  /** The next ready endpoint of the Service's port, in turn. */
  private endpoint(service: Service, port: ServicePort): Target | undefined {
    const targets: Target[] = [];
    for (const slice of this.slices.cache.values()) {
      if (slice.metadata.namespace !== service.metadata.namespace || slice.metadata.labels?.[SERVICE_LABEL] !== service.metadata.name) continue;
      const target = (slice.ports ?? []).find((p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
      if (target?.port === undefined) continue;
      for (const endpoint of slice.endpoints ?? []) {
        if (endpoint.conditions?.ready === false) continue;
        for (const address of endpoint.addresses) targets.push({ host: address, port: target.port });
      }
    }
    if (targets.length === 0) return undefined;
    const key = `${service.metadata.namespace}/${service.metadata.name}/${port.port}`;
    const next = (this.turn.get(key) ?? 0) % targets.length;
    this.turn.set(key, next + 1);
    return targets[next];
  }
}
