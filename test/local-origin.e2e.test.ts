import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { hostname } from 'node:os';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCertificates, createTestCertificates } from './helpers/certs.js';
import { type CliProcess, type SidecarProcess, killAll, runCli, startCli, startSidecar } from './helpers/process.js';
import { DEFAULT_SERVE_ARGS, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { fleetManifest } from './helpers/manifests.js';
import { parseJsonOrUndefined } from './helpers/sidecar-http.js';
import { seconds } from './helpers/time-scale.js';

/**
 * A web page the developer visits must not be able to drive a local fleetsim: requests addressed
 * to a foreign Host (DNS rebinding) are refused, browser cross-origin writes and WebSocket
 * upgrades are refused (403 in each surface's error format) and change nothing, while clients
 * that send no Origin (curl, SDKs, kubectl, k6) and same-origin requests are served as before.
 * With the allocator on mutual TLS, the plain port does not hand out GameServers without a
 * certificate unless --allocator-plain-allowed says so.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';
const EVIL = 'http://evil.example';

const GSA = { apiVersion: 'allocation.agones.dev/v1', kind: 'GameServerAllocation', spec: { selectors: [{ matchLabels: { game: 'shooter' } }] } };

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** Sends the request `open` makes (plain or TLS) with `body`, and collects the reply. */
function send(open: (onReply: (res: IncomingMessage) => void) => ClientRequest, body?: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = open((res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJsonOrUndefined(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One request on 127.0.0.1:port with exactly the headers given (Host included), as a browser or a rebound name would send it. */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawReply> {
  return send((onReply) => httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, onReply), body);
}

/** A "simple" cross-site request as a page on evil.example can send without a preflight. */
function crossSite(port: number, path: string, body: string, extra: Record<string, string> = {}): Promise<RawReply> {
  return raw(port, 'POST', path, { host: `127.0.0.1:${port}`, origin: EVIL, 'content-type': 'text/plain;charset=UTF-8', 'sec-fetch-site': 'cross-site', ...extra }, body);
}

/** The upgrade's answer: the frames of an accepted WebSocket, or the status and body of a refused one. */
function webSocket(url: string, options: WebSocket.ClientOptions = {}): Promise<{ status: number; text: string; firstFrame?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options);
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    ws.on('message', (data: WebSocket.RawData) => {
      resolve({ status: 101, text: '', firstFrame: String(data as Buffer) });
      ws.terminate();
    });
    ws.on('error', reject);
  });
}

function expectForbiddenStatus(reply: RawReply, ...words: string[]): void {
  expect(reply.status, reply.text).toBe(403);
  expect(reply.json).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403 });
  for (const word of words) expect((reply.json as { message: string }).message).toContain(word);
}

function expectPermissionDenied(reply: { status: number; text: string }, ...words: string[]): void {
  expect(reply.status, reply.text).toBe(403);
  const json = parseJsonOrUndefined(reply.text) as { code: number; message: string; details: unknown[] };
  expect(json).toEqual({ code: 7, message: expect.any(String) as string, details: [] });
  for (const word of words) expect(json.message).toContain(word);
}

async function fleetStatus(base: string, name: string): Promise<{ readyReplicas: number; allocatedReplicas: number }> {
  const reply = await apiRequest(base, 'GET', `${FLEETS}/${name}`);
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { status: { readyReplicas: number; allocatedReplicas: number } }).status;
}

async function startWithFleet(args: string[], replicas: number): Promise<ServeProcess> {
  const serve = await startServe([...DEFAULT_SERVE_ARGS, ...args]);
  const created = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('shooters', replicas, { labels: { game: 'shooter' } }) });
  expect(created.status, created.text).toBe(201);
  await waitFor(async () => (await fleetStatus(serve.baseUrl, 'shooters')).readyReplicas === replicas, {
    timeoutMs: seconds(20),
    intervalMs: 100,
    what: 'the fleet Ready',
  });
  return serve;
}

async function firstGameServer(base: string): Promise<string> {
  const list = await apiRequest(base, 'GET', GAMESERVERS);
  return (list.json as { items: Array<{ metadata: { name: string } }> }).items[0]!.metadata.name;
}

afterAll(async () => {
  await killAll();
});

describe('fleetsim serve: Host and Origin checks', () => {
  let serve: ServeProcess;
  let port: number;
  let gs: string;

  beforeAll(async () => {
    serve = await startWithFleet([], 3);
    port = serve.port;
    gs = await firstGameServer(serve.baseUrl);
  });

  afterAll(async () => {
    await serve?.process.kill('SIGTERM');
  });

  it('refuses a request addressed to a foreign Host (DNS rebinding), in the format of each surface', async () => {
    const host = { host: `evil.example:${port}` };
    expectForbiddenStatus(await raw(port, 'GET', FLEETS, host), 'evil.example', '--allowed-hosts');
    expectPermissionDenied(await raw(port, 'GET', `/sdk/default/${gs}/gameserver`, host), 'evil.example', '--allowed-hosts');
    expectPermissionDenied(await raw(port, 'POST', '/gameserverallocation', { ...host, 'content-type': 'application/json' }, '{}'), 'evil.example');
    expectForbiddenStatus(await raw(port, 'POST', ALLOCATIONS, { ...host, 'content-type': 'application/json' }, JSON.stringify(GSA)));
    // A rebound name with no port, and a WebSocket upgrade under a foreign name.
    expectForbiddenStatus(await raw(port, 'GET', '/version', { host: 'rebind.attacker.test' }), 'rebind.attacker.test');
    expectPermissionDenied(await webSocket(`ws://127.0.0.1:${port}/sdk/default/${gs}/watch/gameserver`, { headers: host }), 'evil.example');
    expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 0, readyReplicas: 3 });
  });

  it('answers loopback names, IP addresses and this machine\'s names, with or without a port', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `LOCALHOST:${port}`, `[::1]:${port}`, '127.0.1.1', `10.1.2.3:${port}`]) {
      const reply = await raw(port, 'GET', FLEETS, { host });
      expect(reply.status, `${host}: ${reply.text}`).toBe(200);
    }
  });

  it('a cross-site text/plain POST cannot allocate, shut a game server down or create a fleet', async () => {
    const allocator = await crossSite(port, '/gameserverallocation', '{}');
    expectPermissionDenied(allocator, 'cross-origin', EVIL);
    expectForbiddenStatus(await crossSite(port, ALLOCATIONS, JSON.stringify(GSA)), 'cross-origin', EVIL);
    expectPermissionDenied(await crossSite(port, `/sdk/default/${gs}/shutdown`, '{}'));
    expectPermissionDenied(await crossSite(port, `/sdk/default/${gs}/allocate`, '{}'));
    expectForbiddenStatus(await crossSite(port, FLEETS, JSON.stringify(fleetManifest('evil', 2))));
    // A form posted from a sandboxed frame says Origin: null; a browser that sends only Sec-Fetch-Site is refused too.
    expectPermissionDenied(await crossSite(port, '/gameserverallocation', '{}', { origin: 'null' }));
    const noOrigin = await raw(port, 'POST', '/gameserverallocation', { host: `127.0.0.1:${port}`, 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' }, '{}');
    expectPermissionDenied(noOrigin, 'cross-site');
    // Another port on localhost is another origin.
    expectPermissionDenied(await crossSite(port, '/gameserverallocation', '{}', { origin: `http://localhost:${port + 1}`, 'sec-fetch-site': 'same-site' }));

    // Nothing changed.
    expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 0, readyReplicas: 3 });
    const gameServer = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}/${gs}`);
    expect((gameServer.json as { status: { state: string } }).status.state).toBe('Ready');
    expect((await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/evil`)).status).toBe(404);
  });

  it('a cross-origin WebSocket upgrade to a sidecar watch is refused; one without Origin is served', async () => {
    const url = `ws://127.0.0.1:${port}/sdk/default/${gs}/watch/gameserver`;
    expectPermissionDenied(await webSocket(url, { origin: EVIL }), 'WebSocket', EVIL);
    const served = await webSocket(url);
    expect(served.status).toBe(101);
    expect(served.firstFrame).toContain(gs);
    const sameOrigin = await webSocket(url, { origin: `http://127.0.0.1:${port}` });
    expect(sameOrigin.status).toBe(101);
  });

  it('same-origin and Origin-less writes still work, and cross-origin reads are answered without CORS headers', async () => {
    const own = await raw(port, 'POST', FLEETS, { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, JSON.stringify(fleetManifest('same-origin', 0)));
    expect(own.status, own.text).toBe(201);
    // A loopback alias on the same port is the same server.
    const alias = await raw(port, 'POST', '/gameserverallocation', { host: `127.0.0.1:${port}`, origin: `http://localhost:${port}`, 'content-type': 'application/json' }, '{"gameServerSelectors":[{"matchLabels":{"game":"shooter"}}]}');
    expect(alias.status, alias.text).toBe(200);
    const noOrigin = await apiRequest(serve.baseUrl, 'POST', ALLOCATIONS, { body: GSA });
    expect(noOrigin.status, noOrigin.text).toBe(201);
    expect((noOrigin.json as { status: { state: string } }).status.state).toBe('Allocated');
    expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 2 });

    const read = await raw(port, 'GET', FLEETS, { host: `127.0.0.1:${port}`, origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(read.status, read.text).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('fleetsim serve --allowed-hosts', () => {
  it('widens the Host check to the names given; "*" accepts any', async () => {
    const serve = await startServe([...DEFAULT_SERVE_ARGS, '--allowed-hosts', 'fleetsim.test,.lan.example']);
    try {
      for (const host of [`fleetsim.test:${serve.port}`, 'box.lan.example', 'lan.example']) {
        expect((await raw(serve.port, 'GET', FLEETS, { host })).status, host).toBe(200);
      }
      expectForbiddenStatus(await raw(serve.port, 'GET', FLEETS, { host: 'evil.example' }));
      // Its own origin under an allowed name may write.
      const own = await raw(serve.port, 'POST', FLEETS, { host: 'fleetsim.test', origin: 'http://fleetsim.test', 'content-type': 'application/json' }, JSON.stringify(fleetManifest('named', 0)));
      expect(own.status, own.text).toBe(201);
    } finally {
      await serve.process.kill('SIGTERM');
    }
    const any = await startServe([...DEFAULT_SERVE_ARGS, '--allowed-hosts', '*']);
    try {
      expect((await raw(any.port, 'GET', FLEETS, { host: 'evil.example' })).status).toBe(200);
      // Any Host, but still no cross-origin writes.
      expectForbiddenStatus(await crossSite(any.port, FLEETS, JSON.stringify(fleetManifest('evil', 0))));
    } finally {
      await any.process.kill('SIGTERM');
    }
  });

  it('bound to all interfaces, it answers IP addresses and this machine\'s name, not other names', async () => {
    const serve = await startServe([...DEFAULT_SERVE_ARGS, '--host', '0.0.0.0']);
    try {
      for (const host of [`127.0.0.1:${serve.port}`, `192.0.2.7:${serve.port}`, `${hostname()}:${serve.port}`, 'localhost']) {
        expect((await raw(serve.port, 'GET', FLEETS, { host })).status, host).toBe(200);
      }
      expectForbiddenStatus(await raw(serve.port, 'GET', FLEETS, { host: `host.docker.internal:${serve.port}` }), '--allowed-hosts host.docker.internal');
    } finally {
      await serve.process.kill('SIGTERM');
    }
  });

  it('refuses an entry that is not a host name, and --help documents the flags', async () => {
    const bad = await runCli(['serve', '--db', ':memory:', '--port', '0', '--allowed-hosts', 'http://evil.example']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--allowed-hosts');
    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toContain('--allowed-hosts');
    expect(help.stdout).toContain('--allocator-plain-allowed');
    const sidecarHelp = await runCli(['sidecar', '--help']);
    expect(sidecarHelp.stdout).toContain('--allowed-hosts');
  });
});

describe('fleetsim sidecar: Host and Origin checks', () => {
  let sidecar: SidecarProcess;
  let port: number;

  beforeAll(async () => {
    sidecar = await startSidecar(['--db', ':memory:']);
    port = sidecar.httpPort;
  });

  afterAll(async () => {
    await sidecar?.process.kill('SIGTERM');
  });

  async function state(): Promise<string> {
    const reply = await apiRequest(sidecar.baseUrl, 'GET', '/gameserver');
    return (reply.json as { status: { state: string } }).status.state;
  }

  it('refuses a foreign Host, and answers loopback names', async () => {
    expectPermissionDenied(await raw(port, 'GET', '/gameserver', { host: `evil.example:${port}` }), 'evil.example', '--allowed-hosts');
    expectPermissionDenied(await raw(port, 'POST', '/shutdown', { host: 'evil.example', 'content-type': 'application/json' }, '{}'));
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await raw(port, 'GET', '/gameserver', { host })).status, host).toBe(200);
    }
    expect(await state()).not.toBe('Shutdown');
  });

  it('a cross-site POST cannot shut the game server down or allocate it; a same-origin one can mark it Ready', async () => {
    expectPermissionDenied(await crossSite(port, '/shutdown', '{}'), 'cross-origin');
    expectPermissionDenied(await crossSite(port, '/allocate', '{}'));
    expectPermissionDenied(await crossSite(port, '/metadata/label', '{"key":"a","value":"b"}'));
    const before = await state();
    expect(['Scheduled', 'RequestReady', 'Ready']).toContain(before);

    const ready = await raw(port, 'POST', '/ready', { host: `localhost:${port}`, origin: `http://localhost:${port}`, 'content-type': 'application/json' }, '{}');
    expect(ready.status, ready.text).toBe(200);
    await waitFor(async () => (await state()) === 'Ready', { what: 'Ready' });
  });

  it('a cross-origin WebSocket watch is refused; one without Origin is served', async () => {
    const url = `ws://127.0.0.1:${port}/watch/gameserver`;
    expectPermissionDenied(await webSocket(url, { origin: EVIL }), EVIL);
    expectPermissionDenied(await webSocket(url, { origin: 'http://localhost:1' }));
    const served = await webSocket(url);
    expect(served.status).toBe(101);
    expect(served.firstFrame).toContain('object_meta');
  });
});

describe('the allocator on mutual TLS: no allocation without a certificate on the plain port', () => {
  let certs: TestCertificates;

  beforeAll(() => {
    certs = createTestCertificates();
  });

  afterAll(() => {
    certs?.remove();
  });

  function tlsArgs(): string[] {
    return [
      '--allocator-tls-cert', certs.server.certFile,
      '--allocator-tls-key', certs.server.keyFile,
      '--allocator-client-ca', certs.ca.certFile,
      '--allocator-port', '0',
    ];
  }

  function allocatorPort(process: CliProcess): number {
    const match = /^fleetsim allocator serving on https:\/\/\S+:(\d+)\//m.exec(process.stdout);
    expect(match, process.stdout).not.toBeNull();
    return Number(match![1]);
  }

  function tls(port: number, host: string): Promise<RawReply> {
    const options = {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/gameserverallocation',
      headers: { host, 'content-type': 'application/json' },
      ca: certs.ca.cert,
      cert: certs.client.cert,
      key: certs.client.key,
      servername: 'localhost',
      agent: false,
    };
    return send((onReply) => httpsRequest(options, onReply), '{"gameServerSelectors":[{"matchLabels":{"game":"shooter"}}]}');
  }

  it('refuses plain-port allocation with a pointer to the TLS port and the flag; the TLS port allocates', async () => {
    const serve = await startWithFleet(tlsArgs(), 2);
    try {
      const tlsPort = allocatorPort(serve.process);
      const allocator = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', { body: { gameServerSelectors: [{ matchLabels: { game: 'shooter' } }] } });
      expectPermissionDenied(allocator, `:${tlsPort}/gameserverallocation`, '--allocator-plain-allowed');
      const resource = await apiRequest(serve.baseUrl, 'POST', ALLOCATIONS, { body: GSA });
      expectForbiddenStatus({ ...resource, headers: {} }, `:${tlsPort}/gameserverallocation`, '--allocator-plain-allowed');
      expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 0, readyReplicas: 2 });
      // The rest of the plain port is served.
      expect((await apiRequest(serve.baseUrl, 'GET', GAMESERVERS)).status).toBe(200);

      // The TLS port: a client certificate allocates; the Host check holds there too.
      const viaTls = await tls(tlsPort, `localhost:${tlsPort}`);
      expect(viaTls.status, viaTls.text).toBe(200);
      expect(viaTls.json).toMatchObject({ gameServerName: expect.stringMatching(/^shooters-/) as string });
      expectPermissionDenied(await tls(tlsPort, 'evil.example'), 'evil.example');
      expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 1 });
    } finally {
      await serve.process.kill('SIGTERM');
    }
  });

  it('--allocator-plain-allowed serves allocation on the plain port too', async () => {
    const serve = await startWithFleet([...tlsArgs(), '--allocator-plain-allowed'], 2);
    try {
      const allocator = await apiRequest(serve.baseUrl, 'POST', '/gameserverallocation', { body: { gameServerSelectors: [{ matchLabels: { game: 'shooter' } }] } });
      expect(allocator.status, allocator.text).toBe(200);
      const resource = await apiRequest(serve.baseUrl, 'POST', ALLOCATIONS, { body: GSA });
      expect(resource.status, resource.text).toBe(201);
      expect(await fleetStatus(serve.baseUrl, 'shooters')).toMatchObject({ allocatedReplicas: 2 });
    } finally {
      await serve.process.kill('SIGTERM');
    }
  });

  it('--allocator-plain-allowed without a client CA is a flag error', async () => {
    const p = startCli(['serve', '--db', ':memory:', '--port', '0', '--no-default-fleet', '--allocator-plain-allowed']);
    const status = await p.waitForExit(seconds(15));
    expect(status.code).not.toBe(0);
    expect(p.stderr).toContain('--allocator-plain-allowed');
  });
});
