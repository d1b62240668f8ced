import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CLI, REPO_ROOT } from './paths.js';
import type { AllocatorOptions } from '../server/allocation/allocator.js';
import { allocatorModelArguments } from '../server/allocation/allocator-model-flags.js';
import { ALLOCATOR_CLIENT_SECRET, ALLOCATOR_CLIENT_SECRET_NAMESPACE, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_CA_SECRET } from '../server/allocation/allocator-install.js';
import { secretData } from '../server/allocation/remote-allocator.js';
import type { Resource } from '../server/kinds/resource.js';

/**
 * The servers a run talks to, each a child process on loopback: `fleetsim serve` (started fresh
 * for every run, its event log in the run's folder) and the baseline server.
 */

export const SERVING_LINE = /^fleetsim serving on http:\/\/(\S+):(\d+) /m;

/** Environment variables that would change `fleetsim serve`'s flags behind the harness's back. */
const SERVE_ENV = ['FLEETSIM_PORT', 'FLEETSIM_HOST', 'FLEETSIM_DB', 'FLEETSIM_NODES', 'FLEETSIM_SEED', 'FEATURE_GATES'];

export class ServerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private out = '';
  private done = false;

  constructor(command: string, args: string[], logPath: string, env: NodeJS.ProcessEnv) {
    const log = createWriteStream(logPath);
    this.child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (this.out.length < 65_536) this.out += chunk;
      log.write(chunk);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => log.write(chunk));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.done = true;
        log.end();
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        this.done = true;
        log.end(`\n[spawn error] ${error.message}\n`);
        resolve({ code: null, signal: null });
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** What it has printed to stdout so far (the first 64 KiB). */
  get output(): string {
    return this.out;
  }

  /** Resolves with the first match of `pattern` in stdout; rejects if the process ends first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const check = () => {
        const match = pattern.exec(this.out);
        if (match) return resolve(match);
        if (this.done) return reject(new Error(`the process exited before printing ${pattern}:\n${this.out}`));
        if (Date.now() > deadline) return reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${this.out}`));
        setTimeout(check, 50);
      };
      check();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

export interface ServeSettings {
  dbPath: string;
  logPath: string;
  manifests?: string;
  profiles?: string;
  nodes: number;
  maxPods: number;
  featureGates: string;
  allocator?: AllocatorOptions;
  /** `--allocator-tls auto` on a free port: the allocator over mutual TLS, REST and gRPC. */
  allocatorTls?: boolean;
  /** `--no-listen`: simulated game servers stay off the network (no host ports taken on this machine). */
  noListen?: boolean;
  /** `--port-range`: the host ports its GameServers get (and, listening, bind on this machine). */
  portRange?: string;
}

export interface RunningFleetsim {
  process: ServerProcess;
  baseUrl: string;
  /** host:port of the allocator's TLS port, with `allocatorTls`. */
  allocatorAddress?: string;
}

const ALLOCATOR_LINE = /^fleetsim allocator serving on https:\/\/(\S+):(\d+)\//m;

export function serveArguments(settings: ServeSettings): string[] {
  const args = ['serve', '--host', '127.0.0.1', '--port', '0', '--db', settings.dbPath, '--no-default-fleet'];
  args.push('--nodes', String(settings.nodes), '--max-pods', String(settings.maxPods));
  if (settings.featureGates) args.push('--feature-gates', settings.featureGates);
  if (settings.allocator) args.push(...allocatorModelArguments(settings.allocator));
  if (settings.allocatorTls) args.push('--allocator-tls', 'auto', '--allocator-port', '0');
  if (settings.noListen) args.push('--no-listen');
  if (settings.portRange) args.push('--port-range', settings.portRange);
  if (settings.manifests) args.push('-f', settings.manifests);
  if (settings.profiles) args.push('--profiles', settings.profiles);
  return args;
}

/** A fresh `fleetsim serve` on 127.0.0.1 and a kernel-chosen port. */
export async function startFleetsim(settings: ServeSettings): Promise<RunningFleetsim> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVE_ENV) delete env[name];
  const server = new ServerProcess(process.execPath, [CLI, ...serveArguments(settings)], settings.logPath, env);
  try {
    const match = await server.waitForLine(SERVING_LINE, 120_000);
    const allocator = settings.allocatorTls ? await server.waitForLine(ALLOCATOR_LINE, 1000) : undefined;
    return { process: server, baseUrl: `http://127.0.0.1:${match[2]}`, ...(allocator && { allocatorAddress: `${allocator[1]}:${allocator[2]}` }) };
  } catch (error) {
    await server.stop(1000);
    throw error;
  }
}

export async function startBaselineProcess(configPath: string, logPath: string): Promise<RunningFleetsim> {
  const script = fileURLToPath(new URL('./baseline-server.js', import.meta.url));
  const server = new ServerProcess(process.execPath, [script, configPath], logPath, { ...process.env });
  try {
    const match = await server.waitForLine(/^baseline serving on http:\/\/127\.0\.0\.1:(\d+)$/m, 20_000);
    // A canned allocator, when the config has one, is announced before the serving line.
    const allocator = /^baseline allocator serving on (\S+:\d+)$/m.exec(server.output);
    return { process: server, baseUrl: `http://127.0.0.1:${match[1]}`, ...(allocator && { allocatorAddress: allocator[1] }) };
  } catch (error) {
    await server.stop(1000);
    throw error;
  }
}

// -- talking to fleetsim over HTTP -------------------------------------------------------------

export interface HttpAnswer {
  status: number;
  body: string;
}

export async function request(baseUrl: string, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<HttpAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, body: await res.text() };
}

/** A Secret's data, decoded, read through a fleetsim's resource API. */
export async function readSecret(baseUrl: string, namespace: string, name: string): Promise<Record<string, string>> {
  return secretData(await requestJson<Resource>(baseUrl, 'GET', `/api/v1/namespaces/${namespace}/secrets/${name}`));
}

/** What a client needs to call an allocator over mutual TLS: its address, and PEM texts. */
export interface AllocatorClient {
  address: string;
  cert: string;
  key: string;
  /** The CA the allocator's certificate chains to. */
  ca: string;
}

/** The allocator's address and the client's certificate, read from its Secrets as Agones's guide tells a client to. */
export async function readAllocatorClient(fleetsim: RunningFleetsim): Promise<AllocatorClient> {
  if (!fleetsim.allocatorAddress) throw new Error('fleetsim printed no allocator address');
  const client = await readSecret(fleetsim.baseUrl, ALLOCATOR_CLIENT_SECRET_NAMESPACE, ALLOCATOR_CLIENT_SECRET);
  const ca = await readSecret(fleetsim.baseUrl, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_CA_SECRET);
  return { address: fleetsim.allocatorAddress, cert: client['tls.crt'] ?? '', key: client['tls.key'] ?? '', ca: ca['tls-ca.crt'] ?? '' };
}

export async function requestJson<T>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await request(baseUrl, method, path, body);
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return JSON.parse(answer.body) as T;
}

interface FleetObject {
  status?: { replicas?: number; readyReplicas?: number; allocatedReplicas?: number };
}

/**
 * Polls the Fleet until it has `size` game servers that are Ready (or, for game servers that
 * wait for a client to call Ready, that exist at all).
 */
export async function waitForFleet(
  baseUrl: string,
  fleet: string,
  size: number,
  waitFor: 'ready' | 'exists',
  timeoutMs: number,
  onProgress?: (status: string) => void,
): Promise<number> {
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    const answer = await request(baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/default/fleets/${fleet}`);
    if (answer.status === 200) {
      const status = (JSON.parse(answer.body) as FleetObject).status ?? {};
      const have = waitFor === 'ready' ? (status.readyReplicas ?? 0) : (status.replicas ?? 0);
      if (have >= size) return Date.now() - started;
      if (onProgress && Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        onProgress(`replicas ${status.replicas ?? 0}, ready ${status.readyReplicas ?? 0}`);
      }
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`fleet ${fleet} did not reach ${size} ${waitFor === 'ready' ? 'Ready' : ''} game servers within ${timeoutMs} ms: ${answer.body.slice(0, 300)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Names of the fleet's GameServers (for scenarios that address game servers one by one). */
export async function gameServerNames(baseUrl: string, fleet: string): Promise<string[]> {
  const selector = encodeURIComponent(`agones.dev/fleet=${fleet}`);
  const list = await requestJson<{ items: Array<{ metadata: { name: string } }> }>(
    baseUrl,
    'GET',
    `/apis/agones.dev/v1/namespaces/default/gameservers?labelSelector=${selector}`,
  );
  return list.items.map((gs) => gs.metadata.name).sort();
}
