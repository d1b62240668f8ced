import type { IncomingMessage, RequestListener, Server } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import { apiErrors } from '../k8s/status.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import { sendJsonText } from './request-body.js';

/**
 * The local API has no authentication, so a web page the developer visits must not be able to
 * drive it. Two checks, shared by every listener of `fleetsim serve` and `fleetsim sidecar`:
 *
 *  - Host (DNS rebinding): a page on a name its owner re-points at 127.0.0.1 reaches this server
 *    as its own origin, so the request's Host must be a name this server is known by: an IP
 *    address (a page cannot rebind an address, only a name), `localhost` (and `*.localhost`),
 *    this machine's hostname, the listen address when it is a name, names of its own (the TLS
 *    certificate's), and what `--allowed-hosts` adds (`*` for any, `.example.com` for a domain
 *    and its subdomains).
 *  - Origin (cross-site requests): a browser says where a request comes from. A write (any
 *    method but GET, HEAD, OPTIONS) or a WebSocket upgrade whose Origin is not this server's
 *    own, or that says `Sec-Fetch-Site: cross-site`, is refused. Reads need no check: without
 *    CORS headers the browser does not let the page see the answer.
 *
 * Clients that are not browsers (curl, SDKs, kubectl, k6) send no Origin and are not affected.
 * A refusal is a 403 in the format of the surface the path belongs to.
 */

/** A Kubernetes Status (resource API), or Agones's gateway body `{code, message, details}` (sidecar, allocator). */
export type ErrorFormat = 'status' | 'gateway';

export interface RequestOriginOptions {
  /** The scheme the listener speaks: a browser's Origin for it starts with it. */
  scheme: 'http' | 'https';
  /** The address it listens on (`--host`, `--address`); a name there is accepted as a Host. */
  listenHost?: string;
  /** `--allowed-hosts`, as `parseAllowedHosts` returns it. */
  allowedHosts?: readonly string[];
  /** More names this listener is known by (its TLS certificate's; `*.example.com` covers the domain's names). */
  ownNames?: readonly string[];
  /** Which error format a refused request to `path` gets. */
  errorFormat: (path: string) => ErrorFormat;
}

/** Methods a browser sends cross-origin without them changing anything here. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Host header values seen and accepted, so the usual request costs one lookup. */
const ACCEPTED_CACHE_LIMIT = 256;

/**
 * Reads `--allowed-hosts`: comma-separated host names (no scheme, no port), `.domain` for a
 * domain and its subdomains, `*` for any. Throws with the entry at fault.
 */
export function parseAllowedHosts(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (entry === '*') continue;
    if (!/^\.?[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$/.test(entry) && isIP(entry.replace(/^\[|\]$/g, '')) === 0) {
      throw new Error(`--allowed-hosts: "${entry}" is not a host name; give names without scheme or port, ".example.com" for a domain, or "*" for any`);
    }
  }
  return entries;
}

/** `name[:port]` or `[v6]:port` from a Host header, the name lowercased and unbracketed; undefined when malformed. */
function splitHost(value: string): { name: string; port: string } | undefined {
  let name: string;
  let rest: string;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close < 0) return undefined;
    name = value.slice(1, close);
    rest = value.slice(close + 1);
  } else {
    const colon = value.indexOf(':');
    name = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
  }
  if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
  return { name: name.toLowerCase(), port: rest.slice(1) };
}

/** Whether a host name or address (lower-cased) is this machine's loopback. */
export function isLoopback(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  const v4 = name.startsWith('::ffff:') ? name.slice(7) : name;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

function defaultPort(scheme: string): string {
  return scheme === 'https' ? '443' : '80';
}

function pathOf(url: string | undefined): string {
  const text = url ?? '/';
  const mark = text.indexOf('?');
  return mark < 0 ? text : text.slice(0, mark);
}

export class RequestOriginGuard {
  private readonly names = new Set<string>(['localhost']);
  private readonly domains: string[] = [];
  private readonly anyHost: boolean;
  private readonly accepted = new Set<string>();

  constructor(private readonly options: RequestOriginOptions) {
    const allowed = options.allowedHosts ?? [];
    this.anyHost = allowed.includes('*');
    for (const entry of [...allowed, ...(options.ownNames ?? []), hostname(), options.listenHost ?? '']) {
      const name = entry.toLowerCase().replace(/^\[|\]$/g, '').replace(/^\*\./, '.');
      if (name.startsWith('.')) this.domains.push(name);
      else if (name !== '' && name !== '*') this.names.add(name);
    }
  }

  /** Why `req` is refused, or undefined when it may be served. */
  refusal(req: IncomingMessage, upgrade = false): string | undefined {
    const host = req.headers.host;
    if (host !== undefined && !this.accepted.has(host)) {
      const why = this.hostRefusal(host);
      if (why) return why;
      if (this.accepted.size < ACCEPTED_CACHE_LIMIT) this.accepted.add(host);
    }
    if (!upgrade && SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
    const origin = req.headers.origin;
    if (origin !== undefined && !this.isOwnOrigin(origin, host)) {
      const what = upgrade ? 'a WebSocket' : `a cross-origin ${req.method ?? ''} request`;
      const own = host === undefined ? 'unknown: the request has no Host' : `${this.options.scheme}://${host}`;
      return `fleetsim refuses ${what} from ${origin}: the local API has no authentication, so it does not act on what a web page from another origin sends (this server's origin is ${own})`;
    }
    if (req.headers['sec-fetch-site'] === 'cross-site') {
      return `fleetsim refuses ${upgrade ? 'a WebSocket' : `a ${req.method ?? ''} request`} a browser marks cross-site (Sec-Fetch-Site: cross-site): the local API has no authentication, so it does not act on what a web page from another site sends`;
    }
    return undefined;
  }

  private hostRefusal(host: string): string | undefined {
    const parts = splitHost(host);
    if (parts && this.acceptsName(parts.name)) return undefined;
    const name = parts?.name ?? host;
    return (
      `fleetsim refuses a request for host "${host}": the local API has no authentication, so it answers only requests ` +
      `addressed to an IP address, localhost, this machine's name or the listen address (a guard against DNS rebinding); ` +
      `to accept "${name}", start it with --allowed-hosts ${name}`
    );
  }

  private acceptsName(name: string): boolean {
    if (this.anyHost || isIP(name) !== 0 || isLoopback(name) || this.names.has(name)) return true;
    return this.domains.some((domain) => name.endsWith(domain) || name === domain.slice(1));
  }

  /** Same scheme, host and port as the Host the request was sent to, or a loopback name on the same port. */
  private isOwnOrigin(origin: string, host: string | undefined): boolean {
    if (host === undefined) return false;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false; // "null" (sandboxed frames, file: pages) and anything else that is not an origin
    }
    const { scheme } = this.options;
    if (url.protocol !== `${scheme}:`) return false;
    const own = splitHost(host);
    if (!own) return false;
    const originName = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const originPort = url.port || defaultPort(scheme);
    if (originPort !== (own.port || defaultPort(scheme))) return false;
    return originName === own.name || (isLoopback(originName) && isLoopback(own.name));
  }

  /** Answers 403 in the surface's format. */
  private refusalBody(path: string, message: string): string {
    return this.options.errorFormat(path) === 'status'
      ? JSON.stringify(apiErrors.forbidden(message).status)
      : JSON.stringify(new GrpcError(GrpcCode.PERMISSION_DENIED, message).toJSON());
  }

  /** `handler` behind the checks: a refused request gets 403 and never reaches it. */
  requests(handler: RequestListener): RequestListener {
    return (req, res) => {
      const why = this.refusal(req);
      if (why === undefined) return handler(req, res);
      sendJsonText(res, 403, this.refusalBody(pathOf(req.url), why));
    };
  }

  /**
   * Puts the checks in front of the server's WebSocket upgrades: call it once every 'upgrade'
   * listener is attached. A refused upgrade is answered 403 and never reaches them.
   */
  upgrades(server: Server): void {
    const listeners = server.listeners('upgrade') as Array<(req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
    server.removeAllListeners('upgrade');
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const why = this.refusal(req, true);
      if (why === undefined) {
        for (const listener of listeners) listener.call(server, req, socket, head);
        return;
      }
      const body = this.refusalBody(pathOf(req.url), why);
      socket.on('error', () => socket.destroy());
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        () => socket.destroy(),
      );
    });
  }
}
