import type { Clock, TimerHandle } from '../clock.js';
import type { Resource } from '../kinds/resource.js';
import type { AllocationResult } from './allocator.js';
import { parseJsonExact, stringifyJsonExact } from '../log/json.js';
import {
  type GameServerAllocation,
  type GameServerAllocationStatus,
  failedAllocationStatus,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { isJsonObject } from '../kinds/common.js';
import { type ClientTls, HttpsTransport, type RemoteTransport } from './remote-transport.js';
import { fromAllocationResponse, toAllocationRequest } from './allocation-request.js';

/**
 * Allocation in another cluster (reference §6.10, Agones's `allocateFromRemoteCluster`): the
 * allocation is sent as an AllocationRequest to the remote allocator service,
 * `POST https://<endpoint>/gameserverallocation`, with the client certificate of the policy's
 * Secret and the policy's `serverCa` as the only trusted server CA.
 *
 *  - The forwarded request has `multiClusterSetting.enabled = false` and the namespace of the
 *    policy's connectionInfo.
 *  - An endpoint without a port gets `:443`; the endpoint (host:port) is the `source` of the answer.
 *  - Each attempt walks the endpoints in order and stops at the first that allocates; the last
 *    endpoint's outcome is the attempt's. Attempts are retried with a backoff of 100 ms doubling,
 *    7 attempts at most (sleeps 100, 200, 400, 800, 1600, 3200 ms), and stop early on success or
 *    when the remote answers ResourceExhausted (nothing to allocate there: UnAllocated).
 *  - Each call has 10 s, the whole remote allocation 30 s.
 *
 * Every wait this code decides (the backoff sleeps, the per-call and total time limits) is a
 * timer on the cluster's clock, so on the virtual clock they pass only as the clock is moved. The
 * socket itself also has a real-time idle limit equal to the per-call limit, so a remote that
 * never answers cannot hold a connection forever whatever the clock does.
 */

/** Agones's remoteAllocationTimeout. */
export const REMOTE_ALLOCATION_TIMEOUT_MS = 10_000;
/** Agones's totalRemoteAllocationTimeout. */
export const TOTAL_REMOTE_ALLOCATION_TIMEOUT_MS = 30_000;
/** Agones's backoff for remote allocation: 7 steps from 100 ms, doubling. */
export const REMOTE_ALLOCATION_BACKOFF: Backoff = { steps: 7, initialMs: 100, factor: 2 };
/** gRPC ResourceExhausted: the allocator's UnAllocated answer (default mapping). */
const RESOURCE_EXHAUSTED = 8;

export interface Backoff {
  steps: number;
  initialMs: number;
  factor: number;
}

/** A GameServerAllocationPolicy's `spec.connectionInfo`. */
export interface ClusterConnectionInfo {
  clusterName?: string;
  allocationEndpoints?: string[];
  secretName?: string;
  namespace?: string;
  /** base64 of a PEM bundle, as the stored policy holds it. */
  serverCa?: string;
}

/** A remote allocation that failed: the text names the endpoint and the cause. */
export class RemoteAllocationError extends Error {
  constructor(
    message: string,
    readonly endpoint?: string,
  ) {
    super(message);
    this.name = 'RemoteAllocationError';
  }
}

// ---------------------------------------------------------------------------------------------
// Endpoints, TLS material
// ---------------------------------------------------------------------------------------------

/** An allocation endpoint as dialled: `:443` is added when the entry has no port. */
export function endpointAddress(entry: string): string {
  const trimmed = entry.trim();
  return trimmed.includes(':') ? trimmed : `${trimmed}:443`;
}

function decodeBase64(value: string): string {
  return Buffer.from(value.replace(/\s+/g, ''), 'base64').toString('utf8');
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** The data of a Secret, decoded: `data` (base64) with `stringData` (plain) over it, as Kubernetes merges them. */
export function secretData(secret: Resource): Record<string, string> {
  const out: Record<string, string> = {};
  const data = secret.data;
  if (typeof data === 'object' && data !== null) {
    for (const [key, value] of Object.entries(data)) if (typeof value === 'string') out[key] = decodeBase64(value);
  }
  const stringData = secret.stringData;
  if (typeof stringData === 'object' && stringData !== null) {
    for (const [key, value] of Object.entries(stringData)) if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/**
 * The client's TLS material for a policy (Agones's getClientCertificates and root CA pool): the
 * key pair `tls.crt`/`tls.key` of the Secret `secretName` in the request's namespace, and as
 * trusted CAs `serverCa` plus the Secret's optional `ca.crt`; neither: the system roots. A policy
 * without a `secretName` connects without a client certificate (a fleetsim leniency, for remote
 * allocators running TLS without client authentication).
 */
export function clientTls(
  info: ClusterConnectionInfo,
  namespace: string,
  getSecret: (namespace: string, name: string) => Resource | undefined,
): ClientTls {
  const tls: ClientTls = {};
  const cas: string[] = [];
  if (info.serverCa) {
    const text = info.serverCa.includes('-----BEGIN') ? info.serverCa : decodeBase64(info.serverCa);
    if (!PEM_CERTIFICATE.test(text)) throw new RemoteAllocationError('only PEM format is accepted for server CA');
    cas.push(text);
  }
  if (info.secretName) {
    const secret = getSecret(namespace, info.secretName);
    if (!secret) throw new RemoteAllocationError(`secrets "${info.secretName}" not found in namespace ${namespace}`);
    const data = secretData(secret);
    if (Object.keys(data).length === 0) throw new RemoteAllocationError(`secret ${info.secretName} does not have data`);
    const cert = data['tls.crt'];
    const key = data['tls.key'];
    if (!cert || !key) throw new RemoteAllocationError(`missing client certificate key pair in secret ${info.secretName}`);
    tls.cert = cert;
    tls.key = key;
    if (data['ca.crt']) cas.push(data['ca.crt']);
  }
  if (cas.length > 0) tls.ca = cas.join('\n');
  return tls;
}
// ---------------------------------------------------------------------------------------------
// The remote allocator
// ---------------------------------------------------------------------------------------------

export interface RemoteAllocatorOptions {
  clock: Clock;
  /** Secrets as the cluster stores them (`cluster.readModel.get('Secret', namespace, name)`). */
  getSecret: (namespace: string, name: string) => Resource | undefined;
  transport?: RemoteTransport;
  callTimeoutMs?: number;
  totalTimeoutMs?: number;
  backoff?: Backoff;
}

type CallOutcome =
  | { kind: 'allocated'; status: GameServerAllocationStatus }
  | { kind: 'unallocated'; endpoint: string }
  | { kind: 'error'; endpoint: string; message: string };

class TotalTimeout extends Error {}

export class RemoteAllocator {
  private readonly clock: Clock;
  private readonly transport: RemoteTransport;
  private readonly callTimeoutMs: number;
  private readonly totalTimeoutMs: number;
  private readonly backoff: Backoff;
  /** Allocations under way, each with what ends it when the allocator closes. */
  private readonly running = new Set<() => void>();

  constructor(private readonly options: RemoteAllocatorOptions) {
    this.clock = options.clock;
    this.transport = options.transport ?? new HttpsTransport();
    this.callTimeoutMs = options.callTimeoutMs ?? REMOTE_ALLOCATION_TIMEOUT_MS;
    this.totalTimeoutMs = options.totalTimeoutMs ?? TOTAL_REMOTE_ALLOCATION_TIMEOUT_MS;
    this.backoff = options.backoff ?? REMOTE_ALLOCATION_BACKOFF;
  }

  /**
   * Allocates through the remote allocator of `info`. Resolves Allocated (source = endpoint) or
   * UnAllocated (the remote had nothing); rejects with a RemoteAllocationError naming the endpoint
   * and the cause when no attempt got an answer.
   */
  async allocate(gsa: GameServerAllocation, info: ClusterConnectionInfo, requestNamespace: string): Promise<AllocationResult> {
    const endpoints = (info.allocationEndpoints ?? []).filter((e) => e.trim() !== '').map(endpointAddress);
    if (endpoints.length === 0) throw new RemoteAllocationError('the policy has no allocation endpoints');
    const tls = clientTls(info, requestNamespace, this.options.getSecret);
    const body = stringifyJsonExact(toAllocationRequest(gsa, info.namespace ?? ''));

    const total = new AbortController();
    let totalTimer: TimerHandle | undefined;
    let abandon: () => void = () => undefined;
    const totalExpired = new Promise<never>((_, reject) => {
      totalTimer = this.clock.setTimeout(() => {
        total.abort(new Error('remote allocation total timeout exceeded'));
        reject(new TotalTimeout('remote allocation total timeout exceeded'));
      }, this.totalTimeoutMs);
      abandon = () => reject(new RemoteAllocationError('the allocator closed: the remote allocation was abandoned', endpoints[0]));
    });
    totalExpired.catch(() => undefined);
    this.running.add(abandon);

    let last: CallOutcome | undefined;
    let attempts = 0;
    try {
      let delay = this.backoff.initialMs;
      for (let step = 1; step <= this.backoff.steps; step++) {
        attempts = step;
        last = await Promise.race([this.attempt(endpoints, body, tls, total.signal), totalExpired]);
        if (last.kind === 'allocated') return { status: last.status };
        if (last.kind === 'unallocated') return { status: failedAllocationStatus('UnAllocated') };
        if (step < this.backoff.steps) {
          await Promise.race([this.sleep(delay, total.signal), totalExpired]);
          delay *= this.backoff.factor;
        }
      }
    } catch (error) {
      if (!(error instanceof TotalTimeout)) throw error;
      const cause = last?.kind === 'error' ? `; last error: ${last.message}` : '';
      throw new RemoteAllocationError(
        `remote allocation to ${endpoints.join(', ')} failed: remote allocation total timeout exceeded (${this.totalTimeoutMs} ms, ${attempts} attempts)${cause}`,
        last?.kind === 'error' ? last.endpoint : endpoints[0],
      );
    } finally {
      this.running.delete(abandon);
      this.clock.clearTimeout(totalTimer);
      if (!total.signal.aborted) total.abort(new Error('the remote allocation is over'));
    }
    const failure = last as Extract<CallOutcome, { kind: 'error' }>;
    throw new RemoteAllocationError(
      `remote allocation failed after ${attempts} attempts: ${failure.message}`,
      failure.endpoint,
    );
  }

  /** Ends the allocations under way (their calls aborted, their timers cleared) and the transport's connections. */
  close(): void {
    for (const abandon of [...this.running]) abandon();
    this.transport.close?.();
  }

  /** Waits `ms`, or less once `signal` aborts (the allocation is over): no timer outlives it. */
  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.clock.setTimeout(resolve, ms);
      signal.addEventListener(
        'abort',
        () => {
          this.clock.clearTimeout(handle);
          resolve();
        },
        { once: true },
      );
    });
  }

  /** One attempt: the endpoints in order, until one allocates; the last one's outcome otherwise. */
  private async attempt(endpoints: string[], body: string, tls: ClientTls, totalSignal: AbortSignal): Promise<CallOutcome> {
    let outcome: CallOutcome | undefined;
    for (const endpoint of endpoints) {
      outcome = await this.call(endpoint, body, tls, totalSignal);
      if (outcome.kind === 'allocated') return outcome;
    }
    return outcome!;
  }

  private async call(endpoint: string, body: string, tls: ClientTls, totalSignal: AbortSignal): Promise<CallOutcome> {
    const controller = new AbortController();
    const onTotal = () => controller.abort(totalSignal.reason);
    if (totalSignal.aborted) onTotal();
    else totalSignal.addEventListener('abort', onTotal, { once: true });
    const timer = this.clock.setTimeout(
      () => controller.abort(new Error(`no answer within ${this.callTimeoutMs} ms (remote allocation timeout)`)),
      this.callTimeoutMs,
    );
    const named = (message: string): CallOutcome => ({ kind: 'error', endpoint, message: `remote allocator ${endpoint}: ${message}` });
    try {
      const reply = await this.transport.post({ endpoint, body, tls, signal: controller.signal, socketTimeoutMs: this.callTimeoutMs });
      let json: unknown;
      try {
        json = reply.body.trim() === '' ? undefined : parseJsonExact(reply.body);
      } catch {
        json = undefined;
      }
      if (reply.status === 200) {
        try {
          return { kind: 'allocated', status: fromAllocationResponse(json, endpoint) };
        } catch (error) {
          return named((error as Error).message);
        }
      }
      const code = isJsonObject(json) && typeof json.code === 'number' ? json.code : undefined;
      const message = isJsonObject(json) && typeof json.message === 'string' ? json.message : reply.body.slice(0, 200);
      if (code === RESOURCE_EXHAUSTED || (code === undefined && reply.status === 429)) return { kind: 'unallocated', endpoint };
      return named(`answered HTTP ${reply.status}${code !== undefined ? ` (code ${code})` : ''}: ${message}`);
    } catch (error) {
      return named(error instanceof Error ? error.message : String(error));
    } finally {
      this.clock.clearTimeout(timer);
      totalSignal.removeEventListener('abort', onTotal);
    }
  }
}
