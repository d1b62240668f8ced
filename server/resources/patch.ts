import { apiErrors } from '../k8s/status.js';
import { isJsonObject } from '../kinds/rules/common.js';
import { stringifyJsonExact } from '../log/json.js';

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
      if (next === undefined) throw apiErrors.badRequest(`the path "/${tokens.join('/')}" does not exist`);
      node = next;
    }
    return { parent: node, key: tokens[tokens.length - 1]! };
  };
  const read = (tokens: string[]): Json => {
    let node: Json = root;
    for (const token of tokens) {
      const next: Json | undefined = Array.isArray(node) ? node[Number(token)] : isJsonObject(node) ? node[token] : undefined;
      if (next === undefined) throw apiErrors.badRequest(`the path "/${tokens.join('/')}" does not exist`);
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
      if (!Number.isInteger(index) || index < 0 || index > parent.length) throw apiErrors.badRequest(`invalid array index "${key}"`);
      parent.splice(index, 0, value);
    } else if (isJsonObject(parent)) (parent as Record<string, Json>)[key] = value;
    else throw apiErrors.badRequest(`cannot add at "/${tokens.join('/')}"`);
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
        if (stringifyJsonExact(read(tokens)) !== stringifyJsonExact(raw.value)) {
          throw new Error(`the test operation at "${raw.path}" failed`);
        }
        break;
      default:
        throw apiErrors.badRequest(`unknown JSON patch operation "${raw.op}"`);
    }
  }
  return root;
}
