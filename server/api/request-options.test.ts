import { describe, expect, it } from 'vitest';
import { ApiError } from '../k8s/status.js';
import { checkBodyMediaType, decodeContinue, dryRunOf, encodeContinue, listOptionsOf } from './request-options.js';

function codeOf(run: () => unknown): number {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
  return 200;
}

describe('continue tokens', () => {
  it('round-trip the resourceVersion and the key after which the next page starts', () => {
    const token = { resourceVersion: 42, after: 'default/game-abcde' };
    expect(decodeContinue(encodeContinue(token))).toEqual(token);
    expect(decodeContinue(encodeContinue({ resourceVersion: -1, after: '/cluster-scoped' }))).toEqual({ resourceVersion: -1, after: '/cluster-scoped' });
  });

  it.each(['', 'x', Buffer.from('[]').toString('base64url'), Buffer.from('{"v":"meta.k8s.io/v1","rv":0,"start":"a/b\\u0000"}').toString('base64url'), Buffer.from('{"v":"meta.k8s.io/v1","rv":3,"start":"nokey"}').toString('base64url')])(
    'refuses %j with a 400',
    (text) => expect(codeOf(() => decodeContinue(text))).toBe(400),
  );
});

describe('listOptionsOf', () => {
  it('reads the parameters a list or a watch takes', () => {
    expect(listOptionsOf({ watch: '1', resourceVersion: '12', timeoutSeconds: '30' })).toMatchObject({ watch: true, resourceVersion: '12', timeoutSeconds: 30, limit: 0 });
    expect(listOptionsOf({ limit: '-3' }).limit).toBe(0);
    expect(listOptionsOf({ resourceVersion: '7', resourceVersionMatch: 'Exact' }).resourceVersionMatch).toBe('Exact');
  });

  it.each([
    [{ resourceVersion: 'abc' }, 400],
    [{ resourceVersion: '-1' }, 400],
    [{ limit: '1.5' }, 400],
    [{ watch: 'yes' }, 400],
    [{ resourceVersionMatch: 'Exact' }, 422],
    [{ resourceVersionMatch: 'exact', resourceVersion: '3' }, 422],
    [{ sendInitialEvents: 'true' }, 422],
    [{ watch: 'true', resourceVersionMatch: 'NotOlderThan' }, 422],
    [{ resourceVersion: '3', continue: encodeContinue({ resourceVersion: 3, after: 'a/b' }) }, 400],
  ])('refuses %j with %d', (query, code) => expect(codeOf(() => listOptionsOf(query))).toBe(code));
});

describe('dryRunOf', () => {
  it('empty means unset, All is a dry run, anything else a 422', () => {
    expect(dryRunOf({}, 'CreateOptions')).toBe(false);
    expect(dryRunOf({ dryRun: '' }, 'CreateOptions')).toBe(false);
    expect(dryRunOf({ dryRun: 'All' }, 'CreateOptions')).toBe(true);
    expect(codeOf(() => dryRunOf({ dryRun: 'true' }, 'CreateOptions'))).toBe(422);
  });
});

describe('checkBodyMediaType', () => {
  it.each([
    ['POST', undefined, 200],
    ['POST', 'application/json; charset=utf-8', 200],
    ['PUT', 'application/yaml', 200],
    ['POST', 'text/plain', 415],
    ['POST', 'application/x-www-form-urlencoded', 415],
    ['POST', 'application/vnd.kubernetes.protobuf', 200],
    ['PUT', 'application/vnd.kubernetes.protobuf', 200],
    ['PATCH', 'application/vnd.kubernetes.protobuf', 415],
    ['PATCH', 'application/merge-patch+json', 200],
    ['PATCH', 'application/json-patch+json', 200],
    ['PATCH', 'application/json', 415],
    ['PATCH', undefined, 415],
    ['GET', 'text/plain', 200],
  ])('%s with %s: %d', (method, contentType, code) => expect(codeOf(() => checkBodyMediaType(method, contentType))).toBe(code));

  it('refuses protobuf where the surface reads only JSON and YAML', () => {
    expect(codeOf(() => checkBodyMediaType('POST', 'application/vnd.kubernetes.protobuf', { protobuf: false }))).toBe(415);
  });
});
