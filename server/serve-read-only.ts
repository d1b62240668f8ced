import type { Server } from 'node:http';
import express from 'express';
import { VirtualClock } from './clock.js';
import type { FeatureGates } from './features.js';
import { type Cluster, createCluster } from './cluster.js';
import { ClusterMetrics } from './observability/cluster-metrics.js';
import { metricsRoute } from './api/web/metrics-routes.js';
import { dashboardRoutes } from './api/web/dashboard.js';
import { explainRoutes } from './api/web/explain-routes.js';
import { apiErrorHandler, resourceApi } from './api/k8s/resource-api.js';
import { RequestOriginGuard } from './api/request-origin.js';
import { sendError } from './api/responses.js';
import { apiErrors } from './k8s/status.js';
import { EventLog } from './log/event-log.js';
import { ConnectionGuard } from './connections.js';

export interface ReadOnlyServeOptions {
  port: number;
  host?: string;
  db: string;
  gates: FeatureGates;
  eventTtlMs?: number;
  allowedHosts?: string[];
}

/** Methods that read: every other one would change the cluster. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `fleetsim serve --db LOG --read-only`: the cluster a log ends with (a recording of a live
 * cluster, or a stopped serve's log), served as the resource API, the dashboard with its timeline,
 * explain and the metrics of that state — and nothing run: no controllers, no processes, no
 * sidecars, no allocator, the log opened read-only. Its clock stands at the log's last event, so
 * ages are as they were then. A write is answered 405 MethodNotAllowed, as the API server answers
 * a verb a resource does not serve, saying why.
 */
export class ReadOnlyServer {
  readonly cluster: Cluster;
  readonly metrics: ClusterMetrics;
  /** The log's last event's time (epoch ms) and how many events it holds. */
  readonly lastTime: number | undefined;
  readonly events: number;
  private httpServer: Server | undefined;

  constructor(private readonly options: ReadOnlyServeOptions) {
    const log = new EventLog(options.db, { readonly: true });
    let bounds;
    try {
      bounds = log.bounds();
    } finally {
      log.close();
    }
    this.lastTime = bounds?.last.time;
    this.events = bounds?.last.seq ?? 0;
    const clock = new VirtualClock(this.lastTime);
    this.cluster = createCluster({ db: options.db, clock, gates: options.gates, eventTtlMs: options.eventTtlMs, readonly: true, systemNamespaces: false });
    this.metrics = new ClusterMetrics(this.cluster);
  }

  async start(): Promise<{ port: number }> {
    const { db } = this.options;
    const app = express();
    app.disable('x-powered-by');
    app.disable('etag');
    app.use((req, res, next) => {
      if (READS.has(req.method)) return next();
      sendError(res, apiErrors.methodNotAllowed(`fleetsim serve --read-only: ${req.method} ${req.path} would change the cluster, and this server only shows the log ${db} as it ends`));
    });
    app.get('/fleetsim/v1/clock', (_req, res) => {
      res.json({ kind: 'stopped', now: new Date(this.cluster.clock.now()).toISOString() });
    });
    app.get('/metrics', metricsRoute(this.metrics));
    app.use(explainRoutes(this.cluster.log));
    app.use(dashboardRoutes(this.cluster));
    app.use(resourceApi(this.cluster));
    app.use(apiErrorHandler);
    const guard = new RequestOriginGuard({ scheme: 'http', listenHost: this.options.host, allowedHosts: this.options.allowedHosts, errorFormat: () => 'status' });
    // As every port of serve: clients that connect and say nothing do not pile up.
    this.httpServer = new ConnectionGuard().createHttpServer(guard.requests((req, res) => app(req, res)));
    guard.upgrades(this.httpServer);
    await new Promise<void>((resolve, reject) => {
      this.httpServer!.once('error', reject);
      this.httpServer!.listen(this.options.port, this.options.host, () => resolve());
    });
    const address = this.httpServer.address();
    return { port: typeof address === 'object' && address ? address.port : this.options.port };
  }

  async close(): Promise<void> {
    this.httpServer?.closeAllConnections();
    await new Promise<void>((resolve) => (this.httpServer ? this.httpServer.close(() => resolve()) : resolve()));
    this.metrics.close();
    this.cluster.close();
  }
}
