import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { KubeconfigError, kubeconfigFiles, loadClusterAccess } from './kubeconfig.js';

const dir = tempDir('fleetsim-kubeconfig-');

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const CONFIG = `apiVersion: v1
kind: Config
current-context: dev
clusters:
  - name: local
    cluster: { server: "http://127.0.0.1:8080/", insecure-skip-tls-verify: true }
  - name: prod
    cluster: { server: https://prod.example.com, certificate-authority: ca.pem, tls-server-name: api.prod }
users:
  - name: dev
    user: {}
  - name: ops
    user: { token: abc, client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key: key.pem }
  - name: gke
    user:
      exec: { apiVersion: client.authentication.k8s.io/v1beta1, command: gke-gcloud-auth-plugin, args: [--x], env: [{ name: A, value: b }] }
contexts:
  - name: dev
    context: { cluster: local, user: dev, namespace: game }
  - name: prod
    context: { cluster: prod, user: ops }
  - name: gke
    context: { cluster: prod, user: gke }
  - name: broken
    context: { cluster: nowhere, user: dev }
`;

describe('loadClusterAccess', () => {
  const file = write('config', CONFIG);
  write('ca.pem', 'CA');
  write('key.pem', 'KEY');

  it('reads the current context: server, namespace, TLS choice', () => {
    const access = loadClusterAccess([file]);
    expect(access).toMatchObject({ cluster: 'local', context: 'dev', server: 'http://127.0.0.1:8080', namespace: 'game', insecureSkipTlsVerify: true });
    expect(access.token).toBeUndefined();
  });

  it('reads certificates inline or from files beside the kubeconfig, and a token', () => {
    const access = loadClusterAccess([file], 'prod');
    expect(access.ca?.toString()).toBe('CA');
    expect(access.clientCertificate?.toString()).toBe('CERT');
    expect(access.clientKey?.toString()).toBe('KEY');
    expect(access).toMatchObject({ token: 'abc', tlsServerName: 'api.prod', insecureSkipTlsVerify: false });
  });

  it('reads an exec credential plugin', () => {
    expect(loadClusterAccess([file], 'gke').exec).toMatchObject({ command: 'gke-gcloud-auth-plugin', args: ['--x'], env: { A: 'b' }, apiVersion: 'client.authentication.k8s.io/v1beta1' });
  });

  it('names the context or entry at fault', () => {
    expect(() => loadClusterAccess([file], 'staging')).toThrow(/no context "staging" \(it has dev, prod, gke, broken\)/);
    expect(() => loadClusterAccess([file], 'broken')).toThrow(/context "broken": no cluster "nowhere"/);
    expect(() => loadClusterAccess([join(dir, 'missing')])).toThrow(KubeconfigError);
    const none = write('none', 'apiVersion: v1\nkind: Config\ncontexts: []\n');
    expect(() => loadClusterAccess([none])).toThrow(/no current-context: name one with --context/);
    const bad = write('bad', 'clusters: [{ name: x, cluster: { server: "ftp://x" } }]\ncontexts: [{ name: c, context: { cluster: x } }]\ncurrent-context: c\n');
    expect(() => loadClusterAccess([bad])).toThrow(/server "ftp:\/\/x" is not an http\(s\) URL/);
  });

  it('reads regular files of at most 1 MiB only, as every file a user names', () => {
    const large = write('large', `${CONFIG}#${'x'.repeat(2 * 1024 * 1024)}\n`);
    expect(() => loadClusterAccess([large])).toThrow(`cannot read the kubeconfig ${large}: 2 MiB: more than the 1 MiB fleetsim reads from such a file`);
    const certificateDir = write('dir-ca', CONFIG.replace('certificate-authority: ca.pem', `certificate-authority: ${dir}`));
    expect(() => loadClusterAccess([certificateDir], 'prod')).toThrow(`cluster "prod": certificate-authority ${dir}: not a regular file (a directory)`);
  });

  it('merges $KUBECONFIG as kubectl does: the first file to name an entry wins', () => {
    const other = write('other', 'current-context: prod\ncontexts: [{ name: prod, context: { cluster: local } }]\n');
    expect(loadClusterAccess([other, file])).toMatchObject({ context: 'prod', cluster: 'local' });
    expect(kubeconfigFiles(undefined, { KUBECONFIG: `${other}:${file}` })).toEqual([other, file]);
    expect(kubeconfigFiles('given', { KUBECONFIG: other })).toEqual(['given']);
  });
});
