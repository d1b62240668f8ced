import { createHash } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import Negotiator from 'negotiator';
import { ApiError, apiErrors } from '../../../k8s/status.js';
import { groupVersions } from './group-versions.js';
import type { JsonObject } from './json.js';
import { groupVersionPath } from './names.js';
import { openApiV2Document } from './v2.js';
import { encodeOpenApiV2 } from './v2-protobuf.js';
import { openApiV3Document } from './v3.js';

/**
 * The OpenAPI documents kubectl and client libraries fetch, generated from the kind definitions
 * (one source of truth: the same schemas check request bodies):
 *
 * - `GET /openapi/v3`: the index, `paths["apis/<group>/<version>"].serverRelativeURL`;
 * - `GET /openapi/v3/apis/<group>/<version>` and `/openapi/v3/api/v1`: one document per group
 *   version, with `components.schemas` named as Kubernetes names them (`dev.agones.v1.Fleet`,
 *   `io.k8s.api.core.v1.Secret`) and carrying `x-kubernetes-group-version-kind`, and the
 *   resources' paths. kubectl reads the PATCH operations: their `fieldValidation` query
 *   parameter tells it the server validates fields itself (it then sends
 *   `fieldValidation=Strict` instead of validating client-side), and their request content
 *   types tell `kubectl apply` which patch to send (no strategic merge patch here, so it sends a
 *   JSON merge patch). `kubectl explain` reads the component schemas.
 * - `GET /openapi/v2`: the same in Swagger 2.0, as JSON or, when asked for with
 *   `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (client-go always
 *   asks so), as the gnostic protobuf encoding; any other Accept is answered 406. kubectl 1.32
 *   fetches it when `apply` patches an existing object (the v3 PATCH offers no strategic merge
 *   patch, so it looks up the v2 `consumes` before falling back to a JSON merge patch), for
 *   client-side validation when the v3 PATCH has no `fieldValidation` parameter, when v3 is
 *   missing, and for `kubectl explain --output plaintext-openapiv2`. Without any OpenAPI,
 *   `kubectl apply` fails ("failed to download openapi ... turn validation off with
 *   --validate=false").
 */

/**
 * The protobuf media type, as client-go asks for it. The `@` makes it an invalid MIME type for
 * Go's mime.ParseMediaType, so the answer is labelled with the `.v1.0` spelling (which the
 * Kubernetes API server also accepts and answers with); client-go fails on a response labelled
 * with the `@` spelling ("mime: unexpected content after media subtype").
 */
export const OPENAPI_V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

interface Rendered {
  body: Buffer;
  hash: string;
}

function render(body: Buffer): Rendered {
  return { body, hash: createHash('sha256').update(body).digest('hex').toUpperCase() };
}

/** Media ranges of an Accept header, best first (RFC 9110 q-values; q=0 means "not this"). */
export function acceptedTypes(header: string | undefined): string[] {
  // An empty header accepts anything, as the API server reads it.
  return new Negotiator({ headers: { accept: header?.trim() ? header : undefined } }).mediaTypes().map((type) => type.toLowerCase());
}

/** Which v2 representation an Accept header asks for, or undefined (406). */
export function negotiateV2(header: string | undefined): 'json' | 'protobuf' | undefined {
  for (const type of acceptedTypes(header)) {
    if (type === OPENAPI_V2_PROTOBUF_ACCEPT || type === OPENAPI_V2_PROTOBUF) return 'protobuf';
    if (type === 'application/json' || type === 'application/*' || type === '*/*') return 'json';
  }
  return undefined;
}

function sendCached(req: Request, res: Response, rendered: Rendered, contentType: string): void {
  const etag = `"${rendered.hash}"`;
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept');
  const hash = typeof req.query.hash === 'string' ? req.query.hash : undefined;
  if (hash !== undefined && hash === rendered.hash) {
    // A URL naming its content never changes: the index hands out such URLs.
    res.setHeader('Cache-Control', 'public, immutable');
    res.setHeader('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
  } else {
    res.setHeader('Cache-Control', 'no-cache, private');
  }
  if (req.headers['if-none-match'] === etag) {
    res.status(304).end();
    return;
  }
  res.status(200).type(contentType).send(rendered.body);
}

/** 406, as the API server answers an Accept it cannot serve (apiErrors has no such helper). */
function notAcceptable(message: string): ApiError {
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'NotAcceptable', code: 406 });
}

function sendStatus(res: Response, error: ApiError): void {
  res.status(error.code).type('application/json').send(JSON.stringify(error.status));
}

/**
 * Routes of the OpenAPI documents. The documents do not change while the process runs, so each
 * is rendered once, on first use.
 */
export function openApiRouter(): Router {
  const router = express.Router();
  const v3 = new Map<string, Rendered>();
  let v2Json: Rendered | undefined;
  let v2Proto: Rendered | undefined;

  const v3Rendered = (group: string, version: string): Rendered | undefined => {
    const key = groupVersionPath(group, version);
    let rendered = v3.get(key);
    if (!rendered) {
      const doc = openApiV3Document(group, version);
      if (!doc) return undefined;
      rendered = render(Buffer.from(JSON.stringify(doc)));
      v3.set(key, rendered);
    }
    return rendered;
  };

  router.get('/openapi/v2', (req, res) => {
    const representation = negotiateV2(req.headers.accept);
    if (!representation) {
      return sendStatus(
        res,
        notAcceptable(`only application/json and ${OPENAPI_V2_PROTOBUF} are served, not "${req.headers.accept ?? ''}"`),
      );
    }
    if (representation === 'protobuf') {
      v2Proto ??= render(encodeOpenApiV2(openApiV2Document()));
      return sendCached(req, res, v2Proto, OPENAPI_V2_PROTOBUF);
    }
    v2Json ??= render(Buffer.from(JSON.stringify(openApiV2Document())));
    return sendCached(req, res, v2Json, 'application/json');
  });

  router.get('/openapi/v3', (_req, res) => {
    const paths: JsonObject = {};
    for (const { group, version } of groupVersions()) {
      const rendered = v3Rendered(group, version);
      if (rendered) paths[groupVersionPath(group, version)] = { serverRelativeURL: `/openapi/v3/${groupVersionPath(group, version)}?hash=${rendered.hash}` };
    }
    res.setHeader('Cache-Control', 'no-cache, private');
    res.status(200).type('application/json').send(JSON.stringify({ paths }));
  });

  const serveV3 = (req: Request, res: Response, group: string, version: string) => {
    const rendered = v3Rendered(group, version);
    if (!rendered) return sendStatus(res, apiErrors.pathNotFound());
    const hash = typeof req.query.hash === 'string' ? req.query.hash : undefined;
    if (hash !== undefined && hash !== rendered.hash) {
      // As the API server does: a stale hash is sent on to the current document.
      res.setHeader('Cache-Control', 'no-cache, private');
      return res.redirect(301, `/openapi/v3/${groupVersionPath(group, version)}?hash=${rendered.hash}`);
    }
    return sendCached(req, res, rendered, 'application/json');
  };
  router.get('/openapi/v3/api/:version', (req, res) => serveV3(req, res, '', req.params.version));
  router.get('/openapi/v3/apis/:group/:version', (req, res) => serveV3(req, res, req.params.group, req.params.version));
  return router;
}
