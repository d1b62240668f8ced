import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { agonesManifests } from './agones-install.js';
import { ALLOCATOR_IP } from './paths.js';

/** A source tree whose install manifest has the kinds of objects Agones's has (written here, not copied). */
const source = mkdtempSync(join(tmpdir(), 'oracle-install-'));
afterAll(() => rmSync(source, { recursive: true, force: true }));
mkdirSync(join(source, 'install', 'yaml'), { recursive: true });
const objects = [
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'agones-sdk', namespace: 'default' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'allocator-tls', namespace: 'agones-system' }, data: { 'tls.crt': 'b2xk', 'tls.key': 'b2xk' } },
  { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'allocator-client-ca', namespace: 'agones-system' }, data: { 'client-ca.crt': 'b2xk' } },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'agones-allocator', namespace: 'agones-system' }, spec: { type: 'LoadBalancer', ports: [{ port: 443 }] } },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'agones-controller', namespace: 'agones-system' },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'agones-controller', env: [{ name: 'FEATURE_GATES', value: '' }, { name: 'MIN_PORT', value: '7000' }] }] } } },
  },
];
writeFileSync(join(source, 'install', 'yaml', 'install.yaml'), ['# comment', ...objects.map((o) => stringify(o))].join('---\n'));

describe("Agones's install manifest, as the oracle applies it", () => {
  const certs = { ca: 'CA', server: { cert: 'CERT', key: 'KEY' }, clientCa: 'CLIENT-CA', client: { cert: 'CLIENT-CERT', key: 'CLIENT-KEY' } };
  const manifests = agonesManifests(source, certs, 'CountsAndLists=false');
  const find = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name) as unknown;
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  it("creates agones-system first, then everything the manifest holds, then the allocator client's Secret", () => {
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      'Namespace/agones-system',
      'ServiceAccount/agones-sdk',
      'Secret/allocator-tls',
      'Secret/allocator-client-ca',
      'Service/agones-allocator',
      'Deployment/agones-controller',
      'Secret/allocator-client.default',
    ]);
  });

  it("runs one replica of each Deployment, with the run's feature gates and the rest of its environment as it was", () => {
    expect(find('Deployment', 'agones-controller')).toMatchObject({
      spec: { replicas: 1, template: { spec: { containers: [{ env: [{ name: 'FEATURE_GATES', value: 'CountsAndLists=false' }, { name: 'MIN_PORT', value: '7000' }] }] } } },
    });
  });

  it("puts the run's allocator certificates in its Secrets, and gives its Service the address they name", () => {
    expect(find('Secret', 'allocator-tls')).toMatchObject({ data: { 'tls.crt': b64('CERT'), 'tls.key': b64('KEY') } });
    expect(find('Secret', 'allocator-client-ca')).toMatchObject({ data: { 'client-ca.crt': b64('CLIENT-CA') } });
    expect(find('Service', 'agones-allocator')).toMatchObject({ spec: { type: 'LoadBalancer', clusterIP: ALLOCATOR_IP } });
  });

  it("gives the default namespace the allocator client's certificate, as Agones's Helm chart does (its e2e suite reads it)", () => {
    expect(find('Secret', 'allocator-client.default')).toMatchObject({ type: 'kubernetes.io/tls', metadata: { namespace: 'default' }, data: { 'tls.crt': b64('CLIENT-CERT'), 'tls.key': b64('CLIENT-KEY') } });
  });

  it('says what is missing when the source tree has no install manifest', () => {
    expect(() => agonesManifests(join(source, 'nowhere'), certs, '')).toThrow(/install\/yaml\/install\.yaml is missing/);
  });
});
