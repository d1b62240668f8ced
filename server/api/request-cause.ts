import type { IncomingMessage } from 'node:http';
import { type RequestCause, requestCause } from '../log/cause.js';

/** What an HTTP request is recorded as when it changes something: method, path, client, request id. */
export function httpRequestCause(req: IncomingMessage): RequestCause {
  const id = req.headers['x-request-id'];
  return requestCause({
    method: req.method ?? 'GET',
    // Express rewrites `url` inside a mounted router; `originalUrl` is what the client sent.
    path: (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/',
    client: `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`,
    requestId: Array.isArray(id) ? id[0] : id,
  });
}
