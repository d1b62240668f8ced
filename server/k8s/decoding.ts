import { apiErrors } from './status.js';

/**
 * What the API server's request handlers check of a body before any storage sees it
 * (k8s.io/apiserver endpoints/handlers): that it is of the kind the endpoint reads, and that it
 * names the object the URL names. Each mismatch is a 400 BadRequest with the API server's words.
 */

/**
 * The body's kind and apiVersion, as the handler's decoder reads them: absent ones are the
 * endpoint's own (the first of `apiVersions`). A kind and group version the decoder's scheme does
 * not register cannot be decoded at all; one it decodes, in a group version the endpoint does not
 * accept, is refused after. `registered` is the scheme (by default only what the endpoint accepts).
 */
export function requireBodyType(
  body: Record<string, unknown>,
  kind: string,
  apiVersions: readonly string[],
  registered: (kind: string, apiVersion: string) => boolean = (k, v) => k === kind && apiVersions.includes(v),
): void {
  const bodyKind = body.kind === undefined || body.kind === '' ? kind : String(body.kind);
  const apiVersion = body.apiVersion === undefined || body.apiVersion === '' ? apiVersions[0]! : String(body.apiVersion);
  if (!registered(bodyKind, apiVersion)) {
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    throw apiErrors.badRequest(`${bodyKind} in version "${version}" cannot be handled as a ${kind}: no kind "${bodyKind}" is registered for version "${apiVersion}"`);
  }
  if (!apiVersions.includes(apiVersion)) {
    throw apiErrors.badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${apiVersions[0]})`);
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
