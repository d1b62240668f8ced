import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response, NextFunction } from 'express';
import type { ClusterMetrics, RequestLabels } from '../../observability/cluster-metrics.js';
import type { HistogramTally, TalliedCounter, ValueTally } from '../../observability/metric-tallies.js';

/** `GET /metrics`: the Prometheus text exposition of the cluster's metrics. */
export function metricsRoute(metrics: ClusterMetrics): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    metrics.scrape().then((text) => {
      res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
      res.end(text);
    }, next);
  };
}

/**
 * Counts each resource-API request once answered (`apiserver_request_*`), as the API server's own
 * metrics do, labelled from its method and target.
 */
export class ApiRequestMetrics {
  /** Each request target's labels, parsed once (cleared when it grows past REQUEST_TARGETS). */
  private readonly requestTargets = new Map<string, RequestSeries | null>();

  constructor(private readonly metrics: ClusterMetrics) {}

  observe(req: IncomingMessage, res: ServerResponse): void {
    // Only once started, and only the resource API's paths.
    if (!this.metrics.started || !req.url?.startsWith('/api')) return;
    const series = this.requestSeries(req);
    if (!series) return;
    // One listener shared by every response (no closure per request): what it needs rides on the response.
    (res as ObservedResponse)[OBSERVED] = { series, started: performance.now() };
    res.on('finish', requestFinished);
  }

  /** A request target's series, found once per target (undefined for a path the API server does not count). */
  private requestSeries(req: IncomingMessage): RequestSeries | undefined {
    const target = req.url ?? '/';
    const method = req.method ?? 'GET';
    const key = method === 'GET' ? target : `${method} ${target}`;
    let series = this.requestTargets.get(key);
    if (series === undefined) {
      // Objects' names make targets many: the parses kept are bounded.
      if (this.requestTargets.size >= REQUEST_TARGETS) this.requestTargets.clear();
      const labels = describeRequest(method, target);
      const { total, duration } = this.metrics.apiRequests;
      series = labels ? { labels, duration: duration.series(...labels), byStatus: new Map(), total } : null;
      this.requestTargets.set(key, series);
    }
    return series ?? undefined;
  }
}

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

/** Parsed request targets kept at most. */
const REQUEST_TARGETS = 1024;

/** Status codes as label values, made once each. */
const STATUS_TEXT = new Map<number, string>();
/** A request target's label values and its series: the duration's, and the counter's per status code. */
interface RequestSeries {
  labels: RequestLabels;
  duration: HistogramTally;
  byStatus: Map<number, ValueTally>;
  total: TalliedCounter;
}

const OBSERVED = Symbol('observedRequest');
type ObservedResponse = ServerResponse & { [OBSERVED]?: { series: RequestSeries; started: number } };

/** A response observed by `ApiRequestMetrics.observe` has been sent: its request is counted and timed. */
function requestFinished(this: ServerResponse): void {
  const observed = (this as ObservedResponse)[OBSERVED];
  if (!observed) return;
  const { series, started } = observed;
  series.duration.observe((performance.now() - started) / 1000);
  let counter = series.byStatus.get(this.statusCode);
  if (counter === undefined) {
    counter = series.total.series(...series.labels, statusText(this.statusCode));
    series.byStatus.set(this.statusCode, counter);
  }
  counter.value++;
}

function statusText(code: number): string {
  let text = STATUS_TEXT.get(code);
  if (text === undefined) STATUS_TEXT.set(code, (text = String(code)));
  return text;
}

/** A resource-API request's label values (REQUEST_LABELS, server/observability/cluster-metrics.ts), as the API server's request metrics name them; undefined for other paths. */
function describeRequest(method: string, target: string): RequestLabels | undefined {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(\/.*)?$/.exec(path);
  if (!m) return undefined;
  const group = m[2] ?? '';
  const version = m[1] ?? m[3]!;
  let parts = (m[4] ?? '').split('/').filter(Boolean);
  const namespaced = parts[0] === 'namespaces' && parts.length >= 3;
  if (namespaced) parts = parts.slice(2);
  const [resource = '', name, subresource = ''] = parts;
  if (resource === '') return undefined;
  // The API server's scopes: one object, a namespace's collection, or the cluster's.
  const scope = name !== undefined ? 'resource' : namespaced ? 'namespace' : 'cluster';
  const watch = query.get('watch');
  const verb =
    method === 'GET'
      ? watch === 'true' || watch === '1'
        ? 'WATCH'
        : name === undefined
          ? 'LIST'
          : 'GET'
      : method === 'DELETE'
        ? name === undefined
          ? 'DELETECOLLECTION'
          : 'DELETE'
        : (VERBS[method] ?? method).toUpperCase();
  return ['apiserver', query.has('dryRun') ? 'All' : '', group, resource, scope, subresource, verb, version];
}
