import express, { type Request, type Response } from 'express';
import { apiErrors } from '../../k8s/status.js';
import type { EventLog } from '../../log/event-log.js';
import { LogExplainer, type ObjectHistory, kindByName } from '../../history/explain.js';
import { type HistoryWindow, parseTail, parseTimeBound } from '../../history/explain-window.js';
import { nextSlice } from '../../history/slices.js';
import { stringifyJsonExact } from '../../log/json.js';
import { sendError, sendJson } from '../responses.js';

/**
 * What `fleetsim explain --server` and the dashboard ask a running server:
 *
 *  - `GET /fleetsim/v1/explain/{kind}/{namespace}/{name}` (or `/{kind}/{name}` for a cluster-scoped
 *    kind): the object's history with each change's causes; kinds by any name kubectl takes;
 *    `?since=`, `?until=` (RFC 3339, or a duration before the log's end), `?tail=N` and
 *    `?summarizeOver=N` answer a window of it, as `fleetsim explain`'s flags do;
 *  - `GET /fleetsim/v1/log/{seq}/explain`: one event and its causes.
 *
 * Both read the committed log, as `fleetsim explain --db` reads the file.
 */
export function explainRoutes(log: EventLog): express.Router {
  const router = express.Router();
  // Explanations read the log, and are written, a slice at a time: other requests are answered meanwhile.
  const answer = (res: Response, work: () => Promise<unknown>) =>
    work().then(
      (body) => sendJson(res, 200, body),
      (error: unknown) => sendError(res, error),
    );
  const answerHistory = (res: Response, work: () => Promise<ObjectHistory>) =>
    work().then(
      (history) => sendHistory(res, history),
      (error: unknown) => sendError(res, error),
    );

  router.get('/fleetsim/v1/explain/:kind/:first/:second', (req: Request, res: Response) =>
    answerHistory(res, () => explainObject(log, String(req.params.kind), String(req.params.first), String(req.params.second), req.query)),
  );
  router.get('/fleetsim/v1/explain/:kind/:name', (req: Request, res: Response) =>
    answerHistory(res, () => explainObject(log, String(req.params.kind), undefined, String(req.params.name), req.query)),
  );
  router.get('/fleetsim/v1/log/:seq/explain', (req: Request, res: Response) =>
    answer(res, async () => {
      const text = String(req.params.seq);
      const seq = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(seq)) throw apiErrors.badRequest(`seq: "${text}" is not an event's sequence number (a whole number from 1)`);
      const explained = await new LogExplainer(log).explainEvent(seq);
      if (!explained) throw apiErrors.notFound('events', '', text);
      return explained;
    }),
  );
  return router;
}

/**
 * A history's JSON, as sendJson would write it, a change at a time in slices: encoding thousands of
 * changes at once would hold the event loop.
 */
async function sendHistory(res: Response, history: ObjectHistory): Promise<void> {
  res.status(200).type('application/json');
  const extra = `${history.total ? `,"total":${stringifyJsonExact(history.total)}` : ''}${history.summary ? `,"summary":${stringifyJsonExact(history.summary)}` : ''}`;
  let chunk = `{"object":${stringifyJsonExact(history.object)}${extra},"changes":[`;
  for (const [i, change] of history.changes.entries()) {
    chunk += `${i > 0 ? ',' : ''}${stringifyJsonExact(change)}`;
    if (chunk.length < 65_536) continue;
    res.write(chunk);
    chunk = '';
    await nextSlice();
    if (res.destroyed) return;
  }
  res.end(`${chunk}]}`);
}

/** A window from the query (explain-window.ts); a bad value is a 400 naming the parameter. */
function windowOf(query: Request['query']): HistoryWindow {
  const text = (key: string) => (typeof query[key] === 'string' ? query[key] : undefined);
  const [since, until, tail, summarizeOver] = ['since', 'until', 'tail', 'summarizeOver'].map(text);
  try {
    return {
      ...(since !== undefined && { since: parseTimeBound(since, 'since') }),
      ...(until !== undefined && { until: parseTimeBound(until, 'until') }),
      ...(tail !== undefined && { tail: parseTail(tail, 'tail') }),
      ...(summarizeOver !== undefined && { summarizeOver: parseTail(summarizeOver, 'summarizeOver') }),
    };
  } catch (error) {
    throw apiErrors.badRequest((error as Error).message);
  }
}

async function explainObject(log: EventLog, kindName: string, namespace: string | undefined, name: string, query: Request['query']): Promise<ObjectHistory> {
  const kind = kindByName(kindName);
  if (!kind) throw apiErrors.badRequest(`kind: the server doesn't have a resource type "${kindName}"`);
  if (kind.namespaced && namespace === undefined) throw apiErrors.badRequest(`${kind.kind} is namespaced: ask for /fleetsim/v1/explain/${kindName}/{namespace}/${name}`);
  if (!kind.namespaced && namespace !== undefined) throw apiErrors.badRequest(`${kind.kind} is cluster-scoped: ask for /fleetsim/v1/explain/${kindName}/${name}`);
  return new LogExplainer(log).explainObject(kind.kind, namespace ?? '', name, windowOf(query));
}
