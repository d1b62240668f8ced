import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SidecarProcess, killAll, runCli, startSidecar } from './helpers/process.js';
import { type GameServerJson, call, getGameServer } from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';

/**
 * Bad input against a real sidecar process (both gates on): each request must get Agones's
 * status and error body (agones-sidecar.md §3.3-§3.5) and change nothing. Then durability: a
 * sidecar on a SQLite file is killed with SIGKILL and restarted, and `fleetsim replay` reads the
 * same file.
 */

const GATES = 'CountsAndLists=true&PlayerTracking=true';
const MIB = 1024 * 1024;

/** `{"code":C,"message":M,"details":[]}` with M exact or matched. */
function rpcError(code: number, message: string | RegExp) {
  return {
    code,
    message: typeof message === 'string' ? message : expect.stringMatching(message),
    details: [],
  };
}

const NOT_FOUND = { code: 5, message: 'Not Found', details: [] };
const METHOD_NOT_ALLOWED = { code: 12, message: 'Method Not Allowed', details: [] };

interface BadRequest {
  name: string;
  method: string;
  path: string;
  /** Undefined: no body at all. */
  body?: string;
  status: number;
  /** The decoded JSON body; `null` means the body must be empty. */
  expected: unknown;
}

const manyValues = JSON.stringify({ values: Array.from({ length: 1001 }, (_, i) => `v${i}`) });
const overMiB = JSON.stringify({ key: 'big', value: 'x'.repeat(MIB) });

const CASES: BadRequest[] = [
  // -- bodies the gateway cannot decode: 400 / INVALID_ARGUMENT
  { name: 'malformed JSON', method: 'POST', path: '/reserve', body: '{"seconds":', status: 400, expected: rpcError(3, /\S/) },
  {
    name: 'int64 field given a non-number string',
    method: 'POST',
    path: '/reserve',
    body: '{"seconds":"abc"}',
    status: 400,
    expected: rpcError(3, /\bseconds\b/),
  },
  {
    name: 'int64 field given a fraction',
    method: 'POST',
    path: '/reserve',
    body: '{"seconds":1.5}',
    status: 400,
    expected: rpcError(3, /\bseconds\b/),
  },
  {
    name: 'int64 overflow',
    method: 'POST',
    path: '/reserve',
    body: '{"seconds":"99999999999999999999"}',
    status: 400,
    expected: rpcError(3, /\bseconds\b/),
  },
  {
    name: 'string field given a number',
    method: 'PUT',
    path: '/metadata/label',
    body: '{"key":1,"value":"x"}',
    status: 400,
    expected: rpcError(3, /\bkey\b/),
  },
  {
    name: 'repeated string field given a string',
    method: 'PATCH',
    path: '/v1beta1/lists/players',
    body: '{"values":"test9"}',
    status: 400,
    expected: rpcError(3, /\bvalues\b/),
  },
  { name: 'a JSON array for a message', method: 'POST', path: '/reserve', body: '[]', status: 400, expected: rpcError(3, /\S/) },
  { name: 'malformed health stream', method: 'POST', path: '/health', body: '{"x":', status: 400, expected: rpcError(3, /\S/) },
  // -- lifecycle bodies are decoded as agones.dev.sdk.Empty before anything happens
  ...['/ready', '/allocate', '/shutdown'].flatMap((path) =>
    ['{"x":', '{', '[]', 'null', '123', '"x"', '{}]'].map((body) => ({
      name: `${path} with the body ${body}`,
      method: 'POST',
      path,
      body,
      status: 400,
      expected: rpcError(3, /\S/),
    })),
  ),
  ...['[]', 'null', '123', '"x"', '{}[]', '{} 1'].map((body) => ({
    name: `a health stream holding ${body}`,
    method: 'POST',
    path: '/health',
    body,
    status: 400,
    expected: rpcError(3, /\S/),
  })),
  { name: 'a null Duration', method: 'POST', path: '/reserve', body: 'null', status: 400, expected: rpcError(3, /\S/) },
  { name: 'a null KeyValue', method: 'PUT', path: '/metadata/label', body: 'null', status: 400, expected: rpcError(3, /\S/) },
  {
    name: 'a label value nested 5,000 levels deep',
    method: 'PUT',
    path: '/metadata/label',
    body: `{"key":"a","value":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    status: 400,
    expected: rpcError(3, /levels deep \(at value\.a/),
  },
  {
    name: 'an annotation value that is an object',
    method: 'PUT',
    path: '/metadata/annotation',
    body: '{"key":"a","value":{"b":{"c":"d"}}}',
    status: 400,
    expected: rpcError(3, /\bvalue\b/),
  },
  {
    name: 'UpdateList body with an unknown field (body-derived mask)',
    method: 'PATCH',
    path: '/v1beta1/lists/players',
    body: '{"foo":1}',
    status: 400,
    expected: rpcError(3, 'could not find field "foo" in "agones.dev.sdk.beta.List"'),
  },

  // -- unknown counters and lists: 500 / UNKNOWN with Agones's texts
  { name: 'GetCounter of an unknown key', method: 'GET', path: '/v1beta1/counters/nope', status: 500, expected: rpcError(2, 'counter not found: nope') },
  {
    name: 'UpdateCounter of an unknown key',
    method: 'PATCH',
    path: '/v1beta1/counters/nope',
    body: '{"countDiff":"1"}',
    status: 500,
    expected: rpcError(2, 'counter not found: nope'),
  },
  { name: 'GetList of an unknown key', method: 'GET', path: '/v1beta1/lists/nope', status: 500, expected: rpcError(2, 'list not found: nope') },
  {
    name: 'AddListValue to an unknown key',
    method: 'POST',
    path: '/v1beta1/lists/nope:addValue',
    body: '{"value":"x"}',
    status: 500,
    expected: rpcError(2, 'list not found: nope'),
  },
  {
    name: 'RemoveListValue from an unknown key',
    method: 'POST',
    path: '/v1beta1/lists/nope:removeValue',
    body: '{"value":"x"}',
    status: 500,
    expected: rpcError(2, 'list not found: nope'),
  },
  {
    name: 'UpdateList of an unknown key (local server text; the real one crashes)',
    method: 'PATCH',
    path: '/v1beta1/lists/nope',
    body: '{"capacity":"5"}',
    status: 500,
    expected: rpcError(2, 'not found. nope List not found'),
  },
  {
    name: 'GET on a custom verb reads a list named "players:addValue"',
    method: 'GET',
    path: '/v1beta1/lists/players:addValue',
    status: 500,
    expected: rpcError(2, 'list not found: players:addValue'),
  },

  // -- out of range
  {
    name: 'list capacity over 1000',
    method: 'PATCH',
    path: '/v1beta1/lists/players',
    body: '{"capacity":"1001"}',
    status: 500,
    expected: rpcError(2, 'out of range. Capacity must be within range [0,1000]. Found Capacity: 1001'),
  },
  {
    name: 'negative list capacity',
    method: 'PATCH',
    path: '/v1beta1/lists/players',
    body: '{"capacity":"-1"}',
    status: 500,
    expected: rpcError(2, 'out of range. Capacity must be within range [0,1000]. Found Capacity: -1'),
  },
  {
    name: 'more than 1000 values in a list PATCH',
    method: 'PATCH',
    path: '/v1beta1/lists/players',
    body: manyValues,
    status: 500,
    expected: rpcError(2, /^out of range\./),
  },
  {
    name: 'UpdateList with a bad mask path',
    method: 'PATCH',
    path: '/v1beta1/lists/players?update_mask=bogus',
    body: '{}',
    status: 500,
    expected: rpcError(2, /^invalid argument\. Field Mask Path\(s\): \[bogus\] are invalid for List\./),
  },
  // -- a list update with no fields to change: the query mask "" is the path "", refused as Agones refuses it
  ...['/v1beta1', '/v1alpha1'].flatMap((prefix) =>
    ['update_mask=', 'updateMask=', 'update_mask=,', 'update_mask=capacity,'].map((query) => ({
      name: `UpdateList at ${prefix} with ${query}`,
      method: 'PATCH',
      path: `${prefix}/lists/players?${query}`,
      body: '{"capacity":"5","values":["x"]}',
      status: 500,
      expected: rpcError(2, /^invalid argument\. Field Mask Path\(s\): \[[^\]]*\] are invalid for List\./),
    })),
  ),
  // -- a list PATCH of {} with no query mask: the gateway takes the empty object for a leaf, so the
  //    mask it derives is the path "" (printed [] by Go), which UpdateList refuses
  ...['/v1beta1', '/v1alpha1'].map((prefix) => ({
    name: `UpdateList at ${prefix} with the body {}`,
    method: 'PATCH',
    path: `${prefix}/lists/players`,
    body: '{}',
    status: 500,
    expected: rpcError(2, /^invalid argument\. Field Mask Path\(s\): \[\] are invalid for List\./),
  })),
  {
    name: 'UpdateCounter with the body {} (nothing to change)',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{}',
    status: 500,
    expected: rpcError(2, 'invalid argument. Malformed CounterUpdateRequest: name:"rooms"'),
  },
  {
    name: 'AddListValue of a value already present',
    method: 'POST',
    path: '/v1beta1/lists/players:addValue',
    body: '{"value":"test0"}',
    status: 500,
    expected: rpcError(2, 'already exists. Value: test0 already in List: players'),
  },
  {
    name: 'RemoveListValue of an absent value',
    method: 'POST',
    path: '/v1beta1/lists/players:removeValue',
    body: '{"value":"nope"}',
    status: 500,
    expected: rpcError(2, /^not found[.:] /),
  },
  {
    name: 'counter count above capacity',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"count":"11"}',
    status: 500,
    expected: rpcError(2, 'out of range. Count must be within range [0,Capacity]. Found Count: 11, Capacity: 10'),
  },
  {
    name: 'negative counter count',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"count":"-1"}',
    status: 500,
    expected: rpcError(2, 'out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: 10'),
  },
  {
    name: 'countDiff below zero',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"countDiff":"-2"}',
    status: 500,
    expected: rpcError(2, 'out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: 10'),
  },
  {
    name: 'countDiff above capacity',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"countDiff":10}',
    status: 500,
    expected: rpcError(2, 'out of range. Count must be within range [0,Capacity]. Found Count: 11, Capacity: 10'),
  },
  {
    name: 'a count above the new capacity rejects the capacity too',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"capacity":"5","count":"6"}',
    status: 500,
    expected: rpcError(2, 'out of range. Count must be within range [0,Capacity]. Found Count: 6, Capacity: 5'),
  },
  {
    name: 'negative counter capacity',
    method: 'PATCH',
    path: '/v1beta1/counters/rooms',
    body: '{"capacity":"-1"}',
    status: 500,
    expected: rpcError(2, 'out of range. Capacity must be greater than or equal to 0. Found Capacity: -1'),
  },
  {
    name: 'player connect at capacity 0',
    method: 'POST',
    path: '/alpha/player/connect',
    body: '{"playerID":"p1"}',
    status: 500,
    expected: rpcError(2, /^[Pp]layers are already at capacity$/),
  },

  // -- label and annotation validation: 400 / INVALID_ARGUMENT
  {
    name: 'label key with a space',
    method: 'PUT',
    path: '/metadata/label',
    body: '{"key":"bad key!","value":"x"}',
    status: 400,
    expected: rpcError(3, /^invalid label key "bad key!": name part must consist of alphanumeric characters/),
  },
  {
    name: 'empty label key',
    method: 'PUT',
    path: '/metadata/label',
    body: '{"key":"","value":"x"}',
    status: 400,
    expected: rpcError(3, /^invalid label key "": name part must be non-empty/),
  },
  {
    name: 'label key of 64 characters',
    method: 'PUT',
    path: '/metadata/label',
    body: JSON.stringify({ key: 'a'.repeat(64), value: 'x' }),
    status: 400,
    expected: rpcError(3, /^invalid label key "a{64}": name part must be no more than 63 characters/),
  },
  {
    name: 'label key with two slashes',
    method: 'PUT',
    path: '/metadata/label',
    body: '{"key":"a/b/c","value":"x"}',
    status: 400,
    expected: rpcError(3, /^invalid label key "a\/b\/c": /),
  },
  {
    name: 'label value with a space',
    method: 'PUT',
    path: '/metadata/label',
    body: '{"key":"ok","value":"bad value!"}',
    status: 400,
    expected: rpcError(3, /^invalid label value "bad value!" for key "ok": a valid label must be an empty string or consist/),
  },
  {
    name: 'label value of 64 characters',
    method: 'PUT',
    path: '/metadata/label',
    body: JSON.stringify({ key: 'ok', value: 'v'.repeat(64) }),
    status: 400,
    expected: rpcError(3, /^invalid label value "v{64}" for key "ok": must be no more than 63 characters/),
  },
  {
    name: 'annotation key with a space',
    method: 'PUT',
    path: '/metadata/annotation',
    body: '{"key":"bad key!","value":"x"}',
    status: 400,
    expected: rpcError(3, /^invalid annotation key "bad key!": /),
  },
  {
    name: 'annotation key of 64 characters',
    method: 'PUT',
    path: '/metadata/annotation',
    body: JSON.stringify({ key: 'a'.repeat(64), value: 'x' }),
    status: 400,
    expected: rpcError(3, /^invalid annotation key "a{64}": /),
  },

  // -- size, routing and the /health special case
  {
    name: 'a body over 1 MiB',
    method: 'PUT',
    path: '/metadata/label',
    body: overMiB,
    status: 413,
    expected: { code: expect.any(Number), message: expect.stringMatching(/\S/), details: [] },
  },
  { name: 'unknown route', method: 'GET', path: '/nope', status: 404, expected: NOT_FOUND },
  { name: 'the root', method: 'GET', path: '/', status: 404, expected: NOT_FOUND },
  { name: 'a missing path parameter', method: 'GET', path: '/v1beta1/counters', status: 404, expected: NOT_FOUND },
  { name: 'an extra path segment', method: 'GET', path: '/v1beta1/counters/rooms/x', status: 404, expected: NOT_FOUND },
  { name: 'an unknown prefix', method: 'POST', path: '/v2/ready', body: '{}', status: 404, expected: NOT_FOUND },
  { name: 'a trailing slash', method: 'POST', path: '/ready/', body: '{}', status: 404, expected: NOT_FOUND },
  { name: 'a trailing slash on a GET route', method: 'GET', path: '/gameserver/', status: 404, expected: NOT_FOUND },
  { name: 'GET /ready', method: 'GET', path: '/ready', status: 501, expected: METHOD_NOT_ALLOWED },
  // The gateway routes the unescaped path: an escaped "/" splits segments, a bad escape is refused.
  { name: 'an escaped slash in a path parameter', method: 'GET', path: '/v1beta1/counters/rooms%2Fx', status: 404, expected: NOT_FOUND },
  { name: 'an escaped route', method: 'GET', path: '/%72eady', status: 501, expected: METHOD_NOT_ALLOWED },
  {
    name: 'a bad escape in the path',
    method: 'GET',
    path: '/v1beta1/counters/%zz',
    status: 400,
    expected: { code: 3, message: 'invalid URL escape in path "/v1beta1/counters/%zz"', details: [] },
  },
  { name: 'POST on a list without a verb', method: 'POST', path: '/v1beta1/lists/players', body: '{}', status: 501, expected: METHOD_NOT_ALLOWED },
  { name: 'DELETE /gameserver', method: 'DELETE', path: '/gameserver', status: 501, expected: METHOD_NOT_ALLOWED },
  { name: 'PUT on a counter', method: 'PUT', path: '/v1beta1/counters/rooms', body: '{"count":"2"}', status: 501, expected: METHOD_NOT_ALLOWED },
  { name: 'POST /shutdown spelled as GET', method: 'GET', path: '/shutdown', status: 501, expected: METHOD_NOT_ALLOWED },
  { name: 'POST /health with no body', method: 'POST', path: '/health', status: 400, expected: null },
];

describe('bad input: Agones status and body, and nothing changes', () => {
  let sidecar: SidecarProcess;
  let base: string;

  beforeAll(async () => {
    sidecar = await startSidecar(['--db', ':memory:', '--feature-gates', GATES]);
    base = sidecar.baseUrl;
  });

  afterAll(async () => {
    if (sidecar && !sidecar.process.exitStatus) {
      const status = await sidecar.process.kill('SIGTERM');
      expect(status, sidecar.process.describe()).toEqual({ code: 0, signal: null });
    }
    await killAll();
  });

  it.each(CASES)('$name: $method $path -> $status', async (c) => {
    const before = await getGameServer(base);
    const res = await call(base, c.method, c.path, c.body);
    const what = `${c.method} ${c.path} -> ${res.status} ${res.text.slice(0, 300)}`;
    expect(res.status, what).toBe(c.status);
    if (c.expected === null) {
      expect(res.text, what).toBe('');
    } else {
      expect(res.contentType, what).toMatch(/^application\/json\b/);
      expect(res.json, what).toEqual(c.expected);
    }
    const after = await getGameServer(base);
    expect(after, `${c.name} changed the GameServer`).toEqual(before);
  });

  it('a chunked body over 1 MiB (no Content-Length) is refused with 413 too', async () => {
    const before = await getGameServer(base);
    const bytes = new TextEncoder().encode(overMiB);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${base}/metadata/label`, { method: 'PUT', body, duplex: 'half' } as RequestInit);
    const text = await response.text();
    expect(response.status, text).toBe(413);
    expect(JSON.parse(text)).toEqual({ code: expect.any(Number), message: expect.stringMatching(/\S/), details: [] });
    expect(await getGameServer(base)).toEqual(before);
  });

  it('lifecycle calls take {} sent as a form (curl -d), an empty body, and unknown fields', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const health = await call(base, 'POST', '/health', '{}', form);
    expect(health.status, health.text).toBe(200);
    expect(health.json).toEqual({});
    const pings = await call(base, 'POST', '/health', '{}{"x":1} {}');
    expect(pings.status, pings.text).toBe(200);
    // Reserve with no body at all is Reserve(0); Ready with {} as a form, then with an empty body.
    const ready = await call(base, 'POST', '/ready', '{}', form);
    expect(ready.status, ready.text).toBe(200);
    expect(ready.json).toEqual({});
    await waitFor(async () => (await getGameServer(base)).status.state === 'Ready', { what: 'Ready' });
    const allocate = await call(base, 'POST', '/allocate', '{"unknown":true}');
    expect(allocate.status, allocate.text).toBe(200);
    await waitFor(async () => (await getGameServer(base)).status.state === 'Allocated', { what: 'Allocated' });
    const readyAgain = await call(base, 'POST', '/ready', '');
    expect(readyAgain.status, readyAgain.text).toBe(200);
    await waitFor(async () => (await getGameServer(base)).status.state === 'Ready', { what: 'Ready again' });
  });

  it('the sidecar is still healthy after all of it: a good request works', async () => {
    const res = await call(base, 'PATCH', '/v1beta1/counters/rooms', '{"countDiff":"1"}');
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ name: 'rooms', count: '2', capacity: '10' });
    expect((await getGameServer(base)).status.counters).toEqual({ rooms: { count: '2', capacity: '10' } });
  });
});

// -- durability ------------------------------------------------------------------------------------

/** Rows of `fleetsim replay --events` table output: SEQ, TIME, TYPE, DETAIL. */
function parseEventTable(text: string): { seq: number; time: string; type: string; detail: string }[] {
  const lines = text.trimEnd().split('\n');
  expect(lines[0]!.split(/ {3,}/)).toEqual(['SEQ', 'TIME', 'TYPE', 'DETAIL']);
  return lines.slice(1).map((line) => {
    const [seq, time, type, ...detail] = line.split(/ {3,}/);
    return { seq: Number(seq), time: time!, type: type!, detail: detail.join('   ') };
  });
}

interface ReplayedGameServer {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  status: {
    state: string;
    counters: Record<string, { count: number; capacity: number }>;
    lists: Record<string, { capacity: number; values: string[] }>;
    players?: { count: number; capacity: number; ids: string[] };
  };
}

describe('durability: SIGKILL, restart on the same file, replay', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetsim-e2e-'));
  });

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged change', async () => {
    const db = join(dir, 'events.db');
    const first = await startSidecar(['--db', db, '--feature-gates', GATES]);
    expect(first.log).toBe(db);
    const base1 = first.baseUrl;
    const ok = async (method: string, path: string, body: string | undefined, expected: unknown) => {
      const res = await call(base1, method, path, body);
      expect(res.status, `${method} ${path} -> ${res.text}`).toBe(200);
      expect(res.json).toEqual(expected);
    };

    await ok('PUT', '/metadata/label', '{"key":"k1","value":"v1"}', {});
    await ok('PUT', '/metadata/label', '{"key":"k2","value":"v2"}', {});
    await ok('PUT', '/metadata/annotation', '{"key":"note","value":"hello world"}', {});
    await ok('PATCH', '/v1beta1/counters/rooms', '{"countDiff":"3"}', { name: 'rooms', count: '4', capacity: '10' });
    await ok('PATCH', '/v1beta1/counters/rooms', '{"capacity":"20","count":"7"}', {
      name: 'rooms',
      count: '7',
      capacity: '20',
    });
    await ok('POST', '/v1beta1/lists/players:addValue', '{"value":"p9"}', {
      name: 'players',
      capacity: '100',
      values: ['test0', 'test1', 'test2', 'p9'],
    });
    await ok('PUT', '/alpha/player/capacity', '{"count":"3"}', {});
    await ok('POST', '/alpha/player/connect', '{"playerID":"p1"}', { bool: true });
    await ok('POST', '/ready', '{}', {});
    await waitFor(async () => (await getGameServer(base1)).status.state === 'Ready', { what: 'Ready' });
    await ok('POST', '/allocate', '{}', {});
    const acknowledged: GameServerJson = await getGameServer(base1);
    expect(acknowledged.status.state).toBe('Allocated');
    expect(acknowledged.object_meta.resource_version).toBe('12');

    const killed = await first.process.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');

    // The log, read by `fleetsim replay` straight after the crash.
    const replay = await runCli(['replay', db, '-o', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    const list = JSON.parse(replay.stdout) as { apiVersion: string; kind: string; items: ReplayedGameServer[] };
    expect(list.apiVersion).toBe('v1');
    expect(list.kind).toBe('List');
    expect(list.items).toHaveLength(1);
    const replayed = list.items[0]!;
    expect(replayed.metadata.name).toBe('local');
    expect(replayed.metadata.namespace).toBe('default');
    expect(replayed.metadata.resourceVersion).toBe(acknowledged.object_meta.resource_version);
    expect(replayed.metadata.labels).toEqual({ islocal: 'true', 'agones.dev/sdk-k1': 'v1', 'agones.dev/sdk-k2': 'v2' });
    expect(replayed.metadata.annotations).toEqual({
      annotation: 'true',
      'agones.dev/sdk-note': 'hello world',
      'agones.dev/last-allocated': acknowledged.object_meta.annotations['agones.dev/last-allocated'],
    });
    expect(replayed.status.state).toBe('Allocated');
    expect(replayed.status.counters).toEqual({ rooms: { count: 7, capacity: 20 } });
    expect(replayed.status.lists).toEqual({ players: { capacity: 100, values: ['test0', 'test1', 'test2', 'p9'] } });
    expect(replayed.status.players).toEqual({ count: 1, capacity: 3, ids: ['p1'] });

    const events = await runCli(['replay', db, '--events', 'default/local']);
    expect(events.code, events.stderr).toBe(0);
    const rows = parseEventTable(events.stdout);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const times = rows.map((r) => Date.parse(r.time));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1]!);
    expect(rows.map((r) => [r.type, r.detail])).toEqual([
      ['GameServerCreated', 'created in Scheduled'],
      ['GameServerMetadataPatched', '{"labels":{"agones.dev/sdk-k1":"v1"}}'],
      ['GameServerMetadataPatched', '{"labels":{"agones.dev/sdk-k2":"v2"}}'],
      ['GameServerMetadataPatched', '{"annotations":{"agones.dev/sdk-note":"hello world"}}'],
      ['GameServerCounterSet', '{"counter":"rooms","count":4,"capacity":10}'],
      ['GameServerCounterSet', '{"counter":"rooms","count":7,"capacity":20}'],
      ['GameServerListSet', '{"list":"players","capacity":100,"values":["test0","test1","test2","p9"]}'],
      ['GameServerPlayersSet', '{"count":0,"capacity":3,"ids":[]}'],
      ['GameServerPlayersSet', '{"count":1,"capacity":3,"ids":["p1"]}'],
      ['GameServerStateChanged', '-> RequestReady (sdk: SDK state change)'],
      ['GameServerStateChanged', '-> Ready (controller: SDK.Ready() complete)'],
      ['GameServerStateChanged', '-> Allocated (sdk: SDK state change)'],
    ]);

    // Restart on the same file: the GameServer is exactly as acknowledged, and the sidecar goes on.
    const second = await startSidecar(['--db', db, '--feature-gates', GATES]);
    expect(await getGameServer(second.baseUrl)).toEqual(acknowledged);
    const res = await call(second.baseUrl, 'PUT', '/metadata/label', '{"key":"k3","value":"v3"}');
    expect(res.status, res.text).toBe(200);
    const stopped = await second.process.kill('SIGTERM');
    expect(stopped, second.process.describe()).toEqual({ code: 0, signal: null });

    const afterRestart = parseEventTable((await runCli(['replay', db, '--events', 'default/local'])).stdout);
    expect(afterRestart).toHaveLength(13);
    expect(afterRestart.slice(0, 12)).toEqual(rows);
    expect(afterRestart[12]).toMatchObject({
      seq: 13,
      type: 'GameServerMetadataPatched',
      detail: '{"labels":{"agones.dev/sdk-k3":"v3"}}',
    });
  });
});
