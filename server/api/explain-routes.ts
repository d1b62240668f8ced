import express, { type Request, type Response } from 'express';
import { apiErrors } from '../k8s/status.js';
import type { EventLog } from '../log/event-log.js';
import { LogExplainer, kindByName } from '../history/explain.js';
import { sendError, sendJson } from './responses.js';

/**
 * What `fleetsim explain --server` and the dashboard ask a running server:
 *
 *  - `GET /fleetsim/v1/explain/{kind}/{namespace}/{name}` (or `/{kind}/{name}` for a cluster-scoped
 *    kind): the object's history with each change's causes; kinds by any name kubectl takes;
 *  - `GET /fleetsim/v1/log/{seq}/explain`: one event and its causes.
 *
 * Both read the committed log, as `fleetsim explain --db` reads the file.
 */
export function explainRoutes(log: EventLog): express.Router {
  const router = express.Router();
  const answer = (res: Response, work: () => unknown) => {
    try {
      sendJson(res, 200, work());
    } catch (error) {
      sendError(res, error);
    }
  };

  router.get('/fleetsim/v1/explain/:kind/:first/:second', (req: Request, res: Response) =>
    answer(res, () => explainObject(log, String(req.params.kind), String(req.params.first), String(req.params.second))),
  );
  router.get('/fleetsim/v1/explain/:kind/:name', (req: Request, res: Response) =>
    answer(res, () => explainObject(log, String(req.params.kind), undefined, String(req.params.name))),
  );
  router.get('/fleetsim/v1/log/:seq/explain', (req: Request, res: Response) =>
    answer(res, () => {
      const text = String(req.params.seq);
      const seq = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(seq)) throw apiErrors.badRequest(`seq: "${text}" is not an event's sequence number (a whole number from 1)`);
      const explained = new LogExplainer(log).explainEvent(seq);
      if (!explained) throw apiErrors.notFound('events', '', text);
      return explained;
    }),
  );
  return router;
}

function explainObject(log: EventLog, kindName: string, namespace: string | undefined, name: string) {
  const kind = kindByName(kindName);
  if (!kind) throw apiErrors.badRequest(`kind: the server doesn't have a resource type "${kindName}"`);
  if (kind.namespaced && namespace === undefined) throw apiErrors.badRequest(`${kind.kind} is namespaced: ask for /fleetsim/v1/explain/${kindName}/{namespace}/${name}`);
  if (!kind.namespaced && namespace !== undefined) throw apiErrors.badRequest(`${kind.kind} is cluster-scoped: ask for /fleetsim/v1/explain/${kindName}/${name}`);
  return new LogExplainer(log).explainObject(kind.kind, namespace ?? '', name);
}
