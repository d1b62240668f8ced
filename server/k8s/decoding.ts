import { apiErrors } from './status.js';

/**
 * What the API server's request handlers check of a body before any storage sees it
 * (k8s.io/apiserver endpoints/handlers): that it is of the kind the endpoint reads, and that it
 * names the object the URL names. Each mismatch is a 400 BadRequest with the API server's words.
 */

/** The type an endpoint decodes a body into. */
export interface BodyType {
  kind: string;
  /** The group version of a body that names none, and the one an error names as expected. */
  apiVersion: string;
  /** The group versions the endpoint reads (only `apiVersion` when not given). */
  accepts?: (apiVersion: string) => boolean;
  /** What the decoder's scheme registers (what the endpoint accepts when not given). */
  registered?: (kind: string, apiVersion: string) => boolean;
}

/**
 * The body's kind and apiVersion, as the handler's decoder reads them: absent ones are the
 * endpoint's own. A kind and group version the decoder's scheme does not register cannot be
 * decoded at all; one it decodes, in a group version the endpoint does not accept, is refused after.
 */
export function requireBodyType(body: Record<string, unknown>, type: BodyType): void {
  const accepts = type.accepts ?? ((v: string) => v === type.apiVersion);
  const registered = type.registered ?? ((k: string, v: string) => k === type.kind && accepts(v));
  const kind = body.kind === undefined || body.kind === '' ? type.kind : String(body.kind);
  const apiVersion = body.apiVersion === undefined || body.apiVersion === '' ? type.apiVersion : String(body.apiVersion);
  if (!registered(kind, apiVersion)) {
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    throw apiErrors.badRequest(`${kind} in version "${version}" cannot be handled as a ${type.kind}: no kind "${kind}" is registered for version "${apiVersion}"`);
  }
  if (!accepts(apiVersion)) {
    throw apiErrors.badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${type.apiVersion})`);
  }
}

/**
 * The API server's checkName for an update or a patch: the object names itself as the URL does
 * (no name is a mismatch too), and a namespace it gives is the request's.
 */
export function requireNameOnUrl(metadata: unknown, name: string, namespace: string | undefined): void {
  const meta = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {};
  const objectName = meta.name === undefined || meta.name === null ? '' : String(meta.name);
  if (objectName !== name) throw apiErrors.badRequest(`the name of the object (${objectName}) does not match the name on the URL (${name})`);
  const objectNamespace = meta.namespace === undefined || meta.namespace === null ? '' : String(meta.namespace);
  if (namespace && objectNamespace && objectNamespace !== namespace) {
    throw apiErrors.badRequest(`the namespace of the object (${objectNamespace}) does not match the namespace on the request (${namespace})`);
  }
}
