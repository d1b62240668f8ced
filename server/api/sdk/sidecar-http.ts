import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Sidecar } from '../../sidecar/sidecar.js';
import type { StreamRegistry } from '../../sidecar/stream-registry.js';
import { GrpcCode, GrpcError } from '../../grpc-status.js';
import { type ResponseSink, type SidecarRequest, dispatchSidecar } from './sidecar-routes.js';
import { stringifyJsonExact } from '../../log/json.js';
import type { RequestCause } from '../../log/cause.js';
import { httpRequestCause } from '../request-cause.js';
import { readBody, sendJsonText } from '../request-body.js';

/** Bodies over this are refused (Agones has no limit; an unbounded body is a way to exhaust memory). */
export const SIDECAR_BODY_LIMIT = 1024 * 1024;

/** Where a request lands: the sidecar it is for and the path within that sidecar. */
export interface SidecarTarget {
  /** The sidecar answering one request; `cause` makes that request's cause, called only when it changes something. */
  sidecar: (cause: () => RequestCause) => Sidecar;
  path: string;
}
export type SidecarResolver = (path: string) => SidecarTarget | undefined;

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

/** The path and query of a request target, read without URL parsing (which throws on targets such as `//[`). */
export function splitTarget(target: string | undefined): { path: string; query: URLSearchParams } {
  const text = target ?? '/';
  if (!text.startsWith('/')) {
    // The absolute form (`GET http://host/ready`) names the path inside a URL.
    try {
      const url = new URL(text);
      return { path: url.pathname, query: url.searchParams };
    } catch {
      // Not a URL either: routed as given, to a 404.
    }
  }
  const mark = text.indexOf('?');
  if (mark < 0) return { path: text, query: new URLSearchParams() };
  return { path: text.slice(0, mark), query: new URLSearchParams(text.slice(mark + 1)) };
}

/** A percent-encoded path segment, decoded; a bad escape is the client's error (400), named. */
export function decodePathSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new GrpcError(GrpcCode.INVALID_ARGUMENT, `invalid URL escape in the ${what} "${segment}"`);
  }
}

/** Agones's gateway error body for a failure outside any route (a bad path, a bad upgrade). */
function errorBody(error: unknown): GrpcError {
  if (error instanceof GrpcError) return error;
  return new GrpcError(GrpcCode.INVALID_ARGUMENT, error instanceof Error ? error.message : String(error));
}

/**
 * The text of each document object, made once: the routes answer with shared objects (one SDK
 * view per GameServer version, one watch message per change for all its watchers), never
 * changed once answered.
 */
const texts = new WeakMap<object, string>();
function jsonText(document: unknown): string {
  if (typeof document !== 'object' || document === null) return stringifyJsonExact(document);
  let text = texts.get(document);
  if (text === undefined) {
    text = stringifyJsonExact(document);
    texts.set(document, text);
  }
  return text;
}

/**
 * A document's text as UTF-8 bytes, with `suffix`, made once per cache: a change goes out to every
 * watcher of its GameServer, and encoding it for each (and measuring it, for a WebSocket frame)
 * was per-watcher work.
 */
const frames = new WeakMap<object, Buffer>();
const lines = new WeakMap<object, Buffer>();
function jsonBytes(document: unknown, cache: WeakMap<object, Buffer>, suffix = ''): Buffer {
  if (typeof document !== 'object' || document === null) return Buffer.from(jsonText(document) + suffix);
  let bytes = cache.get(document);
  if (bytes === undefined) {
    bytes = Buffer.from(jsonText(document) + suffix);
    cache.set(document, bytes);
  }
  return bytes;
}

function writeJson(res: ServerResponse, status: number, body: unknown, close = false): void {
  if (body === null) {
    res.writeHead(status);
    res.end();
    return;
  }
  sendJsonText(res, status, jsonText(body), close);
}

function refuseTooLarge(res: ServerResponse): void {
  const tooLarge = new GrpcError(GrpcCode.RESOURCE_EXHAUSTED, `request body too large: the limit is ${SIDECAR_BODY_LIMIT} bytes`);
  writeJson(res, 413, tooLarge.toJSON(), true);
}

/**
 * Serves the sidecar routes for whatever `resolve` maps a path to, on plain node:http (or as
 * Express middleware: `next` is called for a path no sidecar serves). No framework sits in
 * between: a sidecar request costs little more than Node answering HTTP.
 */
export function sidecarHttpHandler(resolve: SidecarResolver, streams: StreamRegistry) {
  return (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: () => void): void => {
    const { path, query } = splitTarget(req.originalUrl ?? req.url);
    let target: SidecarTarget | undefined;
    try {
      target = resolve(path);
    } catch (error) {
      const refused = errorBody(error);
      return writeJson(res, refused.httpStatus, refused.toJSON());
    }
    if (!target) return next();
    const { sidecar } = target;
    const sidecarPath = target.path;
    const serve = (body: string | undefined) => {
      const request: SidecarRequest = { method: req.method ?? 'GET', path: sidecarPath, query, body };
      const sink: ResponseSink = {
        reply: (status, document) => writeJson(res, status, document),
        startStream: () => {
          res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
          res.flushHeaders();
          const unregister = streams.add(() => res.end());
          // A client that goes away must not leave its stream registered.
          res.once('close', unregister);
          return {
            write: (document) => res.write(jsonBytes(document, lines, '\n')),
            end: () => {
              unregister();
              res.end();
            },
          };
        },
        // A client gone before the route subscribed still releases what the route holds.
        onClose: (listener) => (res.destroyed ? listener() : res.once('close', listener)),
      };
      void dispatchSidecar(() => sidecar(() => httpRequestCause(req)), request, sink);
    };
    if (!hasBody(req)) return serve(undefined);
    // A client gone before the end of its body has nobody to answer.
    readBody(req, SIDECAR_BODY_LIMIT).then((body) => (body ? serve(body.toString('utf8')) : refuseTooLarge(res)), () => undefined);
  };
}

/**
 * WebSocket on any sidecar path, as Agones's wsproxy does: the upgrade is replayed as an HTTP
 * request (method from `?method=`), each line of the answer becomes one text frame; a unary
 * answer is one frame, then the connection closes.
 */
export function attachSidecarWebSocket(
  server: Server,
  resolve: SidecarResolver,
  streams: StreamRegistry,
  unmatched: UnmatchedUpgrade = () => ({ status: NOT_FOUND.httpStatus, body: NOT_FOUND.toJSON() }),
): SidecarWebSockets {
  // ws (with the TLS, HTTPS and zlib modules it loads) is loaded at the first upgrade: a sidecar
  // whose game server never opens a WebSocket does not hold it.
  let wss: WebSocketServer | undefined;
  const webSockets = (): WebSocketServer => {
    if (wss) return wss;
    const { WebSocketServer: Server } = requireCjs('ws') as typeof import('ws');
    wss = new Server({ noServer: true });
    // A handshake ws refuses (bad headers) is answered in the gateway's format, not ws's HTML.
    wss.on('wsClientError', (error: Error & { code?: string }, socket: Duplex) => {
      refuseUpgrade(socket, 400, new GrpcError(GrpcCode.INVALID_ARGUMENT, error.message).toJSON());
    });
    return wss;
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node leaves an upgraded socket without an error listener: a reset would crash the process.
    socket.on('error', () => socket.destroy());
    try {
      upgrade(webSockets, req, socket, head, resolve, streams, unmatched);
    } catch (error) {
      // Whatever a request does, the process answers it and goes on.
      const refused = errorBody(error);
      refuseUpgrade(socket, refused.httpStatus, refused.toJSON());
    }
  });
  return { terminateAll: () => wss?.clients.forEach((client) => client.terminate()) };
}

/** The WebSockets a server's sidecar paths accepted. */
export interface SidecarWebSockets {
  /** Ends every open one at once (the server is closing). */
  terminateAll(): void;
}

const requireCjs = createRequire(import.meta.url);

/** What an upgrade to a path no sidecar serves is answered (serve: the resource API's 404). */
export type UnmatchedUpgrade = (path: string) => { status: number; body: unknown };

const NOT_FOUND = new GrpcError(GrpcCode.NOT_FOUND, 'Not Found');

/** Answers an upgrade request with a plain HTTP error and closes the connection. */
function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    () => socket.destroy(),
  );
}

function upgrade(
  webSockets: () => WebSocketServer,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  resolve: SidecarResolver,
  streams: StreamRegistry,
  unmatched: UnmatchedUpgrade,
): void {
  const { path, query } = splitTarget(req.url);
  const target = resolve(path);
  if (!target) {
    const answer = unmatched(path);
    refuseUpgrade(socket, answer.status, answer.body);
    return;
  }
  webSockets().handleUpgrade(req, socket, head, (ws) => {
    const method = (query.get('method') ?? req.method ?? 'GET').toUpperCase();
    // Read from the upgrade request here, once: a watch's closures live as long as its connection,
    // and made in this scope they kept the request (its headers and stream state) alive with it:
    // ~1 KB of each watcher's ~16 KB of heap.
    serveWebSocket(ws, { method, path: target.path, query, body: undefined }, target, httpRequestCause(req), streams);
  });
}

/** One WebSocket's request, answered through the sidecar routes: each document a text frame. */
function serveWebSocket(ws: WebSocket, request: SidecarRequest, target: SidecarTarget, cause: RequestCause, streams: StreamRegistry): void {
  const closeListeners: Array<() => void> = [];
  ws.on('close', () => closeListeners.forEach((l) => l()));
  ws.on('error', () => ws.terminate());
  const sink: ResponseSink = {
    reply: (_status, document) => {
      if (document !== null) ws.send(jsonText(document));
      // Unary routes: one frame, then the connection ends without a close frame.
      ws.terminate();
    },
    startStream: () => {
      const unregister = streams.add(() => ws.close(1000));
      // A client that goes away must not leave its stream registered.
      closeListeners.push(unregister);
      return {
        write: (document) => ws.send(jsonBytes(document, frames), { binary: false }),
        end: () => {
          unregister();
          ws.close(1000);
        },
      };
    },
    onClose: (listener) => (ws.readyState === ws.CLOSED ? listener() : closeListeners.push(listener)),
  };
  void dispatchSidecar(() => target.sidecar(() => cause), request, sink);
}
