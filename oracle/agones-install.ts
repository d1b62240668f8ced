import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ALLOCATOR_IP } from './paths.js';
import { type AllocatorCerts } from './pki.js';

/**
 * Agones as its own install manifest installs it (install/yaml/install.yaml of the source tree the
 * binaries were built from: CRDs, RBAC, webhooks, the aggregated allocation API, Services and
 * Deployments), read at `up` and changed in a few places for a one-machine cluster:
 *   - the agones-system namespace is created first (the manifest expects it);
 *   - each Deployment runs one replica (the controller keeps its leader election);
 *   - the allocator's TLS and client-CA Secrets hold the run's certificates, so mutual TLS can be
 *     used from outside with run/allocator-client/, and its Service has a fixed cluster IP the
 *     server certificate names;
 *   - FEATURE_GATES is the gates given to `up`;
 *   - the default namespace gets the allocator client Secret (allocator-client.default, the run's
 *     client certificate) that Agones's Helm chart makes by default and install.yaml leaves out;
 *     Agones's e2e suite reads it to call the allocator.
 */

export const AGONES_NAMESPACE = 'agones-system';
export const INSTALL_MANIFEST = join('install', 'yaml', 'install.yaml');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [field: string]: unknown };

interface Deployment extends Manifest {
  spec: { replicas?: number; template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
}

export function installManifestPath(agonesSrc: string): string {
  return join(agonesSrc, INSTALL_MANIFEST);
}

export function agonesManifests(agonesSrc: string, allocator: AllocatorCerts, featureGates: string): Manifest[] {
  const file = installManifestPath(agonesSrc);
  if (!existsSync(file)) throw new Error(`${file} is missing: AGONES_SRC must be Agones's source tree`);
  const objects = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJS() as Manifest | null)
    .filter((object): object is Manifest => object !== null && typeof object === 'object' && typeof object.kind === 'string');
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const clientSecret: Manifest = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: 'allocator-client.default', namespace: 'default' },
    data: { 'tls.crt': b64(allocator.client.cert), 'tls.key': b64(allocator.client.key) },
  };
  return [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: AGONES_NAMESPACE } }, ...objects.map((object) => patched(object, allocator, featureGates)), clientSecret];
}

function patched(object: Manifest, allocator: AllocatorCerts, featureGates: string): Manifest {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  if (object.kind === 'Deployment') {
    const deployment = object as Deployment;
    deployment.spec.replicas = 1;
    for (const container of deployment.spec.template.spec.containers) {
      for (const variable of container.env ?? []) if (variable.name === 'FEATURE_GATES') variable.value = featureGates;
    }
  }
  if (object.kind === 'Secret' && object.metadata.namespace === AGONES_NAMESPACE) {
    const data: Record<string, Record<string, string>> = {
      'allocator-tls': { 'tls.crt': b64(allocator.server.cert), 'tls.key': b64(allocator.server.key) },
      'allocator-tls-ca': { 'tls-ca.crt': b64(allocator.ca) },
      'allocator-client-ca': { 'client-ca.crt': b64(allocator.clientCa) },
    };
    if (Object.hasOwn(data, object.metadata.name)) object.data = data[object.metadata.name];
  }
  if (object.kind === 'Service' && object.metadata.name === 'agones-allocator' && object.metadata.namespace === AGONES_NAMESPACE) {
    (object.spec as { clusterIP?: string }).clusterIP = ALLOCATOR_IP;
  }
  return object;
}
