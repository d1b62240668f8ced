import { readInputFile, whyUnreadable } from '../input-file.js';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * Reading a kubeconfig as kubectl does: the file given (or each of $KUBECONFIG's, the first to set
 * a name winning, or ~/.kube/config), a context (the current one unless named), and what it says
 * about reaching its cluster: the server, the certificates (inline or as files beside the
 * kubeconfig), and who the user is (a bearer token, a client certificate, basic auth, or an exec
 * credential plugin such as gke-gcloud-auth-plugin). Errors name the file and the entry at fault.
 */

export class KubeconfigError extends Error {}

/** An exec credential plugin (client.authentication.k8s.io): a command that prints an ExecCredential. */
export interface ExecPlugin {
  command: string;
  args: string[];
  env: Record<string, string>;
  apiVersion: string;
  /** The folder relative commands are found from: the kubeconfig's. */
  dir: string;
}

/** How to reach and authenticate to one cluster. */
export interface ClusterAccess {
  /** The kubeconfig file(s) read. */
  source: string;
  cluster: string;
  context: string;
  server: string;
  /** The context's namespace, when it names one. */
  namespace?: string;
  ca?: Buffer;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  clientCertificate?: Buffer;
  clientKey?: Buffer;
  token?: string;
  /** Read at each request: a token file may be rotated (projected service-account tokens are). */
  tokenFile?: string;
  basic?: { username: string; password: string };
  exec?: ExecPlugin;
}

interface Named<T> {
  name: string;
  value: T;
  /** The folder of the file it came from: relative paths in it are read from there. */
  dir: string;
  file: string;
}

type Fields = Record<string, unknown>;

/** The kubeconfig files kubectl would read: the flag's, else $KUBECONFIG's, else ~/.kube/config. */
export function kubeconfigFiles(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  if (flag) return [flag];
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  return fromEnv.length > 0 ? fromEnv : [join(homedir(), '.kube', 'config')];
}

function readConfig(file: string): Fields {
  let text: string;
  try {
    text = readInputFile(file);
  } catch (error) {
    throw new KubeconfigError(`cannot read the kubeconfig ${file}: ${whyUnreadable(error)}`);
  }
  let config: unknown;
  try {
    config = parse(text);
  } catch (error) {
    throw new KubeconfigError(`${file}: not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (config === null || config === undefined) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new KubeconfigError(`${file}: a kubeconfig is a mapping (kind: Config)`);
  return config as Fields;
}

/** `clusters`, `users` or `contexts` of one file, each entry with its name and its inner mapping. */
function entries(config: Fields, list: string, inner: string, file: string): Array<Named<Fields>> {
  const value = config[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new KubeconfigError(`${file}: ${list} must be a list`);
  return value.map((entry: unknown, i) => {
    const item = (entry ?? {}) as Fields;
    if (typeof item.name !== 'string' || item.name === '') throw new KubeconfigError(`${file}: ${list}[${i}] has no name`);
    const body = item[inner];
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
      throw new KubeconfigError(`${file}: ${list}[${i}] (${item.name}): ${inner} must be a mapping`);
    }
    return { name: item.name, value: (body ?? {}) as Fields, dir: dirname(resolve(file)), file };
  });
}

function text(entry: Named<Fields>, key: string, what: string): string | undefined {
  const value = entry.value[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new KubeconfigError(`${entry.file}: ${what} "${entry.name}": ${key} must be a string`);
  return value;
}

/** `<key>-data` (base64) or `<key>` (a file, relative to the kubeconfig). */
function bytes(entry: Named<Fields>, key: string, what: string): Buffer | undefined {
  const data = text(entry, `${key}-data`, what);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const path = text(entry, key, what);
  if (path === undefined) return undefined;
  const file = isAbsolute(path) ? path : join(entry.dir, path);
  try {
    // PEM, text: read as every file a user names is (regular, bounded).
    return Buffer.from(readInputFile(file));
  } catch (error) {
    throw new KubeconfigError(`${entry.file}: ${what} "${entry.name}": ${key} ${file}: ${whyUnreadable(error)}`);
  }
}

function execPlugin(user: Named<Fields>): ExecPlugin | undefined {
  const exec = user.value.exec;
  if (exec === undefined || exec === null) return undefined;
  const what = `user "${user.name}": exec`;
  if (typeof exec !== 'object' || Array.isArray(exec)) throw new KubeconfigError(`${user.file}: ${what} must be a mapping`);
  const fields = exec as Fields;
  if (typeof fields.command !== 'string' || fields.command === '') throw new KubeconfigError(`${user.file}: ${what}.command is required`);
  const args = fields.args ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new KubeconfigError(`${user.file}: ${what}.args must be a list of strings`);
  const env: Record<string, string> = {};
  for (const [i, item] of ((fields.env ?? []) as unknown[]).entries()) {
    const { name, value } = (item ?? {}) as Fields;
    if (typeof name !== 'string' || typeof value !== 'string') throw new KubeconfigError(`${user.file}: ${what}.env[${i}] needs a name and a value`);
    env[name] = value;
  }
  return {
    command: fields.command,
    args: args as string[],
    env,
    apiVersion: typeof fields.apiVersion === 'string' ? fields.apiVersion : 'client.authentication.k8s.io/v1',
    dir: user.dir,
  };
}

/** The access one context of the kubeconfig gives (the current context unless `context` names one). */
export function loadClusterAccess(files: readonly string[], context?: string): ClusterAccess {
  const configs = files.map((file) => ({ file, config: readConfig(file) }));
  const source = files.join(delimiter);
  // The first file to name an entry wins, as kubectl merges $KUBECONFIG.
  const first = <T>(lists: Array<Array<Named<T>>>) => {
    const byName = new Map<string, Named<T>>();
    for (const list of lists) for (const entry of list) if (!byName.has(entry.name)) byName.set(entry.name, entry);
    return byName;
  };
  const contexts = first(configs.map(({ file, config }) => entries(config, 'contexts', 'context', file)));
  const clusters = first(configs.map(({ file, config }) => entries(config, 'clusters', 'cluster', file)));
  const users = first(configs.map(({ file, config }) => entries(config, 'users', 'user', file)));
  const current = configs.map(({ config }) => config['current-context']).find((c): c is string => typeof c === 'string' && c !== '');
  const contextName = context ?? current;
  if (contextName === undefined) {
    throw new KubeconfigError(`${source}: no current-context: name one with --context (it has ${[...contexts.keys()].join(', ') || 'no contexts'})`);
  }
  const chosen = contexts.get(contextName);
  if (!chosen) throw new KubeconfigError(`${source}: no context "${contextName}" (it has ${[...contexts.keys()].join(', ') || 'none'})`);
  const clusterName = text(chosen, 'cluster', 'context');
  if (clusterName === undefined) throw new KubeconfigError(`${chosen.file}: context "${contextName}" names no cluster`);
  const cluster = clusters.get(clusterName);
  if (!cluster) throw new KubeconfigError(`${chosen.file}: context "${contextName}": no cluster "${clusterName}" in the kubeconfig`);
  const server = text(cluster, 'server', 'cluster');
  if (server === undefined) throw new KubeconfigError(`${cluster.file}: cluster "${clusterName}" has no server`);
  try {
    const url = new URL(server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    throw new KubeconfigError(`${cluster.file}: cluster "${clusterName}": server "${server}" is not an http(s) URL`);
  }
  const userName = text(chosen, 'user', 'context');
  const user = userName === undefined ? undefined : users.get(userName);
  if (userName !== undefined && !user) throw new KubeconfigError(`${chosen.file}: context "${contextName}": no user "${userName}" in the kubeconfig`);
  const access: ClusterAccess = {
    source,
    cluster: clusterName,
    context: contextName,
    server: server.replace(/\/+$/, ''),
    namespace: text(chosen, 'namespace', 'context'),
    ca: bytes(cluster, 'certificate-authority', 'cluster'),
    insecureSkipTlsVerify: cluster.value['insecure-skip-tls-verify'] === true,
    tlsServerName: text(cluster, 'tls-server-name', 'cluster'),
  };
  if (!user) return access;
  const username = text(user, 'username', 'user');
  const password = text(user, 'password', 'user');
  const tokenFile = text(user, 'tokenFile', 'user');
  return {
    ...access,
    clientCertificate: bytes(user, 'client-certificate', 'user'),
    clientKey: bytes(user, 'client-key', 'user'),
    token: text(user, 'token', 'user'),
    tokenFile: tokenFile === undefined ? undefined : isAbsolute(tokenFile) ? tokenFile : join(user.dir, tokenFile),
    basic: username !== undefined ? { username, password: password ?? '' } : undefined,
    exec: execPlugin(user),
  };
}
