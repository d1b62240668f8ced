import { readFileSync } from 'node:fs';
import { type RequestListener, type Server as HttpServer, createServer as createHttpServer } from 'node:http';
import type { Http2SecureServer, Http2ServerRequest, Http2ServerResponse, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import { type Server as TcpServer, type Socket, createServer as createTcpServer } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * What every port of the process does with the connections it accepts, so that clients that
 * connect and say nothing, or say it slowly, neither pile up nor lock real clients out:
 *
 * - timeouts for each stage of a connection (below), Node's own where Node has one;
 * - a cap on open connections below the process's open-file limit (`ulimit -n`): past that limit
 *   the kernel refuses every new socket, the log's and the real client's alike. At the cap a new
 *   connection takes the place of the connection idle longest, on any port; one with a request, a
 *   call, a watch or a WebSocket in flight is never taken. When none is idle the new one is closed.
 *
 * One guard serves all the ports of a process (the plain port, the allocator's TLS port, the
 * sidecars' ports): they share its file descriptors.
 */

export interface ConnectionTimeouts {
  /** A new connection sends its first byte (a request line, a TLS ClientHello, HTTP/2's preface) within this. */
  firstByteMs: number;
  /** A TLS handshake, or HTTP/2's opening SETTINGS, is complete within this once the first byte came. */
  handshakeMs: number;
  /** A request's headers are complete within this of its first byte (Node's headersTimeout). */
  headersMs: number;
  /** A whole request, headers and body, is received within this (Node's requestTimeout); the answer may take longer. */
  requestMs: number;
  /** An HTTP/1.1 connection waits this long for its next request (Node's keepAliveTimeout). */
  keepAliveMs: number;
  /** An HTTP/2 connection without a stream open is closed after this (Agones's allocator: MaxConnectionIdle). */
  http2IdleMs: number;
}

export const DEFAULT_CONNECTION_TIMEOUTS: Readonly<ConnectionTimeouts> = {
  firstByteMs: 10_000,
  handshakeMs: 10_000,
  headersMs: 60_000,
  requestMs: 300_000,
  keepAliveMs: 5_000,
  http2IdleMs: 300_000,
};

/** Multiplies every connection timeout: tests set a small scale rather than wait for the real ones. Not a documented setting. */
export const CONNECTION_TIMEOUT_SCALE_ENV = 'FLEETSIM_CONNECTION_TIMEOUT_SCALE';

/** The timeouts, scaled by FLEETSIM_CONNECTION_TIMEOUT_SCALE when it is set. */
export function connectionTimeouts(env: NodeJS.ProcessEnv = process.env): ConnectionTimeouts {
  const raw = env[CONNECTION_TIMEOUT_SCALE_ENV];
  if (raw === undefined || raw === '') return { ...DEFAULT_CONNECTION_TIMEOUTS };
  const scale = Number(raw);
  if (!(scale > 0 && scale <= 1000)) throw new Error(`${CONNECTION_TIMEOUT_SCALE_ENV}: "${raw}" is not a number above 0 (and up to 1000)`);
  const scaled = Object.entries(DEFAULT_CONNECTION_TIMEOUTS).map(([name, ms]) => [name, Math.max(1, Math.round(ms * scale))]);
  return Object.fromEntries(scaled) as unknown as ConnectionTimeouts;
}

/** The soft limit on open files (`ulimit -n`) from Linux's /proc/self/limits: undefined where there is none to read, or no limit. */
export function openFileLimit(limits?: string): number | undefined {
  let text = limits;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
}

/**
 * Client connections kept open at most under an open-file limit: the limit less what is left to
 * the log, listeners, game processes' pipes and outgoing calls, a quarter of it but 64 at least
 * and 512 at most (19,000 watchers fit under a limit of 20,000, as `npm run bench` runs them).
 */
export function connectionCap(fileLimit: number | undefined): number {
  if (fileLimit === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(16, fileLimit - Math.min(512, Math.max(64, Math.floor(fileLimit / 4))));
}

/** Where a connection comes from and arrives: a socket, a TLS socket over it, a gRPC call's connection info. */
export interface ConnectionPeer {
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

function peerKey(peer: ConnectionPeer): string | undefined {
  return peer.remotePort === undefined ? undefined : `${peer.localPort} ${peer.remoteAddress} ${peer.remotePort}`;
}

interface Tracked {
  socket: Socket;
  key: string;
  /** Requests, streams or calls in flight; an upgraded connection keeps one for good. */
  active: number;
}

const nothing = (): void => undefined;

export class ConnectionGuard {
  readonly timeouts: ConnectionTimeouts;
  readonly max: number;
  private readonly open = new Map<string, Tracked>();
  private readonly bySocket = new WeakMap<Socket, Tracked>();
  /** Connections with nothing in flight, the one idle longest first (a Set keeps insertion order). */
  private readonly idle = new Set<Tracked>();

  constructor(options: { timeouts?: ConnectionTimeouts; max?: number } = {}) {
    this.timeouts = options.timeouts ?? connectionTimeouts();
    this.max = options.max ?? connectionCap(openFileLimit());
  }

  /** Connections open now, on every port. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Counts a connection just accepted, idle until something begins on it. At the cap the
   * connection idle longest is closed to make room; if none is idle this one is closed, and false
   * is returned.
   */
  admit(socket: Socket): boolean {
    const key = peerKey(socket);
    if (key === undefined || socket.destroyed) {
      socket.destroy();
      return false;
    }
    if (this.open.size >= this.max) {
      const oldest = this.idle.values().next();
      if (oldest.done) {
        socket.destroy();
        return false;
      }
      this.forget(oldest.value);
      oldest.value.socket.destroy();
    }
    const tracked: Tracked = { socket, key, active: 0 };
    this.open.set(key, tracked);
    this.bySocket.set(socket, tracked);
    this.idle.add(tracked);
    socket.once('close', () => this.forget(tracked));
    return true;
  }

  /**
   * Marks the connection busy (a request, stream or call begins on it) until the function returned
   * is called; the connection of a socket this guard did not admit is left alone.
   */
  begin(peer: Socket | ConnectionPeer): () => void {
    const tracked = this.bySocket.get(peer as Socket) ?? this.open.get(peerKey(peer) ?? '');
    if (!tracked) return nothing;
    tracked.active++;
    this.idle.delete(tracked);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      // Re-added at the end: the order of `idle` is the order connections fell idle.
      if (--tracked.active === 0 && this.open.get(tracked.key) === tracked) this.idle.add(tracked);
    };
  }

  private forget(tracked: Tracked): void {
    this.idle.delete(tracked);
    if (this.open.get(tracked.key) === tracked) this.open.delete(tracked.key);
  }

  /**
   * A listener of raw connections that hands each on with its first `length` bytes (given to
   * `handOver`, which decides what they are): the first byte due within firstByteMs, the rest
   * within handshakeMs of it. A connection that sends less in time is closed.
   */
  firstBytes(handOver: (socket: Socket, first: Buffer) => void, length = 1): (socket: Socket) => void {
    return (socket) => {
      socket.on('error', () => socket.destroy());
      if (!this.admit(socket)) return;
      const chunks: Buffer[] = [];
      let received = 0;
      const close = () => socket.destroy();
      let deadline = setTimeout(close, this.timeouts.firstByteMs);
      // Read (not 'data': a TLS socket over it would miss what flowed) what has come.
      const onReadable = () => {
        for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
          if (received === 0) {
            clearTimeout(deadline);
            deadline = setTimeout(close, this.timeouts.handshakeMs);
          }
          chunks.push(chunk);
          received += chunk.length;
        }
        if (received < length) return;
        clearTimeout(deadline);
        socket.off('readable', onReadable);
        socket.off('end', close);
        handOver(socket, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      };
      socket.on('readable', onReadable);
      socket.once('end', close);
      socket.once('close', () => clearTimeout(deadline));
    };
  }

  /**
   * An HTTP/2 server (with its HTTP/1.1 fallback) whose connections are guarded once handed to
   * it: the client's SETTINGS due within handshakeMs, a session with no stream open closed after
   * http2IdleMs, an HTTP/1.1 connection's first request due within firstByteMs, and each stream
   * or request holding its connection busy while it lasts. (The TLS handshake's own deadline is
   * the server's `handshakeTimeout`.)
   */
  guardHttp2(server: Http2SecureServer): void {
    const t = this.timeouts;
    // Read by Node's HTTP/1.1 fallback as by an http.Server.
    Object.assign(server, { keepAliveTimeout: t.keepAliveMs });
    server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.alpnProtocol !== 'h2') socket.setTimeout(t.firstByteMs);
    });
    server.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => {
      if (req.httpVersionMajor !== 1) return;
      req.socket.setTimeout(0);
      res.once('close', this.begin(req.socket));
    });
    server.on('session', (session: ServerHttp2Session) => {
      const socket = session.socket;
      const peer = { localPort: socket.localPort, remoteAddress: socket.remoteAddress, remotePort: socket.remotePort };
      let streams = 0;
      const settings = setTimeout(() => session.destroy(), t.handshakeMs);
      session.once('remoteSettings', () => clearTimeout(settings));
      // Armed while no stream is open (a cleared timer cannot be refreshed: a new one each time).
      let idle: NodeJS.Timeout | undefined;
      const idleFromNow = () => (idle = setTimeout(() => session.close(), t.http2IdleMs));
      idleFromNow();
      session.on('stream', (stream: ServerHttp2Stream) => {
        if (streams++ === 0) clearTimeout(idle);
        const done = this.begin(peer);
        stream.once('close', () => {
          done();
          if (--streams === 0 && !session.closed) idleFromNow();
        });
      });
      session.once('close', () => {
        clearTimeout(settings);
        clearTimeout(idle);
      });
    });
  }

  /**
   * An HTTP/1.1 server whose connections are guarded: admitted, closed when they send nothing
   * within firstByteMs, Node's header, request and keep-alive timeouts set, and each request (or
   * WebSocket) holding its connection busy while it lasts, however long a watch stays open.
   */
  createHttpServer(handler: RequestListener): HttpServer {
    const t = this.timeouts;
    // Node checks the header and request deadlines at this interval: a fraction of the shortest.
    const server = createHttpServer({ connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.round(t.headersMs / 4))) }, handler);
    server.headersTimeout = t.headersMs;
    server.requestTimeout = t.requestMs;
    server.keepAliveTimeout = t.keepAliveMs;
    server.on('connection', (socket: Socket) => {
      // Node's own 'timeout' handler destroys the socket: no listener on the server's 'timeout'.
      if (this.admit(socket)) socket.setTimeout(t.firstByteMs);
    });
    server.prependListener('request', (req, res) => {
      // Node sets the keep-alive timeout again once the answer is sent.
      req.socket.setTimeout(0);
      res.once('close', this.begin(req.socket));
    });
    server.prependListener('upgrade', (req: { socket: Socket }) => {
      req.socket.setTimeout(0);
      this.begin(req.socket);
    });
    return server;
  }
}

/**
 * A TCP port whose connections go to `accept`; closing it ends those still open too (a net
 * server's close only stops accepting, then waits for them).
 */
export class TcpPort {
  private readonly sockets = new Set<Socket>();
  private readonly server: TcpServer;

  constructor(accept: (socket: Socket) => void) {
    this.server = createTcpServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      accept(socket);
    });
  }

  /** Listens on `port` (0: any free one) and resolves with the port bound. */
  listen(port: number, host?: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }
}
