import { describe, expect, it } from 'vitest';
import { ApiError } from '../k8s/status.js';
import { jsonPatch } from './patch.js';

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('jsonPatch', () => {
  const doc = { spec: { replicas: 2, ports: [{ name: 'a', port: 1 }] } };

  it('applies a patch whose test holds, comparing objects by members', () => {
    const patched = jsonPatch(doc, [
      { op: 'test', path: '/spec/ports/0', value: { port: 1, name: 'a' } },
      { op: 'replace', path: '/spec/replicas', value: 3 },
    ]);
    expect(patched).toEqual({ spec: { replicas: 3, ports: [{ name: 'a', port: 1 }] } });
    expect(doc.spec.replicas).toBe(2);
  });

  it('a failing test is a 422 naming the path; a path that is not there too', () => {
    const failed = errorOf(() => jsonPatch(doc, [{ op: 'test', path: '/spec/replicas', value: 5 }]));
    expect(failed.code).toBe(422);
    expect(failed.status.reason).toBe('Invalid');
    expect(failed.status.details?.causes?.[0]?.field).toBe('/spec/replicas');
    expect(errorOf(() => jsonPatch(doc, [{ op: 'remove', path: '/spec/nothing/here' }])).code).toBe(422);
  });

  it('a patch that is not a list of operations is a 400', () => {
    expect(errorOf(() => jsonPatch(doc, { op: 'add' })).code).toBe(400);
    expect(errorOf(() => jsonPatch(doc, [{ op: 'frobnicate', path: '/spec' }])).code).toBe(400);
  });

  it('cannot reach Object.prototype through __proto__', () => {
    try {
      jsonPatch(doc, [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it('a move or copy without "from" is a 400 saying so', () => {
    const error = errorOf(() => jsonPatch(doc, [{ op: 'move', path: '/spec/moved' }]));
    expect(error.code).toBe(400);
    expect(error.message).toContain('"move" operation needs "from"');
  });
});
