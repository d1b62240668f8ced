import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetYaml } from './helpers/manifests.js';
import { type SidecarProcess, killAll, runCli, startSidecar } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { call, getGameServer } from './helpers/sidecar-http.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Requests meant to hurt, against real `fleetsim serve` and `fleetsim sidecar` processes: request
 * targets that are not URLs or carry bad percent-escapes (plain and as WebSocket upgrades,
 * written byte by byte with node:net), and bodies nested thousands of levels deep. Each gets an
 * error in its surface's JSON format, nothing is appended, and the process goes on answering.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';
const DEPTH = 5000;

/** `{"a":{"a":…1…}}`, `levels` objects deep, as text (building it as an object would need the deep recursion itself). */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/**
 * A Fleet whose pod template carries a value nested `levels` deep, in a field no schema knows:
 * the depth is refused before the schema is read.
 */
function deepFleetJson(name: string, levels: number): string {
  return (
    `{"apiVersion":"agones.dev/v1","kind":"Fleet","metadata":{"name":"${name}"},"spec":{"replicas":0,"template":{"spec":{` +
    `"ports":[{"name":"default","containerPort":7654}],"template":{"metadata":{"annotations":{}},` +
    `"spec":{"containers":[{"name":"game","image":"game:1"}]},"deep":${nested(levels)}}}}}}`
  );
}

/** Where a pod spec keeps any JSON (an ObjectMeta's managedFields[].fieldsV1), so a deep value that passes the depth check is stored. */
const FREE_FORM = '/spec/template/spec/template/spec/volumes/0/ephemeral/volumeClaimTemplate/metadata/managedFields/0/fieldsV1';

/** A Fleet that stores a value nested `levels` deep at FREE_FORM. */
function freeFormFleetJson(name: string, levels: number): string {
  const claim = `{"metadata":{"managedFields":[{"fieldsV1":${nested(levels)}}]},"spec":{}}`;
  return (
    `{"apiVersion":"agones.dev/v1","kind":"Fleet","metadata":{"name":"${name}"},"spec":{"replicas":0,"template":{"spec":{` +
    `"ports":[{"name":"default","containerPort":7654}],"template":{"metadata":{"annotations":{}},` +
    `"spec":{"containers":[{"name":"game","image":"game:1"}],"volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":${claim}}}]}}}}}}`
  );
}

interface RawReply {
  /** The status line and headers. */
  head: string;
  status: number;
  body: string;
}

/** Writes `request` on a fresh connection and reads until the server closes it or a full response with Content-Length has arrived. */
function rawRequest(port: number, request: string, timeoutMs = seconds(5)): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let data = Buffer.alloc(0);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP response to ${JSON.stringify(request.split('\r\n')[0])}: got ${JSON.stringify(text)}`));
      const head = text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ head, status, body: data.subarray(Buffer.byteLength(text.slice(0, split + 4), 'latin1')).toString('utf8') });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, split))?.[1];
      if (split >= 0 && length !== undefined && data.length >= Buffer.byteLength(text.slice(0, split + 4), 'latin1') + Number(length)) finish();
    });
    socket.on('close', finish);
    socket.on('error', () => undefined);
  });
}

function get(target: string, upgrade: boolean): string {
  const lines = [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (upgrade) {
    lines.push('Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==');
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function expectJson(reply: RawReply): unknown {
  expect(reply.head, reply.head).toMatch(/\r\ncontent-type: application\/json/i);
  expect(reply.body).not.toMatch(/<html|<pre|node_modules|\bat .*\.js:\d+/i);
  return JSON.parse(reply.body) as unknown;
}

const SIDECAR_ERROR = { code: expect.any(Number), message: expect.stringMatching(/\S/), details: [] };

describe('fleetsim serve: bad request targets and deep bodies', () => {
  let serve: ServeProcess;

  beforeAll(async () => {
    serve = await startServe();
  });

  afterAll(async () => {
    await killAll();
  });

  const alive = async () => {
    expect(serve.process.exitStatus, serve.process.describe()).toBeUndefined();
    const res = await apiRequest(serve.baseUrl, 'GET', '/version');
    expect(res.status).toBe(200);
  };

  const lastSeq = async () => {
    const res = await apiRequest(serve.baseUrl, 'GET', FLEETS);
    expect(res.status, res.text).toBe(200);
    return (res.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  };

  it('a WebSocket upgrade to a sidecar path with a bad percent-escape gets a 400 in the gateway format', async () => {
    const reply = await rawRequest(serve.port, get('/sdk/default/%ZZ/watch/gameserver', true));
    expect(reply.status, reply.head).toBe(400);
    expect(expectJson(reply)).toEqual({ code: 3, message: expect.stringContaining('%ZZ'), details: [] });
    await alive();
  });

  it('a WebSocket upgrade whose request target is not a URL gets an HTTP error', async () => {
    const reply = await rawRequest(serve.port, get('//[', true));
    expect(reply.status, reply.head).toBe(404);
    expect(expectJson(reply)).toMatchObject({ kind: 'Status', code: 404 });
    await alive();
  });

  it('a plain request to a sidecar path with a bad percent-escape gets a 400 in the gateway format, not an HTML page', async () => {
    for (const target of ['/sdk/default/%ZZ/gameserver', '/sdk/%ZZ/local/ready']) {
      const reply = await rawRequest(serve.port, get(target, false));
      expect(reply.status, `${target}: ${reply.head}`).toBe(400);
      expect(expectJson(reply)).toEqual({ code: 3, message: expect.stringContaining('%ZZ'), details: [] });
    }
    const notUrl = await rawRequest(serve.port, get('//[', false));
    expect(notUrl.status).toBeLessThan(500);
    await alive();
  });

  it('a Fleet nested 5,000 levels deep is refused with 400 before anything is appended, and a batch of good writes beside it lands', async () => {
    const before = await lastSeq();
    const deep = apiRequest(serve.baseUrl, 'POST', FLEETS, { body: deepFleetJson('deep', DEPTH) });
    const good = Array.from({ length: 5 }, (_, i) =>
      apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetYaml(`beside-${i}`, 0), headers: { 'content-type': 'application/yaml' } }),
    );
    const [refused, ...created] = await Promise.all([deep, ...good]);
    expect(refused!.status, refused!.text).toBe(400);
    expect(refused!.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect((refused!.json as { message: string }).message).toMatch(/more than \d+ levels deep \(at spec\.template\.spec\.template\.deep\.a/);
    for (const res of created) expect(res.status, res.text).toBe(201);
    await alive();
    // Only the five good fleets were written: the deep one appended nothing.
    const names = ((await apiRequest(serve.baseUrl, 'GET', FLEETS)).json as { items: { metadata: { name: string } }[] }).items.map((f) => f.metadata.name);
    expect(names.sort()).toEqual(['beside-0', 'beside-1', 'beside-2', 'beside-3', 'beside-4']);
    expect(Number(await lastSeq())).toBeGreaterThan(Number(before));
  });

  it('a deep body is refused in YAML and in a patch too, and changes nothing', async () => {
    const fleetState = async (name: string) => {
      const res = await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/${name}`);
      const fleet = res.json as { metadata?: { generation: number }; spec?: unknown };
      return { status: res.status, generation: fleet.metadata?.generation, spec: fleet.spec };
    };
    const before = await fleetState('beside-0');
    const yaml = `${fleetYaml('deep-yaml', 0)}\n          deep: ${'['.repeat(DEPTH)}1${']'.repeat(DEPTH)}\n`;
    const fromYaml = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: yaml, headers: { 'content-type': 'application/yaml' } });
    expect(fromYaml.status, fromYaml.text).toBe(400);
    expect(fromYaml.json).toMatchObject({ kind: 'Status', code: 400, message: expect.stringMatching(/levels deep/) });
    const patch = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/beside-0`, {
      body: `{"metadata":{"annotations":{}},"spec":{"template":{"spec":{"template":{"deep":${nested(DEPTH)}}}}}}`,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patch.status, patch.text).toBe(400);
    expect(await fleetState('beside-0')).toEqual(before);
    expect((await fleetState('deep-yaml')).status).toBe(404);
    await alive();
  });

  it('a JSON patch cannot graft its way past the limit: the patched object is capped as bodies are', async () => {
    const created = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: freeFormFleetJson('grafted', 60) });
    expect(created.status, created.text).toBe(201);
    const spec = async () => {
      const res = await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/grafted`);
      const fleet = res.json as { metadata: { generation: number }; spec: unknown };
      return { generation: fleet.metadata.generation, spec: fleet.spec };
    };
    const before = await spec();
    const deepPath = `${FREE_FORM}${'/a'.repeat(59)}`;
    // Each copy doubles the depth; every body stays shallow.
    const patch = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/grafted`, {
      body: Array.from({ length: 8 }, () => ({ op: 'copy', from: FREE_FORM, path: `${deepPath}/b` })),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(patch.status, patch.text.slice(0, 300)).toBe(400);
    expect(patch.json).toMatchObject({
      kind: 'Status',
      code: 400,
      message: expect.stringMatching(/levels deep \(at spec\.template\.spec\.template\.spec\.volumes\[0\]\.ephemeral…\)/),
    });
    expect(await spec()).toEqual(before);
    await alive();
  });

  it('the allocator refuses a deep body with 400 code 3 naming where, and the resource API with a Status', async () => {
    const selector = `{"namespace":"default","gameServerSelectors":[{"matchLabels":{"a":${nested(DEPTH)}}}]}`;
    const allocator = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', { body: selector });
    expect(allocator.status, allocator.text).toBe(400);
    expect(allocator.json).toEqual({ code: 3, message: expect.stringMatching(/levels deep \(at gameServerSelectors\[0\]\.matchLabels\.a/), details: [] });
    const shallow = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', {
      body: `{"namespace":"default","gameServerSelectors":[{"matchLabels":{"a":${nested(50)}}}]}`,
    });
    expect(shallow.status, shallow.text).toBe(400);
    expect(shallow.json).toEqual({ code: 3, message: expect.stringContaining('gameServerSelectors[0].matchLabels[a]'), details: [] });
    expect((shallow.json as { message: string }).message.length).toBeLessThan(300);
    const resource = await apiRequest(serve.baseUrl, 'POST', ALLOCATIONS, {
      body: `{"spec":{"selectors":[{"matchLabels":{"a":${nested(DEPTH)}}}]}}`,
    });
    expect(resource.status, resource.text).toBe(400);
    expect(resource.json).toMatchObject({ kind: 'Status', code: 400 });
    await alive();
  });

  it('an invalid policySelector key is a 400 with code 3 on the allocator and a 422 on the resource API', async () => {
    const allocator = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', {
      body: { namespace: 'default', multiClusterSetting: { enabled: true, policySelector: { matchLabels: { 'bad key!': 'x' } } } },
    });
    expect(allocator.status, allocator.text).toBe(400);
    expect(allocator.json).toEqual({ code: 3, message: expect.stringContaining('spec.multiClusterSetting.policySelector'), details: [] });
    const resource = await apiRequest(serve.baseUrl, 'POST', ALLOCATIONS, {
      body: { spec: { multiClusterSetting: { enabled: true, policySelector: { matchLabels: { 'bad key!': 'x' } } } } },
    });
    expect(resource.status, resource.text).toBe(422);
    expect(resource.json).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      details: { causes: [expect.objectContaining({ field: 'spec.multiClusterSetting.policySelector' })] },
    });
  });

  it('the allocator answers a wrong method and an unknown path under it in its own format', async () => {
    const res = await apiRequest(serve.baseUrl, 'GET', '/gameserverallocation');
    expect(res.status).toBe(501);
    expect(res.json).toEqual({ code: 12, message: 'Method Not Allowed', details: [] });
    for (const [method, path] of [
      ['POST', '/gameserverallocation/nope'],
      ['GET', '/gameserverallocation/%ZZ'],
    ] as const) {
      const unknown = await apiRequest(serve.baseUrl, method, path, { body: method === 'POST' ? {} : undefined });
      expect(unknown.status, `${method} ${path}: ${unknown.text}`).toBe(404);
      expect(unknown.json).toEqual({ code: 5, message: 'Not Found', details: [] });
    }
  });
});

describe('fleetsim sidecar: bad request targets and deep bodies', () => {
  let sidecar: SidecarProcess;

  beforeAll(async () => {
    sidecar = await startSidecar(['--db', ':memory:']);
  });

  afterAll(async () => {
    if (sidecar && !sidecar.process.exitStatus) {
      const status = await sidecar.process.kill('SIGTERM');
      expect(status, sidecar.process.describe()).toEqual({ code: 0, signal: null });
    }
    await killAll();
  });

  const alive = async () => {
    expect(sidecar.process.exitStatus, sidecar.process.describe()).toBeUndefined();
    await getGameServer(sidecar.baseUrl);
  };

  it('a WebSocket upgrade with a bad percent-escape or a target that is not a URL is answered and the sidecar goes on', async () => {
    for (const target of ['/watch/gameserver%ZZ', '//[', '/%ZZ', '/gameserver?%ZZ=%']) {
      const reply = await rawRequest(sidecar.httpPort, get(target, true));
      expect(reply.status, `${target}: ${reply.head}`).toBeGreaterThan(0);
      expect(reply.body).not.toMatch(/<html|<pre/i);
      await alive();
    }
  });

  it('plain requests with such targets get JSON errors in the gateway format, never an HTML page', async () => {
    const badEscape = await rawRequest(sidecar.httpPort, get('/watch/gameserver%ZZ', false));
    expect(badEscape.status).toBe(400);
    expect(expectJson(badEscape)).toEqual({ code: 3, message: expect.stringContaining('%ZZ'), details: [] });
    const notUrl = await rawRequest(sidecar.httpPort, get('//[', false));
    expect(notUrl.status, notUrl.head).toBe(404);
    expect(expectJson(notUrl)).toEqual({ code: 5, message: 'Not Found', details: [] });
    await alive();
  });

  it('a handshake ws would refuse is answered in the gateway format', async () => {
    const reply = await rawRequest(sidecar.httpPort, 'GET /watch/gameserver HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    expect(reply.status).toBe(400);
    expect(expectJson(reply)).toEqual(SIDECAR_ERROR);
    await alive();
  });

  it('deep values in label and annotation bodies are a 400 naming the field, and change nothing', async () => {
    const before = await getGameServer(sidecar.baseUrl);
    for (const path of ['/metadata/label', '/metadata/annotation']) {
      for (const levels of [DEPTH, 50]) {
        const res = await call(sidecar.baseUrl, 'PUT', path, `{"key":"a","value":${nested(levels)}}`);
        expect(res.status, `${path} ${levels}: ${res.text.slice(0, 300)}`).toBe(400);
        expect(res.json).toEqual({ code: 3, message: expect.stringMatching(/\bvalue\b/), details: [] });
        expect(res.text.length).toBeLessThan(400);
      }
    }
    const deepReserve = await call(sidecar.baseUrl, 'POST', '/reserve', `{"seconds":${nested(DEPTH)}}`);
    expect(deepReserve.status).toBe(400);
    const deepHealth = await call(sidecar.baseUrl, 'POST', '/health', `{"a":${nested(DEPTH)}}`);
    expect(deepHealth.status).toBe(400);
    expect(await getGameServer(sidecar.baseUrl)).toEqual(before);
    await alive();
  });
});

describe('files named by flags: regular files only', () => {
  it('refuses a device for -f, --profiles and --node-pools (exit 2, naming the flag) and for the sidecar\'s --file, without a crash', async () => {
    const device = 'not a regular file (a character device)';
    for (const flag of ['-f', '--profiles', '--node-pools']) {
      const run = await runCli(['serve', '--db', ':memory:', '--port', '0', flag, '/dev/zero'], seconds(30));
      expect(run.code, run.stderr).toBe(2);
      const named = flag === '-f' ? '--filename' : flag;
      expect(run.stderr).toBe(`fleetsim serve: ${named}: cannot read /dev/zero: ${device}\n`);
    }
    const sidecar = await runCli(['sidecar', '--file', '/dev/zero', '--db', ':memory:', '--http-port', '0', '--grpc-port', '0'], seconds(30));
    expect(sidecar.code, sidecar.stderr).toBe(1);
    expect(sidecar.stderr).toBe(`fleetsim sidecar: /dev/zero: ${device}\n`);
  }, seconds(120));
});
