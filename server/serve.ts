import type { Server } from 'node:http';
import express from 'express';
import { type Clock, VirtualClock, WallClock } from './clock.js';
import type { FeatureGates } from './features.js';
import { type Controller, controlPlane } from './controllers/control-plane.js';
import { PingService } from './ping-service.js';
import { installControlPlane } from './resources/control-plane.js';
import { ClusterMetrics } from './observability/cluster-metrics.js';
import { ApiRequestMetrics, metricsRoute } from './api/web/metrics-routes.js';
import { dashboardRoutes } from './api/web/dashboard.js';
import { apiErrorHandler, resourceApi } from './api/k8s/resource-api.js';
import { type SidecarWebSockets, attachSidecarWebSocket, sidecarHttpHandler } from './api/sdk/sidecar-http.js';
import { type GameServerSidecars, gameServerSidecars, sdkPathResolver } from './api/sdk/gameserver-sidecars.js';
import { apiErrors } from './k8s/status.js';
import type { ResourceService } from './resources/service.js';
import { type Cluster, createCluster, servingHeapSettings } from './cluster.js';
import { FLEET_KIND } from './kinds/fleet/fleet.js';
import { StreamRegistry } from './sidecar/stream-registry.js';
import { ensureNodes } from './sim/nodes.js';
import { type NodePool, ensurePoolNodes } from './sim/node-pools.js';
import type { SimulatedProcesses } from './sim/processes.js';
import type { StoredPodProcesses } from './sim/pod-processes.js';
import type { ProcessProfile } from './sim/profiles.js';
import { DEFAULT_FLEET, applyManifests } from './manifests.js';
import type { AllocatorOptions } from './allocation/allocator.js';
import { type ErrorFormat, RequestOriginGuard, isLoopback } from './api/request-origin.js';
import { KIND_DEFINITIONS } from './kinds/definitions.js';
import type { ValidationRules } from './kinds/registry.js';
import { AllocatorService, type AllocatorTlsOptions } from './allocator-service.js';
import { GameServerProcesses, hasCommand } from './controllers/gameserver-processes.js';
import { ProcessWatchdog } from './controllers/process-watchdog.js';
import { explainRoutes } from './api/web/explain-routes.js';
import { SidecarPortRange } from './sidecar-endpoints.js';
import { type Advance, MAX_ROUNDS_PER_INSTANT, IN_FLIGHT_GRACE_MS, advanceTo } from './sim/virtual-time.js';
import { ConnectionGuard } from './connections.js';
import { ActivityLog } from './history/activity-log.js';
import { type LogOutput, type LogSettings, type Logger, commandLogger } from './log/logger.js';

export interface ServeOptions {
  port: number;
  host?: string;
  db: string;
  gates: FeatureGates;
  nodes: number;
  clock: 'real' | 'virtual';
  /** Where a virtual clock starts: the resumed log's last event time (default 2026-01-01). */
  clockStartMs?: number;
  /** Manifests to apply at start (`-f`), each file's documents as read. */
  manifests: Array<{ source: string; documents: unknown[] }>;
  profiles: ProcessProfile[];
  portRange: { min: number; max: number };
  /** Whether simulated simple-game-servers listen on their host ports (`--no-listen` turns it off); default on. */
  listen?: boolean;
  /** Whether Agones's ping service runs, with its Services in agones-system (`--no-ping` turns it off); default on. */
  ping?: boolean;
  /** Whose rules validation follows where the spec and Agones differ (`--validation`); default the spec's. */
  validation?: ValidationRules;
  /** Loopback ports for the sidecars of GameServers with a real process (`--sdk-port-range`); default 9400-9999. */
  sdkPortRange?: { min: number; max: number };
  /** Pods each of the `nodes` takes (`--max-pods`); default 110. */
  maxPodsPerNode?: number;
  /**
   * Node pools (`--node-pools`) instead of `nodes`: each starts with its initialNodes and a node
   * autoscaler grows and shrinks it.
   */
  nodePools?: NodePool[];
  seed?: number;
  /** How long Kubernetes Events are kept; default one hour. */
  eventTtlMs?: number;
  /** Start a small default fleet when the log is empty and no manifest is given. */
  defaultFleet: boolean;
  allocatorModel?: AllocatorOptions;
  /** `--allowed-hosts`: Host names accepted beyond the loopback names, addresses and this machine's (server/api/request-origin.ts). */
  allowedHosts?: string[];
  allocatorTls?: AllocatorTlsOptions;
  /** Deadlines and the cap for client connections on every port; default: the real ones, under this process's open-file limit. */
  connections?: ConnectionGuard;
  /**
   * `--allow-commands`: run GameServers' commands (`fleetsim.dev/command`) even while listening
   * beyond loopback, where anyone who can reach the port can then run commands as this user.
   */
  allowCommands?: boolean;
  /** `--log-level`, `--log-format`: the server's own log (default info, text). */
  log?: LogSettings;
  /** Where the server's log goes; default stdout. */
  logOutput?: LogOutput;
}

/**
 * Why serve runs no commands, when it runs none: every listener but the HTTP port (and the
 * allocator's TLS port, on the same host) is on loopback, so `host` decides; beyond loopback
 * commands need --allow-commands.
 */
function commandsOff(options: ServeOptions): string | undefined {
  if (options.allowCommands || (options.host !== undefined && isLoopback(options.host.toLowerCase()))) return undefined;
  return `serve listens on ${options.host || 'all interfaces'}, beyond loopback, without --allow-commands`;
}

/**
 * `fleetsim serve`: the simulated cluster on one port — the resource API kubectl drives, the
 * sidecar of every GameServer at /sdk/{namespace}/{name}/…, the controllers, the simulated
 * nodes and game-server processes.
 */
export class FleetsimServer {
  readonly cluster: Cluster;
  readonly service: ResourceService;
  readonly clock: Clock;
  readonly allocation: AllocatorService;
  private readonly ping: PingService;
  private readonly controllers: readonly Controller[];
  /** Real game-server processes (`fleetsim.dev/command`), each with its own sidecar. */
  readonly processes: GameServerProcesses;
  /** Ends those processes if serve dies. */
  private readonly watchdog: ProcessWatchdog;
  private readonly simulated: SimulatedProcesses;
  private readonly podProcesses: StoredPodProcesses;
  private readonly streams = new StreamRegistry();
  /** Why no command runs here, when none does (see `commandsOff`). */
  readonly commandsOff: string | undefined;
  /** Agones's Prometheus metrics, at GET /metrics. */
  readonly metrics: ClusterMetrics;
  /** Every port's client connections: the plain port, the allocator's and the per-GameServer sidecars'. */
  readonly connections: ConnectionGuard;
  /** The server's own log: what the cluster does, a line each. */
  readonly logger: Logger;
  private readonly activity: ActivityLog;
  /** Every GameServer's sidecar, for /sdk/{namespace}/{name}/… and for each real process's own ports. */
  private readonly sidecars: GameServerSidecars;

  /** Sidecar watch streams (REST and WebSocket) open now. */
  get openWatchStreams(): number {
    return this.streams.size;
  }

  private httpServer: Server | undefined;
  private webSockets: SidecarWebSockets | undefined;
  /** The clock's advance under way (or done): the next one starts after it. */
  private advancing: Promise<unknown> = Promise.resolve();
  private readonly closing = new AbortController();

  constructor(private readonly options: ServeOptions) {
    this.clock = options.clock === 'virtual' ? new VirtualClock(options.clockStartMs) : new WallClock();
    servingHeapSettings();
    this.cluster = createCluster({ db: options.db, clock: this.clock, gates: options.gates, seed: options.seed, eventTtlMs: options.eventTtlMs });
    this.commandsOff = commandsOff(options);
    this.connections = options.connections ?? new ConnectionGuard();
    this.logger = commandLogger(options.log, () => this.clock.now(), options.logOutput);
    this.activity = new ActivityLog(this.cluster, this.logger);
    this.sidecars = gameServerSidecars(this.cluster, this.logger);
    this.allocation = new AllocatorService(this.cluster, {
      model: options.allocatorModel,
      tls: options.allocatorTls,
      host: options.host,
      allowedHosts: options.allowedHosts,
      connections: this.connections,
      observer: (outcome) => {
        this.metrics.observeAllocation(outcome);
        this.activity.allocation(outcome);
      },
    });
    this.ping = new PingService(this.cluster, { host: options.host, connections: this.connections });
    const sdkPorts = new SidecarPortRange(options.sdkPortRange?.min ?? 9400, options.sdkPortRange?.max ?? 9999);
    this.watchdog = new ProcessWatchdog(options.db);
    this.processes = new GameServerProcesses(
      this.cluster,
      (namespace, name) =>
        sdkPorts.start({
          address: '127.0.0.1',
          sidecar: (cause) => this.sidecars(namespace, name, cause),
          allowedHosts: options.allowedHosts,
          connections: this.connections,
        }),
      { mark: this.watchdog },
    );
    const plane = controlPlane(this.cluster, {
      service: { commandsOff: this.commandsOff, validation: options.validation },
      portRange: options.portRange,
      profiles: options.profiles,
      listen: options.listen ?? true,
      alsoListens: hasCommand,
      nodePools: options.nodePools,
      // With commands off nothing starts a process, whatever a GameServer says.
      processes: this.commandsOff === undefined ? this.processes : undefined,
    });
    this.service = plane.service;
    this.simulated = plane.simulated;
    this.podProcesses = plane.podProcesses;
    this.controllers = plane.controllers;
    const { gameServers, sets, fleets, autoscalers } = plane;
    // Each work queue under Agones's queue name and liveness check name.
    const queues = [
      [gameServers, 'agones.dev.GameServerController', 'gameserver-workerqueue'],
      [sets, 'agones.dev.GameServerSetController', 'gameserverset-workerqueue'],
      [fleets, 'agones.dev.FleetController', 'fleet-workerqueue'],
      [autoscalers, 'autoscaling.agones.dev.FleetAutoscalerController', 'fleetautoscaler-workerqueue'],
    ] as const;
    this.metrics = new ClusterMetrics(this.cluster);
    for (const [controller, name, check] of queues) {
      this.metrics.addHealthCheck(check, () => controller.running);
      controller.observeQueue(this.metrics.workQueue(name));
    }
  }

  async start(): Promise<{ port: number; applied: string[]; allocatorPort?: number }> {
    this.refuseStoredCommands();
    // What a previous run on this log left running (it and its watchdog killed) goes before anything starts again.
    ProcessWatchdog.endLeftovers(this.options.db);
    // Counted and told from the start: the nodes, the default fleet and the manifests too. The
    // lines wait for the end of the start, so the banner the command prints then comes first.
    this.logger.hold();
    this.metrics.start();
    this.activity.start();
    if (this.options.nodePools) await ensurePoolNodes(this.cluster, this.options.nodePools);
    else await ensureNodes(this.cluster, this.options.nodes, this.options.maxPodsPerNode);
    for (const controller of this.controllers) controller.start();
    const applied: string[] = [];
    for (const { source, documents } of this.options.manifests) applied.push(...(await applyManifests(this.service, documents, source)));
    if (this.options.defaultFleet && this.options.manifests.length === 0 && this.cluster.readModel.list(FLEET_KIND).length === 0) {
      applied.push(...(await applyManifests(this.service, [DEFAULT_FLEET], 'the default fleet')));
    }

    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    const resolveSidecar = sdkPathResolver(this.sidecars);
    const sidecars = sidecarHttpHandler(resolveSidecar, this.streams);
    // Through Express too: a request in absolute form (`GET http://host/sdk/…`) reaches it there.
    app.use('/sdk', sidecars);
    app.use(this.clockApi());
    app.get('/metrics', metricsRoute(this.metrics));
    app.use(explainRoutes(this.cluster.log));
    // The dashboard's page answers / only for a browser (Accept: text/html); other clients reach the resource API.
    app.use(dashboardRoutes(this.cluster));
    app.use(resourceApi(this.cluster, this.service));
    // Last: an error no route answered is a Status, never Express's HTML page (the sidecar routes
    // answer their own in the gateway's format).
    app.use(apiErrorHandler);
    const allocation = this.allocation.plainRoutes();
    const apiRequests = new ApiRequestMetrics(this.metrics);
    // The sidecar and the allocator answer in Agones's gateway format, the rest as the API server does.
    const errorFormat = (path: string): ErrorFormat => (/^\/(sdk|gameserverallocation)(\/|$)/i.test(path) ? 'gateway' : 'status');
    const guard = new RequestOriginGuard({ scheme: 'http', listenHost: this.options.host, allowedHosts: this.options.allowedHosts, errorFormat });
    this.httpServer = this.connections.createHttpServer(
      guard.requests((req, res) => {
        apiRequests.observe(req, res);
        if (allocation(req, res)) return;
        // The sidecars on plain node:http, as `fleetsim sidecar` serves them: Express's routing
        // and its request decoration cost more than the sidecar's own work.
        if (req.url?.startsWith('/sdk/')) sidecars(req, res, () => app(req, res));
        else app(req, res);
      }),
    );
    // An upgrade outside /sdk is addressed to the resource API, which serves no WebSocket.
    const notFound = apiErrors.pathNotFound();
    this.webSockets = attachSidecarWebSocket(this.httpServer, resolveSidecar, this.streams, () => ({ status: notFound.code, body: notFound.status }));
    // After the WebSocket listener: the guard wraps the upgrade listeners already on the server.
    guard.upgrades(this.httpServer);
    await new Promise<void>((resolve, reject) => {
      this.httpServer!.once('error', reject);
      this.httpServer!.listen(this.options.port, this.options.host, () => resolve());
    });
    const address = this.httpServer.address();
    await this.allocation.start();
    await this.ping.start(this.options.ping ?? true);
    await installControlPlane(this.cluster);
    this.logger.release();
    return { port: typeof address === 'object' && address ? address.port : this.options.port, applied, allocatorPort: this.allocation.tlsPort };
  }

  /** A log holding an object that runs a command is not served while commands are off (manifests are refused as any write is). */
  private refuseStoredCommands(): void {
    if (this.commandsOff === undefined) return;
    for (const definition of KIND_DEFINITIONS) {
      const commandOf = definition.commandOf;
      if (!commandOf) continue;
      for (const object of this.cluster.readModel.list(definition.kind)) {
        const command = commandOf(object);
        if (!command) continue;
        const { namespace, name } = object.metadata;
        throw new Error(`the log holds ${definition.kind} ${namespace}/${name}, which runs a command (${command.field}), but commands are off: ${this.commandsOff}`);
      }
    }
  }

  /**
   * On the virtual clock, time moves only when asked: `POST /fleetsim/v1/clock {"advanceSeconds": N}`
   * carries out everything that happens in those N seconds (server/sim/virtual-time.ts) and answers
   * once it is durable. Advances asked for together run one after the other.
   */
  private clockApi(): express.Router {
    const router = express.Router();
    router.get('/fleetsim/v1/clock', (_req, res) => {
      res.json({ kind: this.options.clock, now: new Date(this.clock.now()).toISOString() });
    });
    router.post('/fleetsim/v1/clock', express.json(), (req, res, next) => {
      const seconds = (req.body as { advanceSeconds?: unknown } | undefined)?.advanceSeconds;
      const clock = this.clock;
      if (!(clock instanceof VirtualClock)) {
        res.status(409).json({ message: 'the clock is the wall clock; start with --clock virtual to move it by hand' });
        return;
      }
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
        res.status(400).json({ message: 'advanceSeconds: must be a finite number >= 0' });
        return;
      }
      const run = this.advancing.then(() => advanceTo(clock, this.cluster.log, clock.now() + Math.round(seconds * 1000), { signal: this.closing.signal }));
      this.advancing = run.catch(() => undefined);
      run.then((advance) => {
        if (this.closing.signal.aborted) {
          res.status(503).json({ message: `the server is shutting down; the clock stopped at ${new Date(clock.now()).toISOString()}` });
          return;
        }
        res.json({ kind: 'virtual', now: new Date(clock.now()).toISOString(), timersFired: advance.timersFired, ...unsettledReport(advance.unsettled) });
      }, next);
    });
    return router;
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.advancing;
    this.streams.endAll();
    for (const controller of this.controllers) controller.stop();
    this.activity.stop();
    await this.processes.close();
    this.watchdog.close();
    await this.simulated.close();
    await this.podProcesses.close();
    await this.allocation.close();
    await this.ping.close();
    this.webSockets?.terminateAll();
    this.httpServer?.closeAllConnections();
    await new Promise<void>((resolve) => (this.httpServer ? this.httpServer.close(() => resolve()) : resolve()));
    this.metrics.close();
    this.cluster.close();
    await this.logger.close();
  }
}

/** An advance that moved on from instants before their work was done says so, naming the first. */
function unsettledReport(unsettled: Advance['unsettled']): { unsettled?: { instants: number; first: string; message: string } } {
  const first = unsettled[0];
  if (!first) return {};
  const why =
    first.why === 'requeued'
      ? `work was still being queued after ${MAX_ROUNDS_PER_INSTANT} rounds (a controller that requeues itself at once)`
      : `work in flight had not ended after ${IN_FLIGHT_GRACE_MS / 1000} s of real time (a webhook that does not answer)`;
  const others = unsettled.length > 1 ? ` (and ${unsettled.length - 1} later instants)` : '';
  return {
    unsettled: {
      instants: unsettled.length,
      first: new Date(first.at).toISOString(),
      message: `at ${new Date(first.at).toISOString()}${others} time moved on before the work was done: ${why}`,
    },
  };
}
