import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CertificateAndKey, createCertificate } from '../server/k8s/x509.js';
import { ALLOCATOR_IP, API_SERVER, CLUSTER_DOMAIN, CONTROL_IP, KUBERNETES_SERVICE_IP } from './paths.js';

/**
 * The run's certificates, made afresh by each `up` (EC P-256, with node:crypto): the cluster CA and
 * the API server's serving certificate, client certificates for the admin (system:masters) and the
 * controller manager, the aggregation layer's front-proxy pair, the service-account signing key,
 * and the allocator's TLS and mutual-TLS set that replaces the one Agones's install manifest ships
 * (whose keys are public).
 */

const VALID_DAYS = 365;

export interface Pki {
  dir: string;
  caFile: string;
  adminCertFile: string;
  adminKeyFile: string;
  /** PEM texts the kubeconfigs embed. */
  ca: CertificateAndKey;
  admin: CertificateAndKey;
}

/** The allocator's certificates, which the install puts in its Secrets. */
export interface AllocatorCerts {
  ca: string;
  server: CertificateAndKey;
  clientCa: string;
  /** The run's client certificate (signed by clientCa), run/allocator-client/. */
  client: CertificateAndKey;
}

export const ALLOCATOR_SERVICE_NAMES = ['agones-allocator', 'agones-allocator.agones-system', 'agones-allocator.agones-system.svc', `agones-allocator.agones-system.svc.${CLUSTER_DOMAIN}`, ALLOCATOR_IP];

/**
 * Makes the set in `dir`, and in `allocatorClientDir` what a client of the allocator needs for
 * mutual TLS: ca.crt (the allocator's CA), tls.crt and tls.key (a client certificate it trusts).
 */
export function makePki(dir: string, allocatorClientDir: string, now = Date.now()): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
    return join(dir, name);
  };
  const signedBy = (issuer: CertificateAndKey, commonName: string) => ({ ...issuer, commonName });
  const ca = createCertificate({ commonName: 'fleetsim-oracle-ca', ca: true, validDays: VALID_DAYS, now });
  const apiserver = createCertificate({
    commonName: 'kube-apiserver',
    usages: ['serverAuth'],
    names: ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${CLUSTER_DOMAIN}`, 'localhost', '127.0.0.1', CONTROL_IP, KUBERNETES_SERVICE_IP],
    issuer: signedBy(ca, 'fleetsim-oracle-ca'),
    validDays: VALID_DAYS,
    now,
  });
  const client = (commonName: string, organization?: string) =>
    createCertificate({ commonName, organization, usages: ['clientAuth'], issuer: signedBy(ca, 'fleetsim-oracle-ca'), validDays: VALID_DAYS, now });
  const admin = client('kubernetes-admin', 'system:masters');
  const controllerManager = client('system:kube-controller-manager');
  const frontProxyCa = createCertificate({ commonName: 'fleetsim-oracle-front-proxy-ca', ca: true, validDays: VALID_DAYS, now });
  const frontProxyClient = createCertificate({
    commonName: 'front-proxy-client',
    usages: ['clientAuth'],
    issuer: signedBy(frontProxyCa, 'fleetsim-oracle-front-proxy-ca'),
    validDays: VALID_DAYS,
    now,
  });
  const serviceAccount = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

  const allocatorCa = createCertificate({ commonName: 'agones-allocator-ca', ca: true, validDays: VALID_DAYS, now });
  const allocatorServer = createCertificate({
    commonName: 'agones-allocator',
    usages: ['serverAuth'],
    names: ALLOCATOR_SERVICE_NAMES,
    issuer: signedBy(allocatorCa, 'agones-allocator-ca'),
    validDays: VALID_DAYS,
    now,
  });
  const allocatorClientCa = createCertificate({ commonName: 'agones-allocator-client-ca', ca: true, validDays: VALID_DAYS, now });
  const allocatorClient = createCertificate({
    commonName: 'fleetsim-oracle-allocator-client',
    usages: ['clientAuth'],
    issuer: signedBy(allocatorClientCa, 'agones-allocator-client-ca'),
    validDays: VALID_DAYS,
    now,
  });

  write('ca.crt', ca.cert);
  write('ca.key', ca.key);
  write('apiserver.crt', apiserver.cert);
  write('apiserver.key', apiserver.key);
  write('admin.crt', admin.cert);
  write('admin.key', admin.key);
  write('front-proxy-ca.crt', frontProxyCa.cert);
  write('front-proxy-client.crt', frontProxyClient.cert);
  write('front-proxy-client.key', frontProxyClient.key);
  write('sa.key', serviceAccount.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  write('sa.pub', serviceAccount.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  write('controller-manager.kubeconfig', kubeconfig(ca.cert, controllerManager, 'system:kube-controller-manager'));
  write('allocator-ca.crt', allocatorCa.cert);
  write('allocator.crt', allocatorServer.cert);
  write('allocator.key', allocatorServer.key);
  write('allocator-client-ca.crt', allocatorClientCa.cert);
  mkdirSync(allocatorClientDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(allocatorClientDir, 'ca.crt'), allocatorCa.cert);
  writeFileSync(join(allocatorClientDir, 'tls.crt'), allocatorClient.cert);
  writeFileSync(join(allocatorClientDir, 'tls.key'), allocatorClient.key, { mode: 0o600 });
  return { dir, caFile: join(dir, 'ca.crt'), adminCertFile: join(dir, 'admin.crt'), adminKeyFile: join(dir, 'admin.key'), ca, admin };
}

export function allocatorCerts(dir: string, allocatorClientDir: string): AllocatorCerts {
  const read = (name: string, from = dir) => readFileSync(join(from, name), 'utf8');
  return {
    ca: read('allocator-ca.crt'),
    server: { cert: read('allocator.crt'), key: read('allocator.key') },
    clientCa: read('allocator-client-ca.crt'),
    client: { cert: read('tls.crt', allocatorClientDir), key: read('tls.key', allocatorClientDir) },
  };
}

/** A kubeconfig with its certificates inline, for the API server on the control namespace's address. */
export function kubeconfig(caCert: string, user: CertificateAndKey, userName: string): string {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fleetsim-oracle', cluster: { server: API_SERVER, 'certificate-authority-data': b64(caCert) } }],
      users: [{ name: userName, user: { 'client-certificate-data': b64(user.cert), 'client-key-data': b64(user.key) } }],
      contexts: [{ name: 'fleetsim-oracle', context: { cluster: 'fleetsim-oracle', user: userName, namespace: 'default' } }],
      'current-context': 'fleetsim-oracle',
    },
    null,
    2,
  );
}
