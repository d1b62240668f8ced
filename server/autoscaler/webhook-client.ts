import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import type { WebhookConfiguration } from '../kinds/fleetautoscaler/fleetautoscaler.js';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Clock } from '../clock.js';
import { caBundleHasCertificate } from '../kinds/fleetautoscaler/webhook-url.js';
import { isCertificateError } from '../k8s/certificate-errors.js';
import { isJsonObject } from '../kinds/common.js';
import { stringifyJsonExact } from '../log/json.js';

/**
 * The Webhook policy's HTTP exchange (reference §7.7; spec "Webhook exchange shapes"): POSTs a
 * FleetAutoscaleReview holding the request to the webhook and reads the response back. The URL
 * comes from `url` or from an in-cluster `service` reference; `caBundle`, when given, is the only
 * CA trusted for the server; the call has a time limit measured on the cluster's clock.
 */

/** Agones's webhook HTTP client timeout. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;
/** Port of a service reference that names none (Agones's default). */
export const DEFAULT_SERVICE_PORT = 8000;
/** Largest response body read; a webhook answer is a few hundred bytes. */
const MAX_RESPONSE_BYTES = 1 << 20;
const INT32_MAX = 2147483647;

export interface ServiceAddress {
  host: string;
  port: number;
}

/**
 * Where a service reference is reached, asked at each call (the pods behind a Service change).
 * fleetsim has no cluster DNS, so the caller says; the default tries the cluster name
 * `<name>.<namespace>.svc`, which only resolves where such a DNS exists. `fleetsim serve` routes
 * through the Service to its pods (server/controllers/service-routing.ts); it throws when
 * nothing can be reached.
 */
export type ServiceResolver = (service: { namespace: string; name: string; port: number }) => ServiceAddress;

export const clusterDnsResolver: ServiceResolver = ({ namespace, name, port }) => ({ host: `${name}.${namespace}.svc`, port });

/** Service `N` in namespace `S` on port `P` is whatever listens on 127.0.0.1:P. */
export const loopbackServiceResolver: ServiceResolver = ({ port }) => ({ host: '127.0.0.1', port });

/** A Fleet's status as the review carries it (players, counters and lists only when present). */
export interface ReviewFleetStatus {
  replicas: number;
  readyReplicas: number;
  reservedReplicas: number;
  allocatedReplicas: number;
  players?: unknown;
  counters?: unknown;
  lists?: unknown;
}

export interface FleetAutoscaleRequest {
  uid: string;
  name: string;
  namespace: string;
  status: ReviewFleetStatus;
  /** The fleet's labels and annotations (Agones's FleetAutoscaleRequestMetaData gate). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface FleetAutoscaleResponse {
  uid: string;
  scale: boolean;
  replicas: number;
}

/** The call failed; the message says why, naming the URL. */
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
}

/** Where a request goes, and what it is called in messages. */
export interface WebhookTarget {
  /** The URL as Agones would build it (what messages name). */
  url: string;
  tls: boolean;
  /** Connection address (differs from the URL's host for a resolved service). */
  host: string;
  port: number;
  path: string;
  /** Host header. */
  hostHeader: string;
  /** The name the server certificate must carry. */
  serverName: string;
  /** The service reference, for a service's target: resolved again at each call. */
  service?: { namespace: string; name: string; port: number };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Agones's buildURLFromConfiguration, with the spec's rule that a `url` is https: a `url` is
 * used as given; a service becomes `<scheme>://<name>.<namespace>.svc:<port><path>`, https when
 * a `caBundle` is given and http otherwise, namespace `default` and port 8000 unless set.
 */
export function webhookTarget(config: WebhookConfiguration, resolve: ServiceResolver = clusterDnsResolver): WebhookTarget {
  const hasUrl = config.url !== undefined && config.url !== '';
  if (hasUrl && config.service) throw new WebhookError('service and URL cannot be used simultaneously');
  if (config.service) {
    const service = config.service;
    if (!service.name) throw new WebhookError('service name was not provided');
    const namespace = service.namespace || 'default';
    const port = service.port ?? DEFAULT_SERVICE_PORT;
    const rawPath = service.path ?? '';
    // Go's url.URL.String() puts a slash between host and a relative path.
    const path = rawPath === '' || rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
    const tls = Boolean(config.caBundle);
    const dnsName = `${service.name}.${namespace}.svc`;
    const address = resolve({ namespace, name: service.name, port });
    return {
      url: `${tls ? 'https' : 'http'}://${dnsName}:${port}${path}`,
      tls,
      host: address.host,
      port: address.port,
      path: path === '' ? '/' : path,
      hostHeader: `${dnsName}:${port}`,
      serverName: dnsName,
      service: { namespace, name: service.name, port },
    };
  }
  if (!hasUrl) throw new WebhookError('URL was not provided');
  let url: URL;
  try {
    url = new URL(config.url!);
  } catch {
    throw new WebhookError(`url is not valid: ${config.url}`);
  }
  if (url.protocol !== 'https:') throw new WebhookError(`'https' is the only allowed URL scheme: ${config.url}`);
  const host = stripBrackets(url.hostname);
  return {
    url: config.url!,
    tls: true,
    host,
    port: url.port === '' ? 443 : Number(url.port),
    path: `${url.pathname || '/'}${url.search}`,
    hostHeader: url.host,
    serverName: host,
  };
}

/** The PEM text of a `caBundle`, or an error when it holds no certificate (Agones's wording). */
export function caBundlePem(caBundle: string): string {
  if (!caBundleHasCertificate(caBundle)) throw new WebhookError('no certs were appended from caBundle');
  return Buffer.from(caBundle.replace(/\s+/g, ''), 'base64').toString('utf8');
}

/** Only what a Fleet status says, in the review's field names, empty maps left out. */
export function reviewStatus(status: unknown): ReviewFleetStatus {
  const s = isJsonObject(status) ? status : {};
  const int = (v: unknown) => (typeof v === 'number' ? v : 0);
  const nonEmpty = (v: unknown) => isJsonObject(v) && Object.keys(v).length > 0;
  return {
    replicas: int(s.replicas),
    readyReplicas: int(s.readyReplicas),
    reservedReplicas: int(s.reservedReplicas),
    allocatedReplicas: int(s.allocatedReplicas),
    ...(isJsonObject(s.players) && { players: s.players }),
    ...(nonEmpty(s.counters) && { counters: s.counters }),
    ...(nonEmpty(s.lists) && { lists: s.lists }),
  };
}

/** A transport error in words a user can act on. */
function describeFailure(error: unknown, target: WebhookTarget): WebhookError {
  if (error instanceof WebhookError) return error;
  const code = isJsonObject(error) && typeof error.code === 'string' ? error.code : '';
  const message = error instanceof Error ? error.message : String(error);
  if (isCertificateError(code)) {
    return new WebhookError(`the certificate of the webhook ${target.url} is not trusted (${code}): ${message}`);
  }
  if (code === 'ECONNREFUSED') return new WebhookError(`could not connect to the webhook ${target.url}: connection refused by ${target.host}:${target.port}`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new WebhookError(`could not resolve the webhook host ${target.host} (${target.url})`);
  }
  if (code === 'ECONNRESET' || code === 'EPROTO') return new WebhookError(`the connection to the webhook ${target.url} failed (${code}): ${message}`);
  return new WebhookError(`the webhook call to ${target.url} failed: ${message}`);
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Checks the answer's shape and that it answers this request. */
export function parseReviewResponse(body: string, uid: string, url: string): FleetAutoscaleResponse {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WebhookError(`the webhook ${url} answered with invalid JSON: ${reason}`);
  }
  const response = isJsonObject(document) ? document.response : undefined;
  if (!isJsonObject(response)) throw new WebhookError(`the webhook ${url} answered without a "response" object`);
  if (response.uid !== uid) {
    throw new WebhookError(`the webhook ${url} answered uid ${JSON.stringify(response.uid ?? null)}, not the request's uid "${uid}"`);
  }
  const scale = response.scale ?? false;
  if (typeof scale !== 'boolean') throw new WebhookError(`the webhook ${url} answered a "scale" that is not a boolean: ${JSON.stringify(scale)}`);
  if (!scale) return { uid, scale: false, replicas: typeof response.replicas === 'number' ? response.replicas : 0 };
  const replicas = response.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > INT32_MAX) {
    throw new WebhookError(`the webhook ${url} answered "scale": true with "replicas" ${JSON.stringify(replicas ?? null)}; expected an integer from 0 to ${INT32_MAX}`);
  }
  return { uid, scale: true, replicas };
}

export interface WebhookClientOptions {
  /** The time limit runs on this clock (the cluster's). */
  clock: Clock;
  /** Time limit of one call; default 15 s, as Agones. */
  timeoutMs?: number;
  resolveService?: ServiceResolver;
}

/**
 * One autoscaler's webhook client (Agones makes one per autoscaler and generation): the target
 * and trusted CA are worked out once; a bad configuration fails every call with its reason.
 */
export class WebhookClient {
  private readonly target: WebhookTarget | undefined;
  private readonly ca: string | undefined;
  private readonly setupError: WebhookError | undefined;
  private readonly timeoutMs: number;

  constructor(
    config: WebhookConfiguration,
    private readonly options: WebhookClientOptions,
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
    let target: WebhookTarget | undefined;
    let ca: string | undefined;
    let setupError: WebhookError | undefined;
    try {
      // The URL and the checks only: a service's address is resolved at each call.
      target = webhookTarget(config);
      if (config.caBundle) ca = caBundlePem(config.caBundle);
    } catch (error) {
      setupError = describeFailure(error, { url: config.url ?? '', tls: true, host: '', port: 0, path: '', hostHeader: '', serverName: '' });
    }
    this.target = target;
    this.ca = ca;
    this.setupError = setupError;
  }

  /** The URL calls go to, as Agones would name it (undefined when the configuration is bad). */
  get url(): string | undefined {
    return this.target?.url;
  }

  /** POSTs the review and returns the checked response; rejects with a WebhookError. */
  review(request: FleetAutoscaleRequest, signal?: AbortSignal): Promise<FleetAutoscaleResponse> {
    if (this.setupError || !this.target) return Promise.reject(this.setupError ?? new WebhookError('URL was not provided'));
    let target = this.target;
    if (target.service && this.options.resolveService) {
      try {
        target = { ...target, ...this.options.resolveService(target.service) };
      } catch (error) {
        return Promise.reject(describeFailure(error, target));
      }
    }
    const payload = stringifyJsonExact({ request });
    const clock = this.options.clock;
    return new Promise<FleetAutoscaleResponse>((resolve, reject) => {
      let settled = false;
      // Filled once the request exists; a cancellation can come before that.
      const active: { req?: ClientRequest } = {};
      const finish = (error: unknown, value?: FleetAutoscaleResponse) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error !== undefined) {
          active.req?.destroy();
          reject(describeFailure(error, target));
        } else resolve(value!);
      };
      const timer = clock.setTimeout(
        () => finish(new WebhookError(`the webhook ${target.url} did not answer within ${seconds(this.timeoutMs)}`)),
        this.timeoutMs,
      );
      const onAbort = () => finish(new WebhookError(`the call to the webhook ${target.url} was cancelled`));
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort);

      const options = {
        host: target.host,
        port: target.port,
        path: target.path,
        method: 'POST',
        agent: false as const,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          Host: target.hostHeader,
        },
      };
      const onResponse = (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            finish(new WebhookError(`the webhook ${target.url} answered more than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (error) => finish(error));
        res.on('end', () => {
          if (status < 200 || status > 299) {
            finish(new WebhookError(`bad status code ${status} from the server: ${target.url}`));
            return;
          }
          try {
            finish(undefined, parseReviewResponse(Buffer.concat(chunks).toString('utf8'), request.uid, target.url));
          } catch (error) {
            finish(error);
          }
        });
      };
      const req = target.tls
        ? httpsRequest(
            {
              ...options,
              ...(this.ca !== undefined && { ca: this.ca }),
              // SNI takes host names only; the identity check falls back to the connect host.
              ...(isIP(target.serverName) === 0 && { servername: target.serverName }),
            },
            onResponse,
          )
        : httpRequest(options, onResponse);
      active.req = req;
      req.on('error', (error) => finish(error));
      req.end(payload);
    });
  }
}
