import type { Server } from 'node:http';
import { type SidecarWebSockets, attachSidecarWebSocket, sidecarHttpHandler } from './api/sdk/sidecar-http.js';
import { RequestOriginGuard } from './api/request-origin.js';
import { type SidecarGrpcServer, startSidecarGrpc } from './grpc/sidecar-grpc-port.js';
import type { RequestCause } from './log/cause.js';
import type { Sidecar } from './sidecar/sidecar.js';
import { StreamRegistry } from './sidecar/stream-registry.js';
import { ConnectionGuard } from './connections.js';

export interface SidecarEndpointsOptions {
  /** Interface to bind; '' means all interfaces. */
  address: string;
  httpPort: number;
  grpcPort: number;
  /** The sidecar answering, resolved per request; `cause` makes the request's cause, called only when it changes something. */
  sidecar: (cause: () => RequestCause) => Sidecar;
  /** `--allowed-hosts`: Host names accepted beyond the loopback names, addresses and this machine's. */
  allowedHosts?: string[];
  /** The process's connection guard, which both ports' connections join; default: one of their own. */
  connections?: ConnectionGuard;
}

/**
 * One GameServer's sidecar on its own ports, as Agones's sdk-server serves it: REST and
 * WebSocket on the HTTP port, gRPC on the other. `fleetsim sidecar` runs one; `serve` runs one
 * per GameServer that has a real process.
 */
export class SidecarEndpoints {
  private readonly streams = new StreamRegistry();
  private httpServer: Server | undefined;
  private webSockets: SidecarWebSockets | undefined;
  private grpc: SidecarGrpcServer | undefined;
  httpPort = 0;
  grpcPort = 0;

  constructor(private readonly options: SidecarEndpointsOptions) {}

  /** Sidecar watch streams (REST and WebSocket) open now. */
  get openWatchStreams(): number {
    return this.streams.size;
  }

  /** Listens on both ports; a port that cannot be bound rejects, and nothing stays open. */
  async start(): Promise<this> {
    const { options } = this;
    const resolve = (path: string) => ({ sidecar: options.sidecar, path });
    const handler = sidecarHttpHandler(resolve, this.streams);
    const guard = new RequestOriginGuard({ scheme: 'http', listenHost: options.address, allowedHosts: options.allowedHosts, errorFormat: () => 'gateway' });
    const connections = options.connections ?? new ConnectionGuard();
    // Every path is some sidecar path: the resolver never passes one on.
    this.httpServer = connections.createHttpServer(guard.requests((req, res) => handler(req, res, () => undefined)));
    this.webSockets = attachSidecarWebSocket(this.httpServer, resolve, this.streams);
    guard.upgrades(this.httpServer);
    const host = options.address === '' ? undefined : options.address;
    try {
      await new Promise<void>((done, fail) => {
        this.httpServer!.once('error', fail);
        this.httpServer!.listen(options.httpPort, host, () => done());
      });
      const address = this.httpServer.address();
      this.httpPort = typeof address === 'object' && address ? address.port : options.httpPort;
      this.grpc = await startSidecarGrpc({ address: options.address, port: options.grpcPort, sidecar: options.sidecar, connections });
      this.grpcPort = this.grpc.port;
    } catch (error) {
      await this.close();
      throw error;
    }
    return this;
  }

  /** Ends every watch cleanly and stops listening. */
  async close(): Promise<void> {
    this.streams.endAll();
    await this.grpc?.close();
    this.webSockets?.terminateAll();
    const server = this.httpServer;
    if (!server?.listening) return;
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }
}

/**
 * The loopback ports per-GameServer sidecars take (`serve --sdk-port-range`): two per sidecar,
 * free in fleetsim and on the machine; a port some other program holds is skipped.
 */
export class SidecarPortRange {
  private readonly taken = new Set<number>();
  private cursor: number;

  constructor(
    readonly min: number,
    readonly max: number,
  ) {
    if (!(min > 0 && max > min && max <= 65535)) throw new Error(`invalid sidecar port range ${min}-${max}: it needs two ports at least`);
    this.cursor = min;
  }

  /** Starts a sidecar on the next two free ports; rejects when the range has none left. Closing it frees them. */
  async start(
    options: Omit<SidecarEndpointsOptions, 'httpPort' | 'grpcPort'>,
  ): Promise<{ httpPort: number; grpcPort: number; close(): Promise<void> }> {
    const size = this.max - this.min + 1;
    for (let tried = 0; tried < size; ) {
      const pair: number[] = [];
      while (pair.length < 2 && tried < size) {
        const port = this.cursor;
        this.cursor = port === this.max ? this.min : port + 1;
        tried++;
        if (!this.taken.has(port)) pair.push(port);
      }
      if (pair.length < 2) break;
      const [httpPort, grpcPort] = pair as [number, number];
      this.taken.add(httpPort).add(grpcPort);
      const endpoints = new SidecarEndpoints({ ...options, httpPort, grpcPort });
      try {
        await endpoints.start();
      } catch (error) {
        this.taken.delete(httpPort);
        this.taken.delete(grpcPort);
        if (!isPortBusy(error)) throw error;
        continue;
      }
      return {
        httpPort,
        grpcPort,
        close: async () => {
          await endpoints.close();
          this.taken.delete(httpPort);
          this.taken.delete(grpcPort);
        },
      };
    }
    throw new Error(`no two free ports left in the sidecar port range ${this.min}-${this.max} (serve --sdk-port-range)`);
  }
}

function isPortBusy(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === 'EADDRINUSE' || /address already in use|EADDRINUSE|No address added/i.test(e.message ?? '');
}
