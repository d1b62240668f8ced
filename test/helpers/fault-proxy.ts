import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { Socket } from 'node:net';

/**
 * An HTTP proxy in front of a resource API that does to watches what networks and API servers
 * do: cuts them, holds new ones back, and answers them 410 Gone (a resourceVersion older than the
 * API server keeps) — as an HTTP 410, or as a watch ERROR event carrying the Status, as the API
 * server does once a watch has started. Everything else passes through unchanged.
 */
export class FaultProxy {
  /** Watch and list requests seen (lists: GETs of a collection without watch). */
  watchRequests = 0;
  listRequests = 0;
  private readonly watches = new Set<{ socket: Socket; upstream: ReturnType<typeof request> }>();
  private held: Array<() => void> | undefined;
  /** Armed: the next watch of each path is answered 410, in this form. */
  private gone: { form: 'http' | 'event'; answered: Set<string> } | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<FaultProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    const proxy = new FaultProxy(server, `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => proxy.handle(req, res, new URL(target)));
    return proxy;
  }

  /** Cuts every watch open now; returns how many. */
  killWatches(): number {
    const count = this.watches.size;
    for (const { socket, upstream } of this.watches) {
      upstream.destroy();
      socket.destroy();
    }
    this.watches.clear();
    return count;
  }

  /** Watches asked for from now on wait until `release`. */
  holdWatches(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const go of held) go();
  }

  /** The next watch of each collection is answered 410 Gone (`http`: the HTTP status; `event`: a watch ERROR event). */
  armGone(form: 'http' | 'event'): void {
    this.gone = { form, answered: new Set() };
  }

  get open(): number {
    return this.watches.size;
  }

  close(): Promise<void> {
    this.killWatches();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse, target: URL): void {
    const url = new URL(req.url ?? '/', target);
    const watch = ['1', 'true'].includes(url.searchParams.get('watch') ?? '');
    if (!watch) {
      if (req.method === 'GET' && !url.pathname.startsWith('/fleetsim/')) this.listRequests++;
      return this.forward(req, res, url, false);
    }
    this.watchRequests++;
    const go = () => {
      const gone = this.gone;
      if (gone && !gone.answered.has(url.pathname)) {
        gone.answered.add(url.pathname);
        const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 };
        if (gone.form === 'http') {
          res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify(status));
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
        }
        return;
      }
      this.forward(req, res, url, true);
    };
    if (this.held) this.held.push(go);
    else go();
  }

  private forward(req: IncomingMessage, res: ServerResponse, url: URL, watch: boolean): void {
    const upstream = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      // A watch's headers go at once, as the API server sends them, before any event.
      if (watch) res.flushHeaders();
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    if (!watch) return;
    const entry = { socket: res.socket!, upstream };
    this.watches.add(entry);
    res.on('close', () => this.watches.delete(entry));
  }
}
