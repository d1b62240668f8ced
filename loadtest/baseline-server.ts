import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type Http2Session, type ServerHttp2Stream, createSecureServer } from 'node:http2';
import { resolve as resolvePath } from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type WebSocket, WebSocketServer } from 'ws';
import { respondMessage } from '../server/grpc/allocation-grpc.js';

/**
 * The baseline: a trivial loopback server that answers every route a scenario uses with a canned
 * response of the same size as fleetsim's (the harness records fleetsim's real answers just
 * before its run), so the same k6 script run against both measures what fleetsim adds over
 * "Node answering HTTP" on the same machine with the same client. It keeps no state beyond what
 * the scripts' checks read back: a counter's count, and who watches which GameServer so that an
 * annotation change is echoed to the watchers as a frame of the same size as fleetsim's.
 */

export interface CannedResponse {
  status: number;
  body: string;
}

export interface BaselineConfig {
  /** `"METHOD /path"` -> response, for routes outside the sidecars (allocation, resource API). */
  routes: Record<string, CannedResponse>;
  /**
   * `"METHOD /suffix"` -> response for every sidecar (`/sdk/{ns}/{name}/suffix`); `{x}` in a
   * suffix matches one path segment.
   */
  sidecar: Record<string, CannedResponse>;
  /** The GameServer (sidecar JSON) sent on a watch and, with the changed annotation, on each change. */
  watchGameServer?: SidecarGameServer;
  /** A canned gRPC allocator beside the HTTP server: the scenario calls it as it calls fleetsim's. */
  allocator?: CannedAllocator;
}

/**
 * `allocation.AllocationService/Allocate` answered with one recorded AllocationResponse, over
 * HTTP/2 with the same mutual TLS as fleetsim's allocator port (its certificate, and its client
 * CA): what TLS, HTTP/2, gRPC's framing and Node cost, on the same machine and client.
 */
export interface CannedAllocator {
  /** The AllocationResponse's bytes, base64. */
  response: string;
  /** PEM: the server's certificate and key, and the CA a client's certificate must chain to. */
  cert: string;
  key: string;
  clientCa: string;
}

/** The parts of a sidecar GameServer the baseline rewrites. */
export interface SidecarGameServer {
  object_meta: { name: string; annotations?: Record<string, string>; [field: string]: unknown };
  [field: string]: unknown;
}

/** Annotations set through the SDK are stored with this prefix (Agones's rule; fleetsim follows it). */
const SDK_ANNOTATION_PREFIX = 'agones.dev/sdk-';

interface SidecarRoute {
  method: string;
  pattern: RegExp;
  response: CannedResponse;
  counter: boolean;
}

function compileSidecarRoutes(config: BaselineConfig): SidecarRoute[] {
  return Object.entries(config.sidecar).map(([key, response]) => {
    const space = key.indexOf(' ');
    const method = key.slice(0, space);
    const suffix = key.slice(space + 1);
    const source = suffix.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    return { method, pattern: new RegExp(`^${source}$`), response, counter: /\/counters\/\{[^}]+\}$/.test(suffix) && method === 'PATCH' };
  });
}

const SIDECAR_PATH = /^\/sdk\/([^/]+)\/([^/]+)(\/.*)$/;

export interface BaselineServer {
  port: number;
  close(): Promise<void>;
}

export async function startBaselineServer(config: BaselineConfig, options: { port?: number; host?: string } = {}): Promise<BaselineServer> {
  const sidecarRoutes = compileSidecarRoutes(config);
  const watchers = new Map<string, Set<WebSocket>>();
  const counters = new Map<string, number>();
  const template = config.watchGameServer;

  const frameFor = (name: string, annotation?: { key: string; value: string }): string => {
    if (!template) return '{"result":{}}';
    const annotations = { ...template.object_meta.annotations };
    if (annotation) annotations[annotation.key] = annotation.value;
    return JSON.stringify({ result: { ...template, object_meta: { ...template.object_meta, name, annotations } } });
  };

  const send = (res: ServerResponse, canned: CannedResponse, body: string = canned.body) => {
    res.writeHead(canned.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };

  const notFound = (res: ServerResponse, what: string) => {
    const body = JSON.stringify({ code: 5, message: `baseline: no canned answer for ${what}`, details: [] });
    res.writeHead(404, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const method = req.method ?? 'GET';
    const sidecar = SIDECAR_PATH.exec(url.pathname);
    if (!sidecar) {
      const canned = config.routes[`${method} ${url.pathname}`];
      return canned ? send(res, canned) : notFound(res, `${method} ${url.pathname}`);
    }
    const name = decodeURIComponent(sidecar[2]!);
    const suffix = sidecar[3]!;
    const route = sidecarRoutes.find((r) => r.method === method && r.pattern.test(suffix));
    if (!route) return notFound(res, `${method} /sdk/…${suffix}`);
    if (route.counter) {
      // The script checks the count it gets back, so keep it.
      const key = `${name}${suffix}`;
      let diff = 0;
      try {
        diff = Number((JSON.parse(body) as { countDiff?: unknown }).countDiff ?? 0) || 0;
      } catch {
        diff = 0;
      }
      const count = (counters.get(key) ?? 0) + diff;
      counters.set(key, count);
      return send(res, route.response, route.response.body.replace(/"count":"\d+"/, `"count":"${count}"`));
    }
    if (method === 'PUT' && suffix === '/metadata/annotation') {
      const sockets = watchers.get(name);
      if (sockets && sockets.size > 0) {
        let change: { key?: unknown; value?: unknown } = {};
        try {
          change = JSON.parse(body) as { key?: unknown; value?: unknown };
        } catch {
          change = {};
        }
        const frame = frameFor(name, { key: `${SDK_ANNOTATION_PREFIX}${String(change.key)}`, value: String(change.value) });
        for (const socket of sockets) socket.send(frame);
      }
    }
    send(res, route.response);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 60_000;

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const m = SIDECAR_PATH.exec(url.pathname);
    if (!m || m[3] !== '/watch/gameserver') {
      socket.destroy();
      return;
    }
    const name = decodeURIComponent(m[2]!);
    wss.handleUpgrade(req, socket, head, (ws) => {
      let set = watchers.get(name);
      if (!set) {
        set = new Set();
        watchers.set(name, set);
      }
      set.add(ws);
      ws.on('close', () => {
        set.delete(ws);
        if (set.size === 0) watchers.delete(name);
      });
      ws.on('error', () => ws.terminate());
      // Like a watch on fleetsim: the current state first.
      ws.send(frameFor(name));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Serves `allocator` on loopback; every call gets the recorded answer once its request has arrived. */
export async function startCannedAllocator(allocator: CannedAllocator, host: string): Promise<{ address: string; close(): Promise<void> }> {
  const message = Buffer.from(allocator.response, 'base64');
  const server = createSecureServer({ cert: allocator.cert, key: allocator.key, ca: allocator.clientCa, requestCert: true, rejectUnauthorized: true });
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream: ServerHttp2Stream) => {
    stream.on('error', () => stream.destroy());
    stream.resume();
    stream.once('end', () => respondMessage(stream, message));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    address: `${host}:${port}`,
    close: () => {
      for (const session of sessions) session.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const BASELINE_SERVING_LINE = /^baseline serving on http:\/\/127\.0\.0\.1:(\d+)$/m;

/** `node dist/loadtest/baseline-server.js CONFIG.json [PORT]`: the harness runs it as its own process. */
async function main(argv: string[]): Promise<void> {
  const [configPath, portText] = argv;
  if (!configPath) {
    console.error('usage: baseline-server CONFIG.json [PORT]');
    process.exitCode = 2;
    return;
  }
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as BaselineConfig;
  const server = await startBaselineServer(config, { port: portText ? Number(portText) : 0 });
  // Announced before the serving line, which the harness waits for.
  const allocator = config.allocator ? await startCannedAllocator(config.allocator, '127.0.0.1') : undefined;
  if (allocator) console.log(`baseline allocator serving on ${allocator.address}`);
  console.log(`baseline serving on http://127.0.0.1:${server.port}`);
  const stop = () => void Promise.all([server.close(), allocator?.close()]).then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && resolvePath(process.argv[1]) === fileURLToPath(import.meta.url)) {
  void main(process.argv.slice(2));
}
