import { ApiError, apiErrors } from '../k8s/status.js';
import { apply } from 'rfc6902/patch.js';
import { Pointer } from 'rfc6902/pointer.js';
import type { Operation } from 'rfc6902/diff.js';
import { isJsonObject, jsonEqual } from '../kinds/common.js';
import type { Resource } from '../kinds/resource.js';
import { tooDeeplyNested } from '../k8s/nesting.js';

/** RFC 7386 JSON merge patch: objects merge, `null` removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const result: Record<string, unknown> = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * A patch that is well formed but cannot be applied (a path that is not there, a failing `test`):
 * the API server's 422, with what went wrong as the cause.
 */
function notApplicable(path: string, detail: string): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `the server rejected our request due to an error in our request: ${detail}`,
    reason: 'Invalid',
    details: { causes: [{ reason: 'FieldValueInvalid', message: detail, field: path }] },
    code: 422,
  });
}

const missing = (path: string) => notApplicable(path, `the path "${path}" does not exist`);

const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);
/** An array index as RFC 6901 writes it. */
const INDEX = /^(0|[1-9][0-9]*)$/;
const isPointer = (path: unknown): path is string => typeof path === 'string' && (path === '' || path.startsWith('/'));

/**
 * RFC 6902 JSON patch, applied by rfc6902 to a copy of the document; the first operation that
 * fails fails the whole patch, as the API server's (evanphx/json-patch) does. `test` compares with
 * jsonEqual: rfc6902's diff of arrays is quadratic in their length.
 */
export function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw apiErrors.badRequest('a JSON patch must be an array of operations');
  const root = structuredClone(document);
  for (const operation of operations as unknown[]) {
    if (!isJsonObject(operation) || typeof operation.op !== 'string' || typeof operation.path !== 'string') {
      throw apiErrors.badRequest('each JSON patch operation needs "op" and "path"');
    }
    const { op, path, from } = operation;
    if (!OPERATIONS.has(op)) throw apiErrors.badRequest(`unknown JSON patch operation "${op}"`);
    if (!isPointer(path)) throw apiErrors.badRequest(`invalid JSON pointer "${path}"`);
    if ((op === 'move' || op === 'copy') && !isPointer(from)) {
      throw apiErrors.badRequest(typeof from === 'string' ? `invalid JSON pointer "${from}"` : `a JSON patch "${op}" operation needs "from"`);
    }
    const target = Pointer.fromJSON(path).evaluate(root);
    if (op === 'test') {
      if (!jsonEqual(target.value, operation.value)) throw notApplicable(path, `testing value ${path} failed: test failed`);
      continue;
    }
    // rfc6902 replaces a non-index member of an array (`-`, `x`) that the API server says is missing.
    if (op === 'replace' && Array.isArray(target.parent) && !(INDEX.test(target.key) && Number(target.key) < target.parent.length)) throw missing(path);
    let error: ReturnType<typeof apply>;
    try {
      error = apply(root, operation as unknown as Operation);
    } catch {
      // Adding inside a string or a number: the API server's "missing path" too.
      throw missing(path);
    }
    // rfc6902's errors, compiled to ES5, fail instanceof: a MissingError is the one with a path.
    if (error && 'path' in error) throw missing(error.path);
    // Its other refusal: an add or a replace without a value.
    if (error) throw apiErrors.badRequest(`a JSON patch "${op}" operation needs "value"`);
  }
  return root;
}

/** A PATCH body applied to `current` as its content type says: merge, strategic merge or JSON patch. */
export function patchObject(current: Resource, patch: unknown, contentType: string): Record<string, unknown> {
  const type = contentType.split(';')[0]!.trim();
  let result: unknown;
  // Built-in kinds take strategic merge patches (kubectl always sends one for them); for the
  // fields fleetsim stores of those kinds (maps, scalars) it is a merge patch without directives.
  const builtIn = !current.apiVersion.includes('/');
  if (type === 'application/merge-patch+json') result = mergePatch(current, patch);
  else if (type === 'application/strategic-merge-patch+json' && builtIn) result = mergePatch(current, withoutDirectives(patch));
  else if (type === 'application/json-patch+json') result = jsonPatch(current, patch);
  else throw apiErrors.unsupportedMediaType(type);
  if (!isJsonObject(result)) throw apiErrors.badRequest('the patch did not produce an object');
  // A JSON patch can graft deep values onto deep paths: the result is capped as bodies are.
  const tooDeep = tooDeeplyNested(result);
  if (tooDeep) throw apiErrors.badRequest(`the patched object ${tooDeep}`);
  return result;
}

/** Drops strategic-merge-patch directives (`$patch`, `$retainKeys`, …). */
function withoutDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(withoutDirectives);
  if (!isJsonObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) if (!key.startsWith('$')) out[key] = withoutDirectives(value);
  return out;
}
