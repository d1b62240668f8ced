import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Api } from '../api.js';
import type { Pod } from './pod.js';
import { PodVolumes, type SourceObject } from './volumes.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const b64 = (text: string) => Buffer.from(text).toString('base64');

function secret(name: string, data: Record<string, string>, namespace = 'agones-system'): SourceObject {
  return { metadata: { name, namespace }, data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, b64(value)])) };
}

/** A pod of the allocator's kind: its TLS Secret whole, one key of a second Secret, and a ConfigMap through a projected volume. */
const pod: Pod = {
  metadata: { name: 'agones-allocator-1', namespace: 'agones-system', uid: 'u1' },
  spec: {
    containers: [{ name: 'allocator', image: 'agones-allocator' }],
    volumes: [
      { name: 'tls', secret: { secretName: 'allocator-tls' } },
      { name: 'ca', secret: { secretName: 'allocator-tls-ca', items: [{ key: 'tls-ca.crt', path: 'ca/tls-ca.crt' }] } },
      { name: 'root', projected: { sources: [{ configMap: { name: 'kube-root-ca.crt' } }] } },
    ],
  },
};

async function prepared(objects: Record<string, SourceObject>) {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-volumes-'));
  dirs.push(dir);
  const api = { find: async (path: string) => objects[path] } as unknown as Api;
  const logged: string[] = [];
  const volumes = new PodVolumes(api, pod, dir, { podIP: '10.78.1.2', hostIP: '10.77.0.11' }, (line) => logged.push(line));
  await volumes.prepare();
  const read = (volume: string, file: string) => readFileSync(join(volumes.paths.get(volume)!, file), 'utf8');
  const files = (volume: string) => readdirSync(volumes.paths.get(volume)!, { recursive: true }).map(String).sort();
  return { volumes, read, files, logged };
}

const BASE = '/api/v1/namespaces/agones-system';
const objects = () => ({
  [`${BASE}/secrets/allocator-tls`]: secret('allocator-tls', { 'tls.crt': 'cert 1', 'tls.key': 'key 1', 'extra.pem': 'extra' }),
  [`${BASE}/secrets/allocator-tls-ca`]: secret('allocator-tls-ca', { 'tls-ca.crt': 'ca 1', other: 'x' }),
  [`${BASE}/configmaps/kube-root-ca.crt`]: { metadata: { name: 'kube-root-ca.crt', namespace: 'agones-system' }, data: { 'ca.crt': 'root 1' } },
});

describe("a pod's Secret and ConfigMap volumes", () => {
  it('are written again when their Secret changes: new content, keys it dropped removed', async () => {
    const { volumes, read, files } = await prepared(objects());
    expect([read('tls', 'tls.crt'), read('tls', 'tls.key'), files('tls')]).toEqual(['cert 1', 'key 1', ['extra.pem', 'tls.crt', 'tls.key']]);

    volumes.refresh('secrets', secret('allocator-tls', { 'tls.crt': 'cert 2', 'tls.key': 'key 2' }));
    expect([read('tls', 'tls.crt'), read('tls', 'tls.key'), files('tls')]).toEqual(['cert 2', 'key 2', ['tls.crt', 'tls.key']]);
  });

  it('write only the keys their items name, and ConfigMaps of projected volumes too', async () => {
    const { volumes, read, files } = await prepared(objects());
    volumes.refresh('secrets', secret('allocator-tls-ca', { 'tls-ca.crt': 'ca 2', other: 'y' }));
    expect([read('ca', 'ca/tls-ca.crt'), files('ca')]).toEqual(['ca 2', ['ca', 'ca/tls-ca.crt']]);
    volumes.refresh('configmaps', { metadata: { name: 'kube-root-ca.crt', namespace: 'agones-system' }, data: { 'ca.crt': 'root 2' } });
    expect(read('root', 'ca.crt')).toBe('root 2');
  });

  it('leave unchanged files in place, and ignore other namespaces, other names and kinds', async () => {
    const { volumes, read } = await prepared(objects());
    const inode = () => statSync(join(volumes.paths.get('tls')!, 'tls.key')).ino;
    const before = inode();
    volumes.refresh('secrets', secret('allocator-tls', { 'tls.crt': 'cert 2', 'tls.key': 'key 1', 'extra.pem': 'extra' }));
    expect([read('tls', 'tls.crt'), inode()]).toEqual(['cert 2', before]);

    volumes.refresh('secrets', secret('allocator-tls', { 'tls.crt': 'elsewhere' }, 'default'));
    volumes.refresh('secrets', secret('allocator-client', { 'tls.crt': 'other' }));
    volumes.refresh('configmaps', { metadata: { name: 'allocator-tls', namespace: 'agones-system' }, data: { 'tls.crt': 'a map' } });
    expect(read('tls', 'tls.crt')).toBe('cert 2');
  });

  it('keep their files when a key their items name is gone, and say so', async () => {
    const { volumes, read, logged } = await prepared(objects());
    volumes.refresh('secrets', secret('allocator-tls-ca', { other: 'z' }));
    expect(read('ca', 'ca/tls-ca.crt')).toBe('ca 1');
    expect(logged).toEqual(['agones-system/agones-allocator-1: updating secrets allocator-tls-ca: key "tls-ca.crt" not found']);
  });

  it('are no longer written once the pod has stopped', async () => {
    const { volumes, read } = await prepared(objects());
    volumes.stop();
    volumes.refresh('secrets', secret('allocator-tls', { 'tls.crt': 'cert 2', 'tls.key': 'key 2' }));
    expect(read('tls', 'tls.crt')).toBe('cert 1');
  });
});
