import { describe, expect, it } from 'vitest';
import type { CreatedContainer } from '../kinds/pod/created-pod.js';
import type { Resource } from '../kinds/resource.js';
import { webhookCertificate } from './autoscaler-webhook.js';
import { type SecretReads, mountedFile, unmountableVolume } from './pod-files.js';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const meta = (name: string) => ({ namespace: 'games', name }) as Resource['metadata'];

const secrets: Record<string, Resource> = {
  'games/certs': { apiVersion: 'v1', kind: 'Secret', metadata: meta('certs'), data: { 'tls.crt': base64('CERT'), 'tls.key': base64('KEY') } },
};
const store: SecretReads = { get: (kind: string, namespace: string, name: string) => (kind === 'Secret' ? secrets[`${namespace}/${name}`] : undefined) };

function podWith(volumes: unknown[], container: CreatedContainer): { pod: Resource; container: CreatedContainer } {
  return { pod: { apiVersion: 'v1', kind: 'Pod', metadata: meta('p'), spec: { volumes, containers: [container] } }, container };
}

const read = (p: { pod: Resource; container: CreatedContainer }, path: string) => mountedFile(store, p.pod, p.container, path)?.toString();

describe("a stored pod's mounted files", () => {
  it("shows a Secret's keys as files under the mount, or only its items at their paths, and honours subPath", () => {
    const whole = podWith([{ name: 'v', secret: { secretName: 'certs' } }], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/home/service/certs/' }] });
    expect(read(whole, '/home/service/certs/tls.crt')).toBe('CERT');
    expect(read(whole, '/home/service/certs/tls.key')).toBe('KEY');
    expect(read(whole, '/home/service/certs/ca.crt')).toBeUndefined();
    expect(read(whole, '/home/service/tls.crt')).toBeUndefined();

    const items = podWith([{ name: 'v', secret: { secretName: 'certs', items: [{ key: 'tls.key', path: 'keys/server.key' }] } }], {
      name: 'c',
      volumeMounts: [{ name: 'v', mountPath: '/etc/tls' }],
    });
    expect(read(items, '/etc/tls/keys/server.key')).toBe('KEY');
    expect(read(items, '/etc/tls/tls.crt')).toBeUndefined();

    const sub = podWith([{ name: 'v', secret: { secretName: 'certs', items: [{ key: 'tls.crt', path: 'a/cert.pem' }] } }], {
      name: 'c',
      volumeMounts: [{ name: 'v', mountPath: '/certs', subPath: 'a' }],
    });
    expect(read(sub, '/certs/cert.pem')).toBe('CERT');

    const empty = podWith([{ name: 'v', emptyDir: {} }], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/home/service/certs' }] });
    expect(read(empty, '/home/service/certs/tls.crt')).toBeUndefined();
  });

  it('keeps a container from starting while a Secret it mounts is missing, unless the volume is optional', () => {
    const missing = podWith([{ name: 'v', secret: { secretName: 'gone' } }], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x' }] });
    expect(unmountableVolume(store, missing.pod, missing.container)).toBe('MountVolume.SetUp failed for volume "v" : secret "gone" not found');
    const optional = podWith([{ name: 'v', secret: { secretName: 'gone', optional: true } }], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x' }] });
    expect(unmountableVolume(store, optional.pod, optional.container)).toBeUndefined();
    const present = podWith([{ name: 'v', secret: { secretName: 'certs' } }], { name: 'c', volumeMounts: [{ name: 'v', mountPath: '/x' }] });
    expect(unmountableVolume(store, present.pod, present.container)).toBeUndefined();
  });
});

describe("the autoscaler-webhook example's certificate", () => {
  it('serves HTTPS when tls.crt is in its certs folder, plain HTTP without it, and stops when the key is missing', () => {
    const files = (present: Record<string, string>) => (path: string) => (present[path] === undefined ? undefined : Buffer.from(present[path]));
    expect(webhookCertificate(files({ '/home/service/certs/tls.crt': 'C', '/home/service/certs/tls.key': 'K' }))).toEqual({ cert: Buffer.from('C'), key: Buffer.from('K') });
    expect(webhookCertificate(files({}))).toBeUndefined();
    expect(webhookCertificate(files({ '/home/service/certs/tls.crt': 'C' }))).toEqual({ error: 'open /home/service/certs/tls.key: no such file or directory' });
  });
});
