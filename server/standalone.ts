import { unwatchFile, watchFile } from 'node:fs';
import { createServer, type Server } from 'node:http';
import express from 'express';
import type { Subscription } from 'rxjs';
import type { WebSocketServer } from 'ws';
import { WallClock } from './clock.js';
import type { FeatureGates } from './features.js';
import { GameServerController } from './controllers/gameserver-controller.js';
import { gameServerEvent } from './kinds/gameserver/events.js';
import { Cluster } from './cluster.js';
import { attachSidecarWebSocket, sidecarHttpHandler } from './api/sidecar-http.js';
import { StreamRegistry } from './sidecar/stream-registry.js';
import { RequestOriginGuard } from './api/request-origin.js';
import { type SidecarGrpcServer, startSidecarGrpc } from './grpc/sidecar-grpc.js';
import { ConformanceRecorder, type Verdict } from './sidecar/conformance.js';
import { defaultLocalGameServer, gameServerFromManifest } from './sidecar/local-gameserver.js';
import { Sidecar } from './sidecar/sidecar.js';

export interface StandaloneSidecarOptions {
  db: string;
  gates: FeatureGates;
  address: string;
  httpPort: number;
  grpcPort: number;
  file?: string;
  /** Expected request names: conformance mode. */
  expected?: string[];
  seed?: number;
  /** `--allowed-hosts`: Host names accepted beyond the loopback names, addresses and this machine's. */
  allowedHosts?: string[];
}

/**
 * `fleetsim sidecar`: one GameServer, its sidecar over REST, WebSocket and gRPC, and the
 * controller step that turns RequestReady into Ready — a drop-in for `sdk-server --local`
 * that behaves like the real cluster.
 */
export class StandaloneSidecar {
  readonly cluster: Cluster;
  readonly recorder: ConformanceRecorder | undefined;
  private readonly controller: GameServerController;
  private readonly streams = new StreamRegistry();

  /** Sidecar watch streams (REST and WebSocket) open now. */
  get openWatchStreams(): number {
    return this.streams.size;
  }

  private httpServer: Server | undefined;
  private wss: WebSocketServer | undefined;
  private grpc: SidecarGrpcServer | undefined;
  private expirySubscription: Subscription | undefined;
  private manifestWatcher: (() => void) | undefined;
  private namespace = 'default';
  private name = 'local';

  constructor(private readonly options: StandaloneSidecarOptions) {
    this.cluster = new Cluster({ db: options.db, clock: new WallClock(), gates: options.gates, seed: options.seed });
    this.recorder = options.expected ? new ConformanceRecorder(options.expected) : undefined;
    this.controller = new GameServerController(this.cluster, { deleteShutdown: false });
  }

  /** Creates the GameServer unless the log already holds it, then starts listening. */
  async start(): Promise<{ httpPort: number; grpcPort: number }> {
    const { cluster, options } = this;
    // In conformance mode the uid is a random decimal, as Agones's test server makes it.
    const uid = options.expected ? String(Math.floor(cluster.rng.next() * 1e12)) : '1234';
    const local = { uid, now: cluster.clock.now(), gates: options.gates };
    const gs = options.file ? gameServerFromManifest(options.file, local) : defaultLocalGameServer(local);
    this.namespace = gs.metadata.namespace;
    this.name = gs.metadata.name;
    if (!cluster.gameServers.get(this.namespace, this.name)) {
      await cluster.commit([gameServerEvent('GameServerCreated', this.namespace, this.name, { object: gs })]);
    }
    this.controller.start();
    if (options.file) this.watchManifest(options.file, local);
    if (this.recorder) {
      // Agones's test server records the Ready its reservation timer calls.
      const recorder = this.recorder;
      this.expirySubscription = cluster.gameServerChanges$.subscribe((change) => {
        const payload = change.event.payload as { cause?: string };
        if (change.event.type === 'GameServerStateChanged' && payload.cause === 'timer') recorder.record('ready');
      });
    }

    const sidecar = () => new Sidecar(cluster, this.namespace, this.name, this.recorder);
    const resolve = (path: string) => ({ sidecar, path });
    const app = express();
    app.disable('x-powered-by');
    app.use(...sidecarHttpHandler(resolve, this.streams));
    const guard = new RequestOriginGuard({ scheme: 'http', listenHost: options.address, allowedHosts: options.allowedHosts, errorFormat: () => 'gateway' });
    this.httpServer = createServer(guard.requests(app));
    this.wss = attachSidecarWebSocket(this.httpServer, resolve, this.streams);
    guard.upgrades(this.httpServer);
    const host = options.address === '' ? undefined : options.address;
    await new Promise<void>((done, fail) => {
      this.httpServer!.once('error', fail);
      this.httpServer!.listen(options.httpPort, host, () => done());
    });
    this.grpc = await startSidecarGrpc({ address: options.address, port: options.grpcPort, sidecar });
    const address = this.httpServer.address();
    const httpPort = typeof address === 'object' && address ? address.port : options.httpPort;
    return { httpPort, grpcPort: this.grpc.port };
  }

  /**
   * As Agones's local mode: when the manifest is written, it replaces the whole GameServer (SDK
   * changes included) and watchers get the new one. A file that does not parse is reported and
   * ignored.
   */
  private watchManifest(path: string, local: { uid: string; now: number; gates: FeatureGates }): void {
    this.manifestWatcher = () => {
      try {
        const gs = gameServerFromManifest(path, { ...local, now: this.cluster.clock.now() });
        if (gs.metadata.namespace !== this.namespace || gs.metadata.name !== this.name) {
          throw new Error(`the manifest now names ${gs.metadata.namespace}/${gs.metadata.name}, not ${this.namespace}/${this.name}`);
        }
        void this.cluster.commit([gameServerEvent('GameServerReloaded', this.namespace, this.name, { object: gs })]);
      } catch (error) {
        console.error(`fleetsim sidecar: could not reload ${path}: ${(error as Error).message}`);
      }
    };
    watchFile(path, { interval: 250 }, this.manifestWatcher);
  }

  /** Ends every watch cleanly, stops listening, flushes the log; returns the conformance verdict. */
  async close(): Promise<Verdict | undefined> {
    if (this.manifestWatcher && this.options.file) unwatchFile(this.options.file, this.manifestWatcher);
    this.streams.endAll();
    this.controller.stop();
    this.expirySubscription?.unsubscribe();
    await this.grpc?.close();
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.httpServer?.closeAllConnections();
    await new Promise<void>((done) => (this.httpServer ? this.httpServer.close(() => done()) : done()));
    this.cluster.close();
    return this.recorder?.verdict();
  }
}
