import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SidecarProcess, killAll, startSidecar } from './helpers/process.js';
import {
  ALPHA_CONFORMANCE_TESTS,
  COUNTS_AND_LISTS_TESTS,
  DEFAULT_CONFORMANCE_TESTS,
  type GameServerJson,
  NdjsonWatch,
  VERDICT_OK,
  call,
  expectGameServerWireShape,
  getGameServer,
} from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Agones's REST conformance client (test/sdk/restapi/http-api-test.go, agones-sidecar.md §13.6)
 * and its WebSocket watch check (§13.7), ported to TypeScript and run against a real
 * `fleetsim sidecar --test ...` process, with exact JSON expectations. The sidecar behaves like a
 * real cluster: Ready goes through RequestReady, and Shutdown is final.
 */

const EXPECTED = [...DEFAULT_CONFORMANCE_TESTS, ...ALPHA_CONFORMANCE_TESTS, ...COUNTS_AND_LISTS_TESTS];
const GATES = 'CountsAndLists=true&PlayerTracking=true';
/**
 * The sidecar's --timeout, a bound in case the flow never ends: the test stops the sidecar itself
 * (SIGTERM, which gives the same verdict) as soon as its flow is done, so a sidecar on a loaded
 * machine is not stopped half-way through a flow, nor a quick one kept waiting. `--timeout` itself
 * is checked by the verdict-mismatch test in sidecar-rest.e2e.test.ts.
 */
const TIMEOUT_SECONDS = Math.ceil(seconds(120) / 1000);

const digits = expect.stringMatching(/^\d+$/);
const rfc3339 = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

/** Expects a 200 whose decoded body deep-equals `expected`. */
async function expectOk(baseUrl: string, method: string, path: string, body: string | undefined, expected: unknown) {
  const res = await call(baseUrl, method, path, body);
  expect(res.status, `${method} ${path} -> ${res.status} ${res.text}`).toBe(200);
  expect(res.contentType, `${method} ${path}`).toMatch(/^application\/json\b/);
  expect(res.json, `${method} ${path}`).toEqual(expected);
}

/** States of a sequence of GameServers, consecutive repeats collapsed. */
function stateRuns(results: GameServerJson[]): string[] {
  const states: string[] = [];
  for (const gs of results) if (states.at(-1) !== gs.status.state) states.push(gs.status.state);
  return states;
}

describe('REST conformance flow (§13.6) and WebSocket watch check (§13.7)', () => {
  let sidecar: SidecarProcess;
  let base: string;
  let watch: NdjsonWatch | undefined;
  let ws: WebSocket | undefined;
  let startedAt: number;
  let initial: GameServerJson;
  let beforeShutdown: GameServerJson;
  let final: GameServerJson;

  beforeAll(async () => {
    startedAt = Math.floor(Date.now() / 1000);
    sidecar = await startSidecar([
      '--db',
      ':memory:',
      '--test',
      EXPECTED.join(','),
      '--timeout',
      String(TIMEOUT_SECONDS),
      '--feature-gates',
      GATES,
    ]);
    base = sidecar.baseUrl;
  });

  afterAll(async () => {
    watch?.abort();
    ws?.terminate();
    await killAll();
  });

  it('serves the default local GameServer in Scheduled, every field of §5 present', async () => {
    expect(sidecar.log).toBe(':memory:');
    initial = await getGameServer(base);
    expect(initial).toEqual({
      object_meta: {
        name: 'local',
        namespace: 'default',
        uid: digits,
        resource_version: digits,
        generation: '1',
        creation_timestamp: digits,
        deletion_timestamp: '0',
        annotations: { annotation: 'true' },
        labels: { islocal: 'true' },
      },
      spec: { health: { disabled: false, period_seconds: 3, failure_threshold: 5, initial_delay_seconds: 10 } },
      status: {
        state: 'Scheduled',
        address: '127.0.0.1',
        addresses: [],
        ports: [{ name: 'default', port: 7777 }],
        players: { count: '0', capacity: '0', ids: [] },
        counters: { rooms: { count: '1', capacity: '10' } },
        lists: { players: { capacity: '100', values: ['test0', 'test1', 'test2'] } },
      },
    });
    const created = Number(initial.object_meta.creation_timestamp);
    expect(created).toBeGreaterThanOrEqual(startedAt - 1);
    expect(created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
  });

  it('opens an NDJSON watch whose first line is the current GameServer', async () => {
    watch = new NdjsonWatch(`${base}/watch/gameserver`);
    const w = watch;
    await waitFor(() => w.documents.length >= 1 || w.error !== undefined, { what: 'the first watch line' });
    expect(w.error).toBeUndefined();
    expect(w.status).toBe(200);
    expect(w.contentType).toMatch(/^application\/json\b/);
    expect(w.lines[0]!.startsWith('{"result":{')).toBe(true);
    expect(w.documents[0]).toEqual({ result: initial });
  });

  it('runs the lifecycle calls: each answers {} and the watch follows RequestReady -> Ready -> Reserved -> Allocated', async () => {
    const w = watch!;
    const reached = (state: string) =>
      waitFor(() => w.results.find((gs) => gs.status.state === state), { what: `a watch line in ${state}` });

    // 1. Ready: the sidecar writes RequestReady; the controller then moves it to Ready.
    await expectOk(base, 'POST', '/ready', '{}', {});
    await reached('RequestReady');
    await reached('Ready');
    // 3. One health ping.
    await expectOk(base, 'POST', '/health', '{}', {});
    // 4. Reserve for 5 seconds (int64 as a string).
    await expectOk(base, 'POST', '/reserve', '{"seconds":"5"}', {});
    await reached('Reserved');
    // 5. Allocate (stops the reservation timer).
    await expectOk(base, 'POST', '/allocate', '{}', {});
    await reached('Allocated');
  });

  it('sets the label and the annotation the conformance verdict checks', async () => {
    // 6. GET /gameserver, then the creation timestamp as a label.
    const gs = await getGameServer(base);
    expect(gs).toEqual({
      ...initial,
      object_meta: {
        ...initial.object_meta,
        resource_version: digits,
        annotations: { 'agones.dev/last-allocated': rfc3339, annotation: 'true' },
      },
      status: { ...initial.status, state: 'Allocated' },
    });
    await expectOk(
      base,
      'PUT',
      '/metadata/label',
      JSON.stringify({ key: 'creationTimestamp', value: gs.object_meta.creation_timestamp }),
      {},
    );
    // 7. The uid as an annotation.
    await expectOk(base, 'PUT', '/metadata/annotation', JSON.stringify({ key: 'UID', value: gs.object_meta.uid }), {});
  });

  it('runs the player-tracking steps with exact answers', async () => {
    const steps: [string, string, string | undefined, unknown][] = [
      ['PUT', '/alpha/player/capacity', '{"count":"10"}', {}],
      ['GET', '/alpha/player/capacity', undefined, { count: '10' }],
      ['POST', '/alpha/player/connect', '{"playerID":"1234"}', { bool: true }],
      ['GET', '/alpha/player/connected/1234', undefined, { bool: true }],
      ['GET', '/alpha/player/connected', undefined, { list: ['1234'] }],
      ['POST', '/alpha/player/disconnect', '{"playerID":"1234"}', { bool: true }],
      ['GET', '/alpha/player/count', undefined, { count: '0' }],
    ];
    for (const [method, path, body, expected] of steps) await expectOk(base, method, path, body, expected);
  });

  it('runs the counters-and-lists steps with exact answers', async () => {
    const steps: [string, string, string | undefined, unknown][] = [
      ['GET', '/v1beta1/counters/rooms', undefined, { name: 'rooms', count: '1', capacity: '10' }],
      ['PATCH', '/v1beta1/counters/rooms', '{"capacity":"42","countDiff":"-1"}', { name: 'rooms', count: '0', capacity: '42' }],
      ['PATCH', '/v1beta1/counters/rooms', '{"count":"40","capacity":"42"}', { name: 'rooms', count: '40', capacity: '42' }],
      [
        'GET',
        '/v1beta1/lists/players',
        undefined,
        { name: 'players', capacity: '100', values: ['test0', 'test1', 'test2'] },
      ],
      [
        'PATCH',
        '/v1beta1/lists/players',
        '{"capacity":"10","values":["test123","test456"]}',
        { name: 'players', capacity: '10', values: ['test123', 'test456'] },
      ],
      [
        'POST',
        '/v1beta1/lists/players:addValue',
        '{"value":"test789"}',
        { name: 'players', capacity: '10', values: ['test123', 'test456', 'test789'] },
      ],
      [
        'POST',
        '/v1beta1/lists/players:removeValue',
        '{"value":"test456"}',
        { name: 'players', capacity: '10', values: ['test123', 'test789'] },
      ],
    ];
    for (const [method, path, body, expected] of steps) await expectOk(base, method, path, body, expected);
  });

  it('shows every change in GET /gameserver, then shuts down', async () => {
    beforeShutdown = await getGameServer(base);
    expect(beforeShutdown).toEqual({
      object_meta: {
        ...initial.object_meta,
        resource_version: digits,
        annotations: {
          'agones.dev/last-allocated': rfc3339,
          'agones.dev/sdk-UID': initial.object_meta.uid,
          annotation: 'true',
        },
        labels: { 'agones.dev/sdk-creationTimestamp': initial.object_meta.creation_timestamp, islocal: 'true' },
      },
      spec: initial.spec,
      status: {
        ...initial.status,
        state: 'Allocated',
        players: { count: '0', capacity: '10', ids: [] },
        counters: { rooms: { count: '40', capacity: '42' } },
        lists: { players: { capacity: '10', values: ['test123', 'test789'] } },
      },
    });
    // 10. Shutdown.
    await expectOk(base, 'POST', '/shutdown', '{}', {});
    final = await waitFor(
      async () => {
        const gs = await getGameServer(base);
        return gs.status.state === 'Shutdown' && gs;
      },
      { what: 'state Shutdown' },
    );
    expect(final).toEqual({
      ...beforeShutdown,
      object_meta: { ...beforeShutdown.object_meta, resource_version: digits },
      status: { ...beforeShutdown.status, state: 'Shutdown' },
    });
    // Shutdown is final: later lifecycle calls answer {} and change nothing.
    await expectOk(base, 'POST', '/ready', '{}', {});
    await expectOk(base, 'POST', '/allocate', '{}', {});
    expect(await getGameServer(base)).toEqual(final);
  });

  it('streamed every change on the NDJSON watch as complete {"result":...} lines', async () => {
    const w = watch!;
    await waitFor(() => w.results.at(-1)?.object_meta.resource_version === final.object_meta.resource_version, {
      what: 'the watch to catch up with Shutdown',
    });
    expect(w.error).toBeUndefined();
    expect(w.badLines).toEqual([]);
    for (const document of w.documents) {
      expect(Object.keys(document as object)).toEqual(['result']);
      expectGameServerWireShape((document as { result: unknown }).result);
    }
    const results = w.results;
    expect(results[0]).toEqual(initial);
    expect(stateRuns(results)).toEqual(['Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated', 'Shutdown']);
    // Each line is a new write: resource versions only go up.
    const versions = results.map((gs) => Number(gs.object_meta.resource_version));
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]!);
    // The label and the annotation each arrived as a change of their own.
    const labelAt = results.findIndex((gs) => 'agones.dev/sdk-creationTimestamp' in gs.object_meta.labels);
    expect(labelAt).toBeGreaterThan(0);
    expect(results[labelAt]!.object_meta.labels['agones.dev/sdk-creationTimestamp']).toBe(
      initial.object_meta.creation_timestamp,
    );
    expect(results[labelAt]!.status.state).toBe('Allocated');
    const annotationAt = results.findIndex((gs) => 'agones.dev/sdk-UID' in gs.object_meta.annotations);
    expect(annotationAt).toBeGreaterThan(labelAt);
    // The line before Shutdown is the state GET /gameserver showed; the last one is the final state.
    expect(results).toContainEqual(beforeShutdown);
    expect(results.at(-1)).toEqual(final);
  });

  it('WebSocket (§13.7): reserve with no body; the first frame is one text frame with the (final) Shutdown state', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${sidecar.httpPort}/watch/gameserver`);
    ws = socket;
    const frames: { text: string; isBinary: boolean }[] = [];
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      // binaryType 'nodebuffer' (the default) gives one Buffer per message; arrays come only with 'fragments'.
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.isBuffer(data)
          ? data.toString('utf8')
          : new TextDecoder().decode(data);
      frames.push({ text, isBinary });
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });

    // POST /reserve with no body at all: Reserve(0). Shutdown is final, so nothing changes.
    await expectOk(base, 'POST', '/reserve', undefined, {});
    expect(await getGameServer(base)).toEqual(final);

    await waitFor(() => frames.length >= 1, { what: 'the first WebSocket frame' });
    const first = frames[0]!;
    expect(first.isBinary).toBe(false);
    expect(first.text.includes('\n')).toBe(false);
    const document = JSON.parse(first.text) as { result: unknown };
    expect(Object.keys(document)).toEqual(['result']);
    const gs = expectGameServerWireShape(document.result);
    expect(gs.status.state).toBe('Shutdown');
    expect(gs).toEqual(final);

    socket.close(1000);
    const { code } = await closed;
    expect(code).toBe(1000);
  });

  it('exits 0 when stopped, with "Received requests match expected list", ending the watch cleanly', async () => {
    const status = await sidecar.process.kill('SIGTERM', seconds(30));
    expect(status, sidecar.process.describe()).toEqual({ code: 0, signal: null });
    expect(sidecar.process.stdout).toContain(VERDICT_OK);
    expect(sidecar.process.stderr).not.toContain('Testing Failed');
    // Closing the sidecar ends every watch stream cleanly: EOF, no torn line.
    const w = watch!;
    await waitFor(() => w.ended || w.error !== undefined, { what: 'the watch stream to end' });
    expect(w.error).toBeUndefined();
    expect(w.trailing).toBe('');
  });
});

describe('conformance verdict mismatch', () => {
  afterAll(async () => {
    await killAll();
  });

  it('exits 1 with "Testing Failed" naming the missing and the unexpected requests', async () => {
    // Expects allocate (never called) and not shutdown (called).
    const sidecar = await startSidecar(['--db', ':memory:', '--test', 'ready,gameserver,allocate', '--timeout', '2']);
    await expectOk(sidecar.baseUrl, 'POST', '/ready', '{}', {});
    await getGameServer(sidecar.baseUrl);
    await expectOk(sidecar.baseUrl, 'POST', '/shutdown', '{}', {});
    const status = await sidecar.process.waitForExit(2_000 + seconds(10));
    const output = sidecar.process.describe();
    expect(status, output).toEqual({ code: 1, signal: null });
    const text = sidecar.process.stdout + sidecar.process.stderr;
    expect(text).toContain('Testing Failed');
    expect(text).not.toContain(VERDICT_OK);
    expect(text).toMatch(/missing[^\n]*: allocate$/m);
    expect(text).toMatch(/unexpected[^\n]*: shutdown$/m);
  });
});

describe('a conformance sidecar stopped before its --timeout', () => {
  afterAll(async () => {
    await killAll();
  });

  it('exits at once on SIGTERM with its verdict, not when the --timeout comes', async () => {
    const sidecar = await startSidecar(['--db', ':memory:', '--test', 'ready', '--timeout', '600']);
    await expectOk(sidecar.baseUrl, 'POST', '/ready', '{}', {});
    // kill() falls back to SIGKILL when the process has not exited within its grace.
    const status = await sidecar.process.kill('SIGTERM', seconds(30));
    expect(status, sidecar.process.describe()).toEqual({ code: 0, signal: null });
    expect(sidecar.process.stdout).toContain(VERDICT_OK);
  });
});
