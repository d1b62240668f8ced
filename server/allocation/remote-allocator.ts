import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { Clock, TimerHandle } from '../clock.js';
import type { Resource } from '../kinds/resource.js';
import type { AllocationResult } from './allocator.js';
import { isCertificateError } from '../k8s/certificate-errors.js';
import { parseJsonExact, stringifyJsonExact } from '../log/json.js';
import { type Int64, toInt64 } from '../int64.js';
import {
  type GameServerAllocation,
  type GameServerAllocationStatus,
  type GameServerSelector,
  failedAllocationStatus,
  toSelectors,
} from '../kinds/gameserverallocation/gameserverallocation.js';
import { type Json, isJsonObject } from '../kinds/common.js';

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
/** Largest answer read from a remote allocator. */
const MAX_RESPONSE_BYTES = 1 << 20;
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

/** What the HTTPS client presents and trusts. */
export interface ClientTls {
  cert?: string;
  key?: string;
  /** PEM bundle of the trusted server CAs; absent: the system roots. */
  ca?: string;
}

export interface RemoteCall {
  /** host:port */
  endpoint: string;
  /** The AllocationRequest JSON. */
  body: string;
  tls: ClientTls;
  /** Aborted when the call's time (on the cluster clock) or the total time runs out. */
  signal: AbortSignal;
  /** Real-time idle limit of the socket. */
  socketTimeoutMs: number;
}

export interface RemoteReply {
  status: number;
  body: string;
}

/** How a call reaches a remote allocator; tests pass a fake one. */
export interface RemoteTransport {
  post(call: RemoteCall): Promise<RemoteReply>;
  close?(): void;
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
// Wire shapes
// ---------------------------------------------------------------------------------------------

function selectorRequest(selector: GameServerSelector): Json {
  // The proto has matchLabels only: matchExpressions cannot be forwarded (Agones drops them too).
  const out: Json = {
    matchLabels: { ...(selector.matchLabels ?? {}) },
    gameServerState: selector.gameServerState === 'Allocated' ? 'ALLOCATED' : 'READY',
  };
  if (selector.players) {
    out.players = { minAvailable: String(selector.players.minAvailable ?? 0), maxAvailable: String(selector.players.maxAvailable ?? 0) };
  }
  if (selector.counters && Object.keys(selector.counters).length > 0) {
    const counters: Json = {};
    for (const [key, c] of Object.entries(selector.counters)) {
      counters[key] = {
        minCount: String(c.minCount ?? 0),
        maxCount: String(c.maxCount ?? 0),
        minAvailable: String(c.minAvailable ?? 0),
        maxAvailable: String(c.maxAvailable ?? 0),
      };
    }
    out.counters = counters;
  }
  if (selector.lists && Object.keys(selector.lists).length > 0) {
    const lists: Json = {};
    for (const [key, l] of Object.entries(selector.lists)) {
      lists[key] = { containsValue: l.containsValue ?? '', minAvailable: String(l.minAvailable ?? 0), maxAvailable: String(l.maxAvailable ?? 0) };
    }
    out.lists = lists;
  }
  return out;
}

/**
 * A (defaulted) GameServerAllocation as the AllocationRequest sent to a remote allocator
 * (Agones's ConvertGSAToAllocationRequest, then `enabled = false` and the policy's namespace).
 * The selectors are sent as `gameServerSelectors`, the deprecated ones already folded in.
 */
export function toAllocationRequest(gsa: GameServerAllocation, namespace: string): Json {
  const spec = gsa.spec ?? {};
  const request: Json = {
    namespace,
    multiClusterSetting: {
      enabled: false,
      policySelector: { matchLabels: { ...(spec.multiClusterSetting?.policySelector?.matchLabels ?? {}) } },
    },
    gameServerSelectors: toSelectors(gsa).map(selectorRequest),
    scheduling: spec.scheduling === 'Distributed' ? 'Distributed' : 'Packed',
    metadata: { labels: { ...(spec.metadata?.labels ?? {}) }, annotations: { ...(spec.metadata?.annotations ?? {}) } },
  };
  if (spec.priorities && spec.priorities.length > 0) {
    request.priorities = spec.priorities.map((p) => ({ type: p.type, key: p.key, order: p.order ?? 'Ascending' }));
  }
  if (spec.counters && Object.keys(spec.counters).length > 0) {
    const counters: Json = {};
    for (const [key, action] of Object.entries(spec.counters)) {
      const out: Json = {};
      if (action.action !== undefined && action.action !== null) out.action = action.action;
      if (action.amount !== undefined && action.amount !== null) out.amount = String(action.amount);
      if (action.capacity !== undefined && action.capacity !== null) out.capacity = String(action.capacity);
      counters[key] = out;
    }
    request.counters = counters;
  }
  if (spec.lists && Object.keys(spec.lists).length > 0) {
    const lists: Json = {};
    for (const [key, action] of Object.entries(spec.lists)) {
      const out: Json = {};
      if (action.addValues) out.addValues = [...action.addValues];
      if (action.deleteValues) out.deleteValues = [...action.deleteValues];
      if (action.capacity !== undefined && action.capacity !== null) out.capacity = String(action.capacity);
      lists[key] = out;
    }
    request.lists = lists;
  }
  return request;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** An int64 of the answer (a string, or a number from an older peer), exact. */
function integer(value: unknown): Int64 {
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return toInt64(BigInt(value));
  return 0;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isJsonObject(value)) for (const [key, v] of Object.entries(value)) if (typeof v === 'string') out[key] = v;
  return out;
}

/** A remote AllocationResponse as an Allocated status, with `source` = the endpoint that answered. */
export function fromAllocationResponse(response: unknown, source: string): GameServerAllocationStatus {
  if (!isJsonObject(response) || typeof response.gameServerName !== 'string' || response.gameServerName === '') {
    throw new Error(`the answer is not an AllocationResponse: ${stringifyJsonExact(response).slice(0, 200)}`);
  }
  const status: GameServerAllocationStatus = {
    state: 'Allocated',
    gameServerName: response.gameServerName,
    ports: (Array.isArray(response.ports) ? response.ports : []).filter(isJsonObject).map((p) => ({ name: text(p.name), port: Number(integer(p.port)) })),
    address: text(response.address),
    addresses: (Array.isArray(response.addresses) ? response.addresses : [])
      .filter(isJsonObject)
      .map((a) => ({ type: text(a.type), address: text(a.address) })),
    nodeName: text(response.nodeName),
    source,
  };
  if (isJsonObject(response.metadata)) {
    status.metadata = { labels: stringMap(response.metadata.labels), annotations: stringMap(response.metadata.annotations) };
  }
  if (isJsonObject(response.counters) && Object.keys(response.counters).length > 0) {
    status.counters = {};
    for (const [key, c] of Object.entries(response.counters)) {
      if (isJsonObject(c)) status.counters[key] = { count: integer(c.count), capacity: integer(c.capacity) };
    }
  }
  if (isJsonObject(response.lists) && Object.keys(response.lists).length > 0) {
    status.lists = {};
    for (const [key, l] of Object.entries(response.lists)) {
      if (isJsonObject(l)) {
        status.lists[key] = { capacity: Number(integer(l.capacity)), values: (Array.isArray(l.values) ? l.values : []).filter((v): v is string => typeof v === 'string') };
      }
    }
  }
  return status;
}

// ---------------------------------------------------------------------------------------------
// HTTPS transport
// ---------------------------------------------------------------------------------------------

/** An error a transport raises, with the cause already in words. */
class CallError extends Error {}

/** A transport error in words: what failed, then Node's code and message. */
export function describeCallError(error: Error & { code?: string }, context: { handshakeDone: boolean; tls: ClientTls }): string {
  const code = error.code ?? '';
  const detail = code ? `${code}: ${error.message}` : error.message;
  if (isCertificateError(code)) {
    const trust = context.tls.ca ? "the policy's serverCa" : 'the system roots';
    return `the server certificate does not verify against ${trust} (${detail})`;
  }
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return `the server requires a client certificate (${detail})`;
  if (/^ERR_SSL_(TLSV1|SSLV3|TLSV13)_ALERT_/.test(code)) return `the server refused the TLS handshake (${detail})`;
  if (code === 'ECONNREFUSED') return `connection refused (${detail})`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot resolve the host (${detail})`;
  if ((code === 'ECONNRESET' || code === 'EPIPE') && context.handshakeDone && context.tls.cert) {
    return `the server closed the connection right after the TLS handshake, which is how it refuses a client certificate it cannot verify (${detail})`;
  }
  return `connection failed (${detail})`;
}

/** POSTs over HTTPS with Node's client; one keep-alive agent per set of TLS material. */
export class HttpsTransport implements RemoteTransport {
  private readonly agents = new Map<string, Agent>();

  private agent(tls: ClientTls): Agent {
    const key = createHash('sha256')
      .update(tls.cert ?? '')
      .update('\0')
      .update(tls.key ?? '')
      .update('\0')
      .update(tls.ca ?? '')
      .digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      if (this.agents.size >= 16) {
        const [oldest, old] = this.agents.entries().next().value as [string, Agent];
        old.destroy();
        this.agents.delete(oldest);
      }
      agent = new Agent({ keepAlive: true, cert: tls.cert, key: tls.key, ca: tls.ca, maxSockets: 64 });
      this.agents.set(key, agent);
    }
    return agent;
  }

  post(call: RemoteCall): Promise<RemoteReply> {
    const separator = call.endpoint.lastIndexOf(':');
    const rawHost = call.endpoint.slice(0, separator);
    const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
    const port = Number(call.endpoint.slice(separator + 1));
    return new Promise<RemoteReply>((resolve, reject) => {
      let handshakeDone = false;
      let settled = false;
      const fail = (error: Error & { code?: string }) => {
        if (settled) return;
        settled = true;
        call.signal.removeEventListener('abort', onAbort);
        reject(error instanceof CallError ? error : new CallError(describeCallError(error, { handshakeDone, tls: call.tls })));
      };
      const req = httpsRequest(
        {
          host,
          port,
          method: 'POST',
          path: '/gameserverallocation',
          agent: this.agent(call.tls),
          headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(call.body) },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              req.destroy(new CallError(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', fail);
          res.on('end', () => {
            if (settled) return;
            settled = true;
            call.signal.removeEventListener('abort', onAbort);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      const onAbort = () => {
        const reason: unknown = call.signal.reason;
        req.destroy(reason instanceof Error ? new CallError(reason.message) : new CallError('the call was cancelled'));
      };
      if (call.signal.aborted) onAbort();
      else call.signal.addEventListener('abort', onAbort, { once: true });
      req.on('socket', (socket) => {
        socket.once('secureConnect', () => {
          handshakeDone = true;
        });
      });
      req.setTimeout(call.socketTimeoutMs, () => req.destroy(new CallError(`no answer within ${call.socketTimeoutMs} ms`)));
      req.on('error', fail);
      req.end(call.body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
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
    const totalExpired = new Promise<never>((_, reject) => {
      totalTimer = this.clock.setTimeout(() => {
        total.abort(new Error('remote allocation total timeout exceeded'));
        reject(new TotalTimeout('remote allocation total timeout exceeded'));
      }, this.totalTimeoutMs);
    });
    totalExpired.catch(() => undefined);

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
          await Promise.race([this.sleep(delay), totalExpired]);
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
      this.clock.clearTimeout(totalTimer);
      if (!total.signal.aborted) total.abort(new Error('the remote allocation is over'));
    }
    const failure = last as Extract<CallOutcome, { kind: 'error' }>;
    throw new RemoteAllocationError(
      `remote allocation failed after ${attempts} attempts: ${failure.message}`,
      failure.endpoint,
    );
  }

  close(): void {
    this.transport.close?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
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
