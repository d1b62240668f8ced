import { ApiError, apiErrors } from '../k8s/status.js';
import { isJsonObject, jsonEqual } from '../kinds/common.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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

interface Operation {
  op: string;
  path: string;
  value?: Json;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw apiErrors.badRequest(`invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test). */
export function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw apiErrors.badRequest('a JSON patch must be an array of operations');
  let root = clone(document) as Json;
  const parentOf = (tokens: string[]): { parent: Json; key: string } => {
    let node: Json = root;
    for (const token of tokens.slice(0, -1)) {
      const next: Json | undefined = Array.isArray(node) ? node[Number(token)] : isJsonObject(node) ? node[token] : undefined;
      if (next === undefined) throw notApplicable(`/${tokens.join('/')}`, `the path "/${tokens.join('/')}" does not exist`);
      node = next;
    }
    return { parent: node, key: tokens[tokens.length - 1]! };
  };
  const read = (tokens: string[]): Json => {
    let node: Json = root;
    for (const token of tokens) {
      const next: Json | undefined = Array.isArray(node) ? node[Number(token)] : isJsonObject(node) ? node[token] : undefined;
      if (next === undefined) throw notApplicable(`/${tokens.join('/')}`, `the path "/${tokens.join('/')}" does not exist`);
      node = next;
    }
    return node;
  };
  const remove = (tokens: string[]): Json => {
    const value = read(tokens);
    const { parent, key } = parentOf(tokens);
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else if (isJsonObject(parent)) delete (parent as Record<string, Json>)[key];
    return value;
  };
  const add = (tokens: string[], value: Json) => {
    if (tokens.length === 0) {
      root = value;
      return;
    }
    const { parent, key } = parentOf(tokens);
    if (Array.isArray(parent)) {
      const index = key === '-' ? parent.length : Number(key);
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw notApplicable(`/${tokens.join('/')}`, `invalid array index "${key}"`);
      parent.splice(index, 0, value);
    } else if (isJsonObject(parent)) (parent as Record<string, Json>)[key] = value;
    else throw notApplicable(`/${tokens.join('/')}`, `cannot add at "/${tokens.join('/')}"`);
  };
  for (const raw of operations as Operation[]) {
    if (!isJsonObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw apiErrors.badRequest('each JSON patch operation needs "op" and "path"');
    }
    const tokens = pointer(raw.path);
    switch (raw.op) {
      case 'add':
        add(tokens, clone(raw.value as Json));
        break;
      case 'remove':
        remove(tokens);
        break;
      case 'replace':
        read(tokens);
        remove(tokens);
        add(tokens, clone(raw.value as Json));
        break;
      case 'move':
        add(tokens, remove(pointer(raw.from ?? '')));
        break;
      case 'copy':
        add(tokens, clone(read(pointer(raw.from ?? ''))));
        break;
      case 'test':
        // Nothing is written: the whole patch fails with its first failing operation.
        if (!jsonEqual(read(tokens), raw.value)) throw notApplicable(raw.path, `testing value ${raw.path} failed: test failed`);
        break;
      default:
        throw apiErrors.badRequest(`unknown JSON patch operation "${raw.op}"`);
    }
  }
  return root;
}
