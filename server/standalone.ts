import { unwatchFile, watchFile } from 'node:fs';
import type { Subscription } from 'rxjs';
import { WallClock } from './clock.js';
import type { FeatureGates } from './features.js';
import { GameServerController } from './controllers/gameserver-controller.js';
import { gameServerEvent } from './kinds/gameserver/events.js';
import { GAMESERVER_KIND } from './kinds/agones.js';
import { type Cluster, createCluster } from './cluster.js';
import { unawaited } from './runtime/store.js';
import { SidecarEndpoints } from './sidecar-endpoints.js';
import { ConformanceRecorder, type Verdict } from './sidecar/conformance.js';
import { defaultLocalGameServer, gameServerFromManifest } from './sidecar/local-gameserver.js';
import { Sidecar } from './sidecar/sidecar.js';
import { type LogOutput, type LogSettings, type Logger, commandLogger } from './log/logger.js';

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
  /** `--log-level`, `--log-format`: each SDK call is logged at info, as `sdk-server --local` does. */
  log?: LogSettings;
  /** Where the log goes; default stdout. */
  logOutput?: LogOutput;
}

/**
 * `fleetsim sidecar`: one GameServer, its sidecar over REST, WebSocket and gRPC, and the
 * controller step that turns RequestReady into Ready — a drop-in for `sdk-server --local`
 * that behaves like the real cluster.
 */
export class StandaloneSidecar {
  readonly cluster: Cluster;
  readonly recorder: ConformanceRecorder | undefined;
  /** The sidecar's log: a line per SDK call. */
  readonly logger: Logger;
  private readonly controller: GameServerController;
  private endpoints: SidecarEndpoints | undefined;

  /** Sidecar watch streams (REST and WebSocket) open now. */
  get openWatchStreams(): number {
    return this.endpoints?.openWatchStreams ?? 0;
  }

  private expirySubscription: Subscription | undefined;
  private manifestWatcher: (() => void) | undefined;
  private namespace = 'default';
  private name = 'local';

  constructor(private readonly options: StandaloneSidecarOptions) {
    // No resource API here, so no watch resumes from a resourceVersion: keeping Kubernetes's watch
    // window of changes would only hold memory that grows with every request.
    this.cluster = createCluster({ db: options.db, clock: new WallClock(), gates: options.gates, seed: options.seed, systemNamespaces: false, watchWindow: 16 });
    this.recorder = options.expected ? new ConformanceRecorder(options.expected) : undefined;
    const clock = this.cluster.clock;
    this.logger = commandLogger(options.log, () => clock.now(), options.logOutput);
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
      const detail = options.file ? `the sidecar starts with ${options.file}` : 'the sidecar starts with its local GameServer';
      await cluster.commit([gameServerEvent('GameServerCreated', this.namespace, this.name, { object: gs })], { type: 'startup', detail });
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

    this.endpoints = await new SidecarEndpoints({
      address: options.address,
      httpPort: options.httpPort,
      grpcPort: options.grpcPort,
      sidecar: (cause) => new Sidecar(cluster, this.namespace, this.name, { recorder: this.recorder, cause, log: this.logger }),
      allowedHosts: options.allowedHosts,
    }).start();
    return { httpPort: this.endpoints.httpPort, grpcPort: this.endpoints.grpcPort };
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
        const cause = { type: 'process', object: { kind: GAMESERVER_KIND, namespace: this.namespace, name: this.name }, detail: `${path} changed` } as const;
        unawaited(this.cluster.commit([gameServerEvent('GameServerReloaded', this.namespace, this.name, { object: gs })], cause));
      } catch (error) {
        console.error(`fleetsim sidecar: could not reload ${path}: ${(error as Error).message}`);
      }
    };
    watchFile(path, { interval: 250 }, this.manifestWatcher);
  }

  /** Ends every watch cleanly, stops listening, flushes the log; returns the conformance verdict. */
  async close(): Promise<Verdict | undefined> {
    if (this.manifestWatcher && this.options.file) unwatchFile(this.options.file, this.manifestWatcher);
    this.controller.stop();
    this.expirySubscription?.unsubscribe();
    await this.endpoints?.close();
    this.cluster.close();
    await this.logger.close();
    return this.recorder?.verdict();
  }
}
