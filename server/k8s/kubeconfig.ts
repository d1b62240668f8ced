import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { stringify } from 'yaml';

/**
 * A kubeconfig that points kubectl, client libraries and k9s at a fleetsim's resource API: one
 * cluster, user and context, each named `fleetsim`, the context current. fleetsim authorizes
 * nothing, so the user holds no credentials.
 */

export const KUBECONFIG_NAME = 'fleetsim';

/** The note that opens a kubeconfig `serve` writes: how it knows the file for its own. */
const WRITTEN_BY = 'Written by fleetsim serve';

export function kubeconfigText(server: string, namespace = 'default', note?: string): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    // The API is plain HTTP: @kubernetes/client-node refuses an http:// server unless the
    // cluster skips TLS verification (kubectl has nothing to verify either way).
    clusters: [{ name: KUBECONFIG_NAME, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: KUBECONFIG_NAME, user: {} }],
    contexts: [{ name: KUBECONFIG_NAME, context: { cluster: KUBECONFIG_NAME, user: KUBECONFIG_NAME, namespace } }],
    'current-context': KUBECONFIG_NAME,
    preferences: {},
  };
  return `${note ? `${note.split('\n').map((line) => `# ${line}`).join('\n')}\n` : ''}${stringify(config)}`;
}

/**
 * Where `serve` keeps the kubeconfig of a log: beside it, named after it (`data/fleetsim.db` →
 * `data/fleetsim.kubeconfig`), so each log has its own and the server holding the log owns it.
 * Undefined for a log in memory.
 */
export function kubeconfigPathFor(db: string): string | undefined {
  if (db === ':memory:' || db === '') return undefined;
  const path = resolve(db);
  return join(dirname(path), `${basename(path, extname(path))}.kubeconfig`);
}

/**
 * Writes the kubeconfig for `server` at `path` (whole, through a rename: a reader never sees half
 * of it). A file there that fleetsim did not write is left alone: the answer says why.
 */
export function writeKubeconfig(path: string, server: string, log: string): { written: true } | { written: false; reason: string } {
  try {
    if (existsSync(path) && !readFileSync(path, 'utf8').startsWith(`# ${WRITTEN_BY}`)) {
      return { written: false, reason: `${path} exists and fleetsim did not write it: left as it is` };
    }
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, kubeconfigText(server, 'default', `${WRITTEN_BY} for ${log}, at each start.`), { mode: 0o600 });
    renameSync(temporary, path);
    return { written: true };
  } catch (error) {
    return { written: false, reason: `could not write ${path}: ${(error as Error).message}` };
  }
}
