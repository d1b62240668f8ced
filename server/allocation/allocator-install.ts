import type { Subscription } from 'rxjs';
import { createCertificate } from '../k8s/x509.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { AGONES_NAMESPACE, agonesNamespaceCreation, ingressAddress, installedMeta, publishAgonesService } from '../resources/agones-install.js';
import type { AgonesInstallPort } from '../resources/ports.js';
import type { StoreFeeds } from '../runtime/store-ports.js';
import type { Cause } from '../log/cause.js';
import { secretData } from './remote-allocator.js';

/**
 * The allocator as Agones's Helm chart installs it, where its clients look for it: the namespace
 * `agones-system`, the LoadBalancer Service `agones-allocator` (its ingress address and port), and
 * with `--allocator-tls auto` the Secrets the allocator-service guide tells clients to read:
 *
 *   agones-system/allocator-tls             kubernetes.io/tls: tls.crt, tls.key (the server's)
 *   agones-system/allocator-tls-ca          tls-ca.crt: the CA that signed tls.crt
 *   agones-system/allocator-client-ca       client-ca.crt: the CA client certificates must chain to
 *   default/allocator-client.default        kubernetes.io/tls: tls.crt, tls.key, signed by that CA
 *
 * The Secrets are resources in the log: a restart on the same log serves the same certificates,
 * and a change to allocator-tls or allocator-client-ca (as Agones's e2e suite makes, replacing the
 * server certificate) is served from then on, as Agones's allocator reloads its mounted files. As
 * in Agones, every `*.crt` and `*.pem` entry of allocator-client-ca is a trusted client CA.
 */

export const ALLOCATOR_NAMESPACE = AGONES_NAMESPACE;
export const ALLOCATOR_SERVICE = 'agones-allocator';
export const ALLOCATOR_TLS_SECRET = 'allocator-tls';
export const ALLOCATOR_TLS_CA_SECRET = 'allocator-tls-ca';
export const ALLOCATOR_CLIENT_CA_SECRET = 'allocator-client-ca';
export const ALLOCATOR_CLIENT_SECRET = 'allocator-client.default';
/** Where the Helm chart puts the default client Secret (its gameservers.namespaces: default). */
export const ALLOCATOR_CLIENT_SECRET_NAMESPACE = 'default';
/** What installing the allocator is handed: what Agones's install takes, and the Secrets' changes to reload on. */
export interface AllocatorInstallPort extends AgonesInstallPort, Pick<StoreFeeds, 'changesOf'> {}

/** Agones's certificates are made for ten years. */
const VALID_DAYS = 3650;

/** The allocator's TLS material, as its listener takes it. */
export interface AllocatorCertificates {
  cert: string;
  key: string;
  clientCa?: string;
}

const INSTALL_CAUSE: Cause = { type: 'startup', detail: 'the allocator is installed as Agones installs it (--allocator-tls auto)' };
const LABELS = { app: 'agones', component: 'allocator' };

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function secret(cluster: AllocatorInstallPort, namespace: string, name: string, data: Record<string, string>, tls: boolean): Resource {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: installedMeta(cluster, namespace, name, LABELS),
    type: tls ? 'kubernetes.io/tls' : 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64(value)])),
  } as Resource;
}

/**
 * A fresh set of the four Secrets: a CA and the server certificate it signs (for `names`), a
 * client CA and a client certificate it signs.
 */
export function allocatorSecrets(cluster: AllocatorInstallPort, names: string[]): Resource[] {
  const now = cluster.clock.now();
  const ca = createCertificate({ commonName: 'allocation-ca', ca: true, validDays: VALID_DAYS, now });
  const server = createCertificate({
    commonName: ALLOCATOR_SERVICE,
    usages: ['serverAuth'],
    names,
    issuer: { ...ca, commonName: 'allocation-ca' },
    validDays: VALID_DAYS,
    now,
  });
  const clientCa = createCertificate({ commonName: 'allocation-client-ca', ca: true, validDays: VALID_DAYS, now });
  const client = createCertificate({
    commonName: ALLOCATOR_CLIENT_SECRET,
    usages: ['clientAuth'],
    issuer: { ...clientCa, commonName: 'allocation-client-ca' },
    validDays: VALID_DAYS,
    now,
  });
  return [
    secret(cluster, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_SECRET, { 'tls.crt': server.cert, 'tls.key': server.key }, true),
    secret(cluster, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_CA_SECRET, { 'tls-ca.crt': ca.cert }, false),
    secret(cluster, ALLOCATOR_NAMESPACE, ALLOCATOR_CLIENT_CA_SECRET, { 'client-ca.crt': clientCa.cert }, false),
    secret(cluster, ALLOCATOR_CLIENT_SECRET_NAMESPACE, ALLOCATOR_CLIENT_SECRET, { 'tls.crt': client.cert, 'tls.key': client.key }, true),
  ];
}

/** The names the generated server certificate is for: the ingress address, loopback, and the Service's DNS names. */
export function serverNames(host: string | undefined): string[] {
  const names = [ingressAddress(host), '127.0.0.1', '::1', 'localhost', ALLOCATOR_SERVICE, `${ALLOCATOR_SERVICE}.${ALLOCATOR_NAMESPACE}`, `${ALLOCATOR_SERVICE}.${ALLOCATOR_NAMESPACE}.svc`];
  return [...new Set(names)];
}

/**
 * The TLS material the Secrets in the store hold, or why they cannot be served: allocator-tls's
 * key pair, and every `*.crt`/`*.pem` of allocator-client-ca as client CAs.
 */
export function certificatesFromSecrets(cluster: AllocatorInstallPort): AllocatorCertificates | string {
  const tls = cluster.get('Secret', ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_SECRET);
  if (!tls) return `the Secret ${ALLOCATOR_NAMESPACE}/${ALLOCATOR_TLS_SECRET} does not exist`;
  const pair = secretData(tls);
  if (!pair['tls.crt'] || !pair['tls.key']) return `the Secret ${ALLOCATOR_NAMESPACE}/${ALLOCATOR_TLS_SECRET} has no tls.crt and tls.key`;
  const clientCaSecret = cluster.get('Secret', ALLOCATOR_NAMESPACE, ALLOCATOR_CLIENT_CA_SECRET);
  const cas = Object.entries(clientCaSecret ? secretData(clientCaSecret) : {})
    .filter(([key]) => key.endsWith('.crt') || key.endsWith('.pem'))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, value]) => value.trim());
  if (cas.length === 0) return `the Secret ${ALLOCATOR_NAMESPACE}/${ALLOCATOR_CLIENT_CA_SECRET} holds no client CA (*.crt, *.pem)`;
  return { cert: pair['tls.crt'], key: pair['tls.key'], clientCa: `${cas.join('\n')}\n` };
}

/**
 * Makes sure the namespace and the four Secrets exist: kept when the log has them all (a
 * restart), made afresh when any is missing. Returns the material they hold.
 */
export async function installAllocatorSecrets(cluster: AllocatorInstallPort, host: string | undefined): Promise<AllocatorCertificates> {
  const names = [ALLOCATOR_TLS_SECRET, ALLOCATOR_TLS_CA_SECRET, ALLOCATOR_CLIENT_CA_SECRET].map((name) => [ALLOCATOR_NAMESPACE, name]);
  names.push([ALLOCATOR_CLIENT_SECRET_NAMESPACE, ALLOCATOR_CLIENT_SECRET]);
  const present = names.filter(([namespace, name]) => cluster.get('Secret', namespace!, name!));
  if (present.length < names.length) {
    const events = [
      ...agonesNamespaceCreation(cluster),
      ...present.map(([namespace, name]) => resourceEvent('ResourceDeleted', 'Secret', namespace!, name!, {})),
      ...allocatorSecrets(cluster, serverNames(host)).map((s) =>
        resourceEvent('ResourceCreated', 'Secret', s.metadata.namespace, s.metadata.name, { object: s }),
      ),
    ];
    await cluster.commit(events, INSTALL_CAUSE);
  }
  const material = certificatesFromSecrets(cluster);
  if (typeof material === 'string') throw new Error(`--allocator-tls auto: ${material}`);
  return material;
}

/**
 * Calls `reload` with the new material whenever allocator-tls or allocator-client-ca changes;
 * material that cannot be served is reported to `log` and the old kept.
 */
export function watchAllocatorSecrets(cluster: AllocatorInstallPort, reload: (material: AllocatorCertificates) => void, log: (line: string) => void): Subscription {
  return cluster.changesOf('Secret').subscribe((change) => {
    if (change.namespace !== ALLOCATOR_NAMESPACE || (change.name !== ALLOCATOR_TLS_SECRET && change.name !== ALLOCATOR_CLIENT_CA_SECRET)) return;
    const material = certificatesFromSecrets(cluster);
    if (typeof material === 'string') return log(`fleetsim allocator: keeping the certificates served so far: ${material}`);
    try {
      reload(material);
    } catch (error) {
      log(`fleetsim allocator: keeping the certificates served so far: the Secrets' certificates cannot be served: ${(error as Error).message}`);
    }
  });
}

/**
 * The Service `agones-system/agones-allocator` for the TLS listener on `host:port`. A cluster's
 * load balancer answers on 443 and forwards to the pods' 8443; here the Service's port is the
 * port the listener listens on (443 with `--allocator-port 443`). Removed when the allocator has
 * no TLS listener.
 */
export async function publishAllocatorService(cluster: AllocatorInstallPort, listener: { host: string | undefined; port: number } | undefined): Promise<void> {
  const service = listener && {
    labels: LABELS,
    selector: { 'multicluster.agones.dev/role': 'allocator' },
    ports: [{ name: 'https', protocol: 'TCP' as const, port: listener.port }],
    host: listener.host,
  };
  await publishAgonesService(cluster, ALLOCATOR_SERVICE, service, INSTALL_CAUSE);
}
