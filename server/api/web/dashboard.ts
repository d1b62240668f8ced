import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import express, { type Request, type Response } from 'express';
import { apiErrors } from '../../k8s/status.js';
import { FLEET_KIND } from '../../kinds/fleet/fleet.js';
import { FLEETAUTOSCALER_KIND } from '../../kinds/fleetautoscaler/fleetautoscaler.js';
import { GAMESERVER_STATES } from '../../kinds/gameserver-types.js';
import { GAMESERVERSET_KIND } from '../../kinds/gameserverset/gameserverset.js';
import { NODE_DEFINITION } from '../../kinds/node/definition.js';
import type { ReadModel } from '../../runtime/read-model.js';
import type { Store } from '../../runtime/store.js';
import { Timeline } from '../../runtime/timeline.js';
import { type ClusterInput, type ClusterSummary, summarize } from '../../../dashboard/summary.js';
import { echartsBrowserBundlePath } from '../../../reports/charts/browser-bundle.js';
import { type Query, queryText } from '../request-options.js';
import { sendError, sendJson } from '../responses.js';

/**
 * The dashboard: its page at `/` (for a client that asks for HTML; any other client gets what the
 * API server answers there), its assets under `/dashboard/`, and the two reads it needs beyond the
 * resource API — the event log a page at a time, and the cluster as it was after any event.
 */

/** The repository (or installed package) root: where dashboard/, dist/ and node_modules/ are. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('fleetsim: no package.json above the dashboard module');
    dir = parent;
  }
  return dir;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** The page's files, by URL: the page and its style from the sources, its scripts as built, ECharts from its package. */
function assetFiles(): Map<string, string> {
  const root = packageRoot();
  const built = join(root, 'dist', 'dashboard');
  const files = new Map<string, string>([
    ['/', join(root, 'dashboard', 'index.html')],
    ['/dashboard/', join(root, 'dashboard', 'index.html')],
    ['/dashboard/dashboard.css', join(root, 'dashboard', 'dashboard.css')],
    ['/dashboard/echarts.min.js', echartsBrowserBundlePath()],
  ]);
  for (const name of ['app', 'dom', 'summary', 'charts', 'watch', 'metrics', 'format']) {
    files.set(`/dashboard/${name}.js`, join(built, `${name}.js`));
  }
  return files;
}

/**
 * What the page may load and run: its own files only. No inline script runs, so a value that
 * slipped into the page as markup could not run either; no plugin, no <base>, no form posts, no
 * framing by another page. ECharts's tooltips are markup with inline styles, hence style-src's
 * 'unsafe-inline'; the page's icon is a data: URL.
 */
const DASHBOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every file of the page: its policy, and no guessing a type other than the one sent. */
function setAssetHeaders(res: Response, type: string): void {
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Security-Policy', DASHBOARD_CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Revalidated each time (no ETag here): a rebuilt page is never served stale.
  res.setHeader('Cache-Control', 'no-cache');
}

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
  /** The file's modification time when read: a rebuilt file is read again. */
  mtimeMs: number;
}

/** The page's own paths: it is sent with the cluster as it is now, for its first paint. */
const PAGE_PATHS = new Set(['/', '/dashboard/']);

/**
 * The element of index.html that carries the cluster as the page was served: a JSON data block (not
 * run, so the policy's script-src allows it), which the page draws before any request of its own.
 */
const SERVED_STATE = '<script id="served-state" type="application/json">null</script>';

/** `state` as a JSON data block's text: no `<` in it, so nothing in a name can end the element. */
function dataBlock(state: unknown): string {
  return `<script id="served-state" type="application/json">${JSON.stringify(state).replace(/</g, '\\u003c')}</script>`;
}

/**
 * Serves the assets from memory, gzipped for a client that takes it; a file is read again only when
 * it changed. The page itself is sent with `state()`, the cluster as it is now, written into it.
 */
function assets(state: () => Promise<unknown>): express.RequestHandler {
  const files = assetFiles();
  const loaded = new Map<string, Asset>();
  return async (req, res, next) => {
    const file = files.get(req.path);
    if (!file || (req.path === '/' && !wantsHtml(req))) return next();
    const mtimeMs = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
    if (mtimeMs === undefined) return sendError(res, apiErrors.notFound('dashboard', '', `${req.path} (run npm run build)`));
    let asset = loaded.get(req.path);
    if (asset?.mtimeMs !== mtimeMs) {
      const body = readFileSync(file);
      asset = { type: CONTENT_TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', body, gzipped: gzipSync(body), mtimeMs };
      loaded.set(req.path, asset);
    }
    let { body, gzipped } = asset;
    if (PAGE_PATHS.has(req.path)) {
      try {
        body = Buffer.from(body.toString('utf8').replace(SERVED_STATE, dataBlock(await state())));
      } catch (error) {
        return sendError(res, error);
      }
      gzipped = gzipSync(body);
    }
    setAssetHeaders(res, asset.type);
    res.setHeader('Vary', 'Accept, Accept-Encoding');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.setHeader('Content-Encoding', 'gzip');
      res.end(gzipped);
    } else res.end(body);
  };
}

/** A browser navigating to `/`; kubectl and client libraries ask for JSON. */
function wantsHtml(req: Request): boolean {
  return /\btext\/html\b/.test(String(req.headers.accept ?? ''));
}

/** Most log events one page holds. */
export const LOG_PAGE_MAX = 1000;

/** An optional non-negative integer query parameter, given at most once; a clear 400 otherwise. */
function integerParameter(query: Query, name: string, range: { min: number; max: number }): number | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw apiErrors.badRequest(`${name}: give it once, not ${value.length} times`);
  const text = queryText(query, name);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw apiErrors.badRequest(`${name}: "${text}" is not a whole number`);
  const n = Number(text);
  if (n < range.min || n > range.max) throw apiErrors.badRequest(`${name}: ${n} is outside ${range.min}..${range.max}`);
  return n;
}

function textParameter(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw apiErrors.badRequest(`${name}: give it once, not ${value.length} times`);
  const text = queryText(query, name);
  if (text === '') throw apiErrors.badRequest(`${name}: must not be empty`);
  return text;
}

const iso = (time: number | undefined) => (time === undefined ? null : new Date(time).toISOString());

/** The objects the summary counts, as the resource API serves them (sets and fleets with their status). */
function clusterInput(model: ReadModel): ClusterInput {
  return {
    gameServers: model.gameServers.values(),
    fleets: model.list(FLEET_KIND),
    gameServerSets: model.list(GAMESERVERSET_KIND),
    nodes: model.list(NODE_DEFINITION.kind),
    autoscalers: model.list(FLEETAUTOSCALER_KIND),
  } as ClusterInput;
}

/** `GET /fleetsim/v1/state`'s answer: the summary of the cluster right after event `seq`. */
function clusterState(state: { seq: number; time: number | undefined; live: boolean; summary: ClusterSummary }) {
  return { kind: 'ClusterState', apiVersion: 'fleetsim/v1', ...state, time: iso(state.time) };
}

export function dashboardRoutes(store: Store): express.Router {
  const router = express.Router();
  const timeline = new Timeline(store);
  /** The cluster now (committed state). */
  const liveState = () =>
    store.readCommitted(() => clusterState({ seq: store.readModel.lastSeq, time: store.log.bounds()?.last.time, live: true, summary: summarize(clusterInput(store.readModel)) }));
  router.use(assets(liveState));
  router.get('/dashboard/states.js', (_req: Request, res: Response) => {
    setAssetHeaders(res, CONTENT_TYPES['.js']!);
    res.end(`export const GAMESERVER_STATES = ${JSON.stringify(GAMESERVER_STATES)};\n`);
  });

  /**
   * `GET /fleetsim/v1/log`: committed events' headers in sequence order — the newest `limit`, or
   * the `limit` before `beforeSeq`, or from `fromSeq` on — and the first and last event of the log.
   */
  router.get('/fleetsim/v1/log', (req: Request, res: Response) => {
    try {
      const query = req.query as Query;
      const limit = integerParameter(query, 'limit', { min: 1, max: LOG_PAGE_MAX }) ?? 100;
      const fromSeq = integerParameter(query, 'fromSeq', { min: 1, max: Number.MAX_SAFE_INTEGER });
      const beforeSeq = integerParameter(query, 'beforeSeq', { min: 1, max: Number.MAX_SAFE_INTEGER });
      const kind = textParameter(query, 'kind');
      if (fromSeq !== undefined && beforeSeq !== undefined) throw apiErrors.badRequest('fromSeq, beforeSeq: give one or the other, not both');
      const bounds = store.log.bounds();
      const items = store.log.headers({ limit, fromSeq, beforeSeq, kind }).map((h) => ({ ...h, time: iso(h.time) }));
      const end = (point: { seq: number; time: number } | undefined) => (point ? { seq: point.seq, time: iso(point.time) } : null);
      sendJson(res, 200, { kind: 'EventLogPage', apiVersion: 'fleetsim/v1', first: end(bounds?.first), last: end(bounds?.last), items });
    } catch (error) {
      sendError(res, error);
    }
  });

  /**
   * `GET /fleetsim/v1/state?seq=N`: the dashboard's summary of the cluster right after event N,
   * replayed from the log; without `seq`, of the cluster now (committed state).
   */
  router.get('/fleetsim/v1/state', async (req: Request, res: Response) => {
    try {
      const seq = integerParameter(req.query as Query, 'seq', { min: 0, max: store.log.bounds()?.last.seq ?? 0 });
      if (seq === undefined) return sendJson(res, 200, await liveState());
      const past = await timeline.at(seq);
      sendJson(res, 200, clusterState({ seq: past.seq, time: past.time, live: false, summary: summarize(clusterInput(past.model)) }));
    } catch (error) {
      sendError(res, error);
    }
  });
  return router;
}
