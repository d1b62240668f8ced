import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import { WebSocketServer } from 'ws';
import type { Sidecar } from '../sidecar/sidecar.js';
import { GrpcCode, SdkError } from '../sidecar/errors.js';
import { type ResponseSink, type SidecarRequest, dispatchSidecar } from './sidecar-routes.js';
import { stringifyJsonExact } from '../log/json.js';

/** Bodies over this are refused (Agones has no limit; an unbounded body is a way to exhaust memory). */
export const SIDECAR_BODY_LIMIT = 1024 * 1024;

/** Where a request lands: the sidecar it is for and the path within that sidecar. */
export interface SidecarTarget {
  sidecar: () => Sidecar;
  path: string;
}
export type SidecarResolver = (path: string) => SidecarTarget | undefined;

/** Keeps track of open watch streams so that a closing sidecar can end them cleanly. */
export class StreamRegistry {
  private readonly open = new Set<() => void>();

  add(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }

  endAll(): void {
    for (const end of [...this.open]) end();
    this.open.clear();
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

function writeJson(res: Response, status: number, body: unknown): void {
  if (body === null) {
    res.status(status).end();
    return;
  }
  // Exactly Agones's header (express would add a charset).
  res.status(status).setHeader('Content-Type', 'application/json');
  res.end(stringifyJsonExact(body));
}

/** Express middleware serving the sidecar routes for whatever `resolve` maps a path to. */
export function sidecarHttpHandler(resolve: SidecarResolver, streams: StreamRegistry) {
  const raw = express.raw({ type: () => true, limit: SIDECAR_BODY_LIMIT });
  return [
    raw,
    (req: Request, res: Response, next: NextFunction) => {
      const url = new URL(req.originalUrl, 'http://sidecar');
      const target = resolve(url.pathname);
      if (!target) return next();
      const body = hasBody(req) && Buffer.isBuffer(req.body) ? req.body.toString('utf8') : undefined;
      const request: SidecarRequest = { method: req.method, path: target.path, query: url.searchParams, body };
      const sink: ResponseSink = {
        reply: (status, document) => writeJson(res, status, document),
        startStream: () => {
          res.status(200).setHeader('Content-Type', 'application/json');
          res.setHeader('Transfer-Encoding', 'chunked');
          res.flushHeaders();
          const unregister = streams.add(() => res.end());
          return {
            write: (document) => res.write(`${stringifyJsonExact(document)}\n`),
            end: () => {
              unregister();
              res.end();
            },
          };
        },
        onClose: (listener) => res.on('close', listener),
      };
      void dispatchSidecar(target.sidecar, request, sink);
    },
    (error: Error & { type?: string; status?: number }, _req: Request, res: Response, next: NextFunction) => {
      if (error.type === 'entity.too.large') {
        const tooLarge = new SdkError(
          GrpcCode.RESOURCE_EXHAUSTED,
          `request body too large: the limit is ${SIDECAR_BODY_LIMIT} bytes`,
        );
        return writeJson(res, 413, tooLarge.toJSON());
      }
      next(error);
    },
  ];
}

/**
 * WebSocket on any sidecar path, as Agones's wsproxy does: the upgrade is replayed as an HTTP
 * request (method from `?method=`), each line of the answer becomes one text frame; a unary
 * answer is one frame, then the connection closes.
 */
export function attachSidecarWebSocket(server: Server, resolve: SidecarResolver, streams: StreamRegistry): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://sidecar');
    const target = resolve(url.pathname);
    if (!target) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const method = (url.searchParams.get('method') ?? req.method ?? 'GET').toUpperCase();
      const closeListeners: Array<() => void> = [];
      ws.on('close', () => closeListeners.forEach((l) => l()));
      ws.on('error', () => ws.terminate());
      const request: SidecarRequest = { method, path: target.path, query: url.searchParams, body: undefined };
      const sink: ResponseSink = {
        reply: (_status, document) => {
          if (document !== null) ws.send(stringifyJsonExact(document));
          // Unary routes: one frame, then the connection ends without a close frame.
          ws.terminate();
        },
        startStream: () => {
          const unregister = streams.add(() => ws.close(1000));
          return {
            write: (document) => ws.send(stringifyJsonExact(document)),
            end: () => {
              unregister();
              ws.close(1000);
            },
          };
        },
        onClose: (listener) => closeListeners.push(listener),
      };
      void dispatchSidecar(target.sidecar, request, sink);
    });
  });
  return wss;
}
