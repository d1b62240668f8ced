import { request as httpsRequest } from 'node:https';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { describeCallError } from '../server/allocation/remote-transport.js';
import { isCertificateError } from '../server/k8s/certificate-errors.js';
import { FlagError, type FlagValues } from '../server/flags.js';
import { readInputFile, whyUnreadable } from '../server/input-file.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidLabelValue } from '../server/k8s/validation.js';

/**
 * `fleetsim bench --target-allocator`: the allocation scenarios against another cluster's
 * allocator service (a real Agones cluster, or a `fleetsim serve` standing in for one) over
 * mutual TLS. Everything here is checked before anything runs, and every error names its flag.
 */

export interface RemoteTarget {
  /** `https://HOST:PORT`, no path. */
  allocatorUrl: string;
  /** PEM files: the client certificate and key k6 presents, and the CA the server's certificate must chain to (absent: the system's roots). */
  clientCert: string;
  clientKey: string;
  ca?: string;
  /** With it, fleetsim creates the scenario's fleet through this cluster's API (kubectl), reads its status and deletes it. */
  kubeconfig?: string;
  namespace: string;
  fleet: string;
}

/** Flags of the remote mode (the rest of `fleetsim bench`'s flags stay in bench-command.ts). */
export const REMOTE_FLAGS = [
  { name: 'target-allocator', type: 'string', help: "https://HOST:PORT of a cluster's allocator service: allocate there over mutual TLS instead of starting fleetsim" },
  { name: 'client-cert', type: 'string', help: '--target-allocator: PEM client certificate the allocator trusts' },
  { name: 'client-key', type: 'string', help: '--target-allocator: PEM private key of --client-cert' },
  { name: 'ca', type: 'string', help: "--target-allocator: PEM CA of the allocator's server certificate (default: the system's roots)" },
  { name: 'kubeconfig', type: 'string', help: "--target-allocator: create the scenario's fleet on that cluster with kubectl, read its status, delete it at the end" },
  { name: 'namespace', type: 'string', help: '--target-allocator: namespace of the fleet (default default)' },
  { name: 'fleet', type: 'string', help: "--target-allocator: the fleet to allocate from (default the scenario's)" },
] as const;

const DEPENDENT_FLAGS = ['client-cert', 'client-key', 'ca', 'kubeconfig', 'namespace', 'fleet'] as const;

/** Flags that set up the local fleetsim: they mean nothing when the target is another cluster. */
const LOCAL_ONLY_FLAGS = ['baseline', 'allocator-model', 'scrape-metrics'] as const;

function readPemFile(flag: string, file: string, marker: RegExp, what: string): string {
  let text: string;
  try {
    text = readInputFile(file);
  } catch (error) {
    throw new FlagError(`--${flag} ${file}: cannot read it: ${whyUnreadable(error)}`);
  }
  if (!marker.test(text)) throw new FlagError(`--${flag} ${file}: not a PEM ${what}`);
  return text;
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

function allocatorUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new FlagError(`--target-allocator must be an https://HOST:PORT URL, not "${value}"`);
  }
  if (url.protocol !== 'https:') throw new FlagError(`--target-allocator must be https:// (the allocator service speaks TLS only), not "${value}"`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new FlagError(`--target-allocator is https://HOST:PORT with nothing after it (requests go to /gameserverallocation), not "${value}"`);
  }
  return url.origin;
}

function nameFlag(flag: string, value: string, problems: string[]): string {
  if (problems.length > 0) throw new FlagError(`--${flag} "${value}": ${problems[0]}`);
  return value;
}

/**
 * The remote target from the command line, or undefined without --target-allocator. `scenario`
 * is the scenario's name and `defaultFleet` its fleet's, when it can run against a remote cluster.
 */
export function remoteTarget(values: FlagValues, given: ReadonlySet<string>, scenario: string, defaultFleet: string | undefined): RemoteTarget | undefined {
  const target = values['target-allocator'];
  if (target === undefined) {
    const stray = DEPENDENT_FLAGS.find((flag) => given.has(flag));
    if (stray) throw new FlagError(`--${stray} goes with --target-allocator`);
    return undefined;
  }
  const allocator = allocatorUrl(String(target));
  if (defaultFleet === undefined) {
    throw new FlagError(`--target-allocator: ${scenario} talks to game servers' sidecars, which a remote cluster does not expose; use allocation-throughput or agones-scenario`);
  }
  const local = LOCAL_ONLY_FLAGS.find((flag) => given.has(flag));
  if (local) throw new FlagError(`--${local} is for a local fleetsim; it has no meaning with --target-allocator`);
  if (values['client-cert'] === undefined || values['client-key'] === undefined) {
    throw new FlagError('--target-allocator needs --client-cert and --client-key: the allocator service requires a client certificate (mutual TLS)');
  }
  const clientCert = resolve(String(values['client-cert']));
  const clientKey = resolve(String(values['client-key']));
  const ca = values.ca === undefined ? undefined : resolve(String(values.ca));
  const cert = readPemFile('client-cert', clientCert, CERTIFICATE, 'certificate');
  const key = readPemFile('client-key', clientKey, PRIVATE_KEY, 'private key');
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new FlagError(`--client-key ${clientKey} does not go with --client-cert ${clientCert}: ${(error as Error).message}`);
  }
  if (ca !== undefined) {
    const caText = readPemFile('ca', ca, CERTIFICATE, 'certificate');
    try {
      createSecureContext({ ca: caText });
    } catch (error) {
      throw new FlagError(`--ca ${ca}: ${(error as Error).message}`);
    }
  }
  let kubeconfig: string | undefined;
  if (values.kubeconfig !== undefined) {
    kubeconfig = resolve(String(values.kubeconfig));
    try {
      readInputFile(kubeconfig);
    } catch (error) {
      throw new FlagError(`--kubeconfig ${kubeconfig}: cannot read it: ${whyUnreadable(error)}`);
    }
  }
  const namespace = String(values.namespace ?? 'default');
  const fleet = String(values.fleet ?? defaultFleet);
  return {
    allocatorUrl: allocator,
    clientCert,
    clientKey,
    ...(ca !== undefined && { ca }),
    ...(kubeconfig !== undefined && { kubeconfig }),
    namespace: nameFlag('namespace', namespace, isDNS1123Label(namespace)),
    fleet: nameFlag('fleet', fleet, [...isDNS1123Subdomain(fleet), ...isValidLabelValue(fleet)]),
  };
}

/**
 * One request to the allocator with the run's TLS material, before anything else runs: any HTTP
 * answer means the handshake, the server's certificate and the client certificate were accepted.
 * It asks for `/` (a 404 from the gateway), not for an allocation, so nothing changes there.
 */
export async function probeAllocator(target: RemoteTarget, timeoutMs = 10_000): Promise<number> {
  const url = new URL(target.allocatorUrl);
  const tls = {
    cert: readInputFile(target.clientCert),
    key: readInputFile(target.clientKey),
    ...(target.ca !== undefined && { ca: readInputFile(target.ca) }),
  };
  /** Which flags to look at for an error. */
  const hint = (code: string, message: string): string => {
    if (isCertificateError(code)) return target.ca ? 'is --ca the CA that signed the allocator\'s certificate?' : "give the CA of the allocator's certificate with --ca";
    if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code)) return 'is the allocator service at that address?';
    if (/wrong version number|packet length too long/i.test(message)) return 'that port does not speak TLS: is it the allocator service?';
    return 'check --client-cert and --client-key: the allocator must trust their CA';
  };
  return new Promise<number>((resolvePromise, reject) => {
    let handshakeDone = false;
    const req = httpsRequest(
      { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port || 443, method: 'GET', path: '/', agent: false, ...tls },
      (res) => {
        res.resume();
        res.on('end', () => resolvePromise(res.statusCode ?? 0));
      },
    );
    req.on('socket', (socket) => socket.once('secureConnect', () => (handshakeDone = true)));
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', (error: Error & { code?: string }) => {
      const why = describeCallError(error, { handshakeDone, tls }).replace("the policy's serverCa", '--ca').replace(/\s*\n\s*/g, ' ');
      reject(new FlagError(`--target-allocator ${target.allocatorUrl}: ${why}; ${hint(error.code ?? '', error.message)}`));
    });
    req.end();
  });
}
