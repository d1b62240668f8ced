import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isJsonObject } from '../kinds/common.js';
import type { CreatedContainer } from '../kinds/pod/created-pod.js';
import { goFlags } from './go-flags.js';

/**
 * Agones's example `autoscaler-webhook` (examples/autoscaler-webhook), simulated: an HTTP server
 * answering a FleetAutoscaleReview on `/scale` with the replicas the example computes from the
 * fleet's allocated share, and `Healthy` on `/health`. Its settings come from the container's
 * environment and `-port` flag as the example reads them. Where a certificate is mounted at
 * /home/service/certs/tls.crt (its key beside it, tls.key) it serves HTTPS with them, as the
 * example does; plain HTTP otherwise.
 */

const IMAGE = /(^|\/)autoscaler-webhook(:[^/]*)?(@.*)?$/;

/** Whether a container runs the example's image (by the image's last path segment). */
export function isAutoscalerWebhook(container: CreatedContainer): boolean {
  return IMAGE.test(container.image ?? '');
}

export interface AutoscalerWebhookSettings {
  /** The port it listens on inside its pod (`-port`, or `PORT`). */
  port: number;
  replicaUpperThreshold: number;
  replicaLowerThreshold: number;
  scaleFactor: number;
  minReplicasCount: number;
  /** FIXED_REPLICAS: the fleet's `fixedReplicas` annotation is the answer. */
  fixedReplicas: boolean;
}

/** Go's strconv.ParseFloat on the inputs it accepts (no spaces, `inf` and `nan` in any case). */
function parseGoFloat(text: string): number | undefined {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return NaN;
  return /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : undefined;
}

/** Go's strconv.ParseInt(text, 10, 32) (and Atoi within 32 bits). */
function parseGoInt32(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= -2147483648 && value <= 2147483647 ? value : undefined;
}

/**
 * The example's settings from its container, or why it exits at start (a variable it cannot
 * parse is fatal to it).
 */
export function autoscalerWebhookSettings(container: CreatedContainer): AutoscalerWebhookSettings | { error: string } {
  const env = new Map((container.env ?? []).map((e) => [String(e.name), String(e.value ?? '')]));
  const settings: AutoscalerWebhookSettings = {
    port: 8000,
    replicaUpperThreshold: 0.7,
    replicaLowerThreshold: 0.3,
    scaleFactor: 2,
    minReplicasCount: 2,
    fixedReplicas: false,
  };
  const float = (name: string): number | undefined | { error: string } => {
    const text = env.get(name);
    if (!text) return undefined;
    return parseGoFloat(text) ?? { error: `Could not parse environment ${name} variable` };
  };
  const factor = float('SCALE_FACTOR');
  if (isJsonObject(factor)) return factor;
  if (factor !== undefined && factor > 1) settings.scaleFactor = factor;
  const up = float('REPLICA_UPSCALE_TRIGGER');
  if (isJsonObject(up)) return up;
  if (up !== undefined && up > 0.1) settings.replicaUpperThreshold = up;
  const down = float('REPLICA_DOWNSCALE_TRIGGER');
  if (isJsonObject(down)) return down;
  if (down !== undefined && down < settings.replicaUpperThreshold / settings.scaleFactor) settings.replicaLowerThreshold = down;
  const min = env.get('MIN_REPLICAS_COUNT');
  if (min) {
    const value = parseGoInt32(min);
    if (value === undefined) return { error: 'Could not parse environment MIN_REPLICAS_COUNT variable' };
    if (value >= 0) settings.minReplicasCount = value;
  }
  settings.fixedReplicas = env.get('FIXED_REPLICAS') === 'true';
  // So that a fleet just scaled up does not scale down at once, and back.
  if (settings.replicaLowerThreshold >= settings.replicaUpperThreshold / settings.scaleFactor) {
    settings.replicaLowerThreshold = settings.replicaUpperThreshold / (settings.scaleFactor + 1);
  }
  const port = env.get('PORT') || goFlags(container.args ?? [], []).get('port') || '8000';
  const portNumber = parseGoInt32(port);
  if (portNumber === undefined || portNumber < 0 || portNumber > 65535) return { error: `HTTP server failed to run: listen tcp: address ${port}: invalid port` };
  settings.port = portNumber;
  return settings;
}

interface ReviewRequest {
  uid?: unknown;
  annotations?: Record<string, unknown>;
  status?: { replicas?: unknown; allocatedReplicas?: unknown };
}

/** An HTTP answer: status, content type and body. */
export interface WebhookAnswer {
  status: number;
  contentType: string;
  body: string;
}

const plainError = (status: number, text: string): WebhookAnswer => ({ status, contentType: 'text/plain; charset=utf-8', body: `${text}\n` });

/** Where the example looks for its certificate and key. */
export const CERTS_DIR = '/home/service/certs';

/** The certificate and key the example serves HTTPS with (PEM). */
export interface WebhookCertificate {
  cert: Buffer;
  key: Buffer;
}

/**
 * What the example finds in its certs folder (`read` gives a file's bytes, if it exists): no
 * certificate means plain HTTP; a certificate without its key stops it at start.
 */
export function webhookCertificate(read: (path: string) => Buffer | undefined): WebhookCertificate | undefined | { error: string } {
  const cert = read(`${CERTS_DIR}/tls.crt`);
  if (!cert) return undefined;
  const key = read(`${CERTS_DIR}/tls.key`);
  if (!key) return { error: `open ${CERTS_DIR}/tls.key: no such file or directory` };
  return { cert, key };
}

/** The example's answer to a FleetAutoscaleReview body. */
export function answerReview(body: string, settings: AutoscalerWebhookSettings): WebhookAnswer {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (error) {
    return plainError(500, (error as Error).message);
  }
  const request = isJsonObject(review) && isJsonObject(review.request) ? (review.request as ReviewRequest) : undefined;
  if (!request) return plainError(500, 'the review holds no request');
  const replicas = Number(request.status?.replicas ?? 0);
  const allocated = Number(request.status?.allocatedReplicas ?? 0);
  const response = { uid: request.uid ?? '', scale: false, replicas };
  if (settings.fixedReplicas) {
    const fixed = request.annotations?.fixedReplicas;
    if (typeof fixed === 'string') {
      const value = parseGoInt32(fixed);
      if (value === undefined) return plainError(400, 'Invalid fixedReplicas value. Must be an integer.');
      if (value < 0) return plainError(400, 'Invalid fixedReplicas value. Must be >= 0.');
      response.scale = true;
      response.replicas = value;
    }
  } else if (replicas !== 0) {
    const share = allocated / replicas;
    if (share > settings.replicaUpperThreshold) {
      response.scale = true;
      response.replicas = Math.ceil(replicas * settings.scaleFactor);
    } else if (share < settings.replicaLowerThreshold && replicas > settings.minReplicasCount) {
      response.scale = true;
      response.replicas = Math.ceil(replicas / settings.scaleFactor);
    }
  }
  return { status: 200, contentType: 'application/json', body: JSON.stringify({ request, response }) };
}

/** The example's process: its HTTP server, on an address fleetsim gives it. */
export class AutoscalerWebhookServer {
  private constructor(private readonly server: Server) {}

  /**
   * Listens on `host` (a port of the host's choosing: the pod's own port is `settings.port`), over
   * TLS with `certificate` when given; rejects when it cannot (a certificate or key that is not PEM).
   */
  static start(host: string, settings: AutoscalerWebhookSettings, certificate?: WebhookCertificate): Promise<AutoscalerWebhookServer> {
    const handler = (req: IncomingMessage, res: ServerResponse) => handle(req, res, settings);
    let server: Server;
    try {
      server = certificate ? createHttpsServer({ cert: certificate.cert, key: certificate.key }, handler) : createServer(handler);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve(new AutoscalerWebhookServer(server)));
    });
  }

  get address(): { host: string; port: number } {
    const address = this.server.address() as AddressInfo;
    return { host: address.address, port: address.port };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function send(res: ServerResponse, answer: WebhookAnswer): void {
  res.writeHead(answer.status, { 'Content-Type': answer.contentType, ...(answer.status >= 400 && { 'X-Content-Type-Options': 'nosniff' }) });
  res.end(answer.body);
}

function handle(req: IncomingMessage, res: ServerResponse, settings: AutoscalerWebhookSettings): void {
  const path = new URL(req.url ?? '/', 'http://pod').pathname;
  if (path === '/health') return send(res, { status: 200, contentType: 'application/json', body: 'Healthy' });
  if (path !== '/scale') return send(res, plainError(404, '404 page not found'));
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => send(res, answerReview(Buffer.concat(chunks).toString('utf8'), settings)));
}
