import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import { createRequire } from 'node:module';
import { type Socket, connect as connectTcp } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GameServerObject, OfficialSdk } from './helpers/agones-sdk.js';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { type SidecarProcess, cleanEnv, killAll, startSidecar } from './helpers/process.js';
import { type ServeProcess, startServe } from './helpers/serve.js';
import { NdjsonWatch } from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';
import { without } from './helpers/tools.js';

/**
 * Connections that say nothing, or say it slowly, against real `fleetsim serve` and `fleetsim
 * sidecar` processes: they are closed on every port (the plain port, the allocator's TLS port,
 * the sidecar's HTTP and gRPC ports) while watches, WebSockets and gRPC streams stay open however
 * long they last; and under a low open-file limit (`ulimit -n 256`) hundreds of them do not lock
 * a real client out. Where a test waits for a timeout the timeouts are scaled down
 * (FLEETSIM_CONNECTION_TIMEOUT_SCALE); the defaults are ten seconds to a first byte, five minutes
 * and more for the rest.
 */

const require = createRequire(import.meta.url);
const AgonesSDK = require('@google-cloud/agones-sdk') as new () => OfficialSdk;

/** A fiftieth: 200 ms to a first byte or a handshake, 1.2 s for headers, 6 s for a request or an idle HTTP/2 connection. */
const SCALE = '0.02';
const ALLOCATOR_LINE = /^fleetsim allocator serving on https:\/\/(\S+):(\d+)\/gameserverallocation/m;
const dirs: string[] = [];

afterAll(async () => {
  await killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One request on a connection of its own (no pool: a kept-alive connection is not reused after the server closed it). */
function once(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers: text ? { 'content-type': 'application/json' } : {} }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: data ? (JSON.parse(data) as unknown) : undefined, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** A TCP connection to `port` that sends nothing, once connected (or refused); `closed` tells when it has been closed. */
function silent(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    let closed = false;
    const connection = { socket, closed: () => closed };
    socket.on('error', () => undefined);
    socket.resume();
    socket.once('connect', () => resolve(connection));
    socket.once('close', () => {
      closed = true;
      resolve(connection);
    });
  });
}

interface ClientTls {
  ca: string;
  cert: string;
  key: string;
}

async function allocatorClientTls(port: number): Promise<ClientTls> {
  const secret = async (namespace: string, name: string) => {
    const reply = await once(port, 'GET', `/api/v1/namespaces/${namespace}/secrets/${name}`);
    const data = (reply.json as { data: Record<string, string> }).data;
    return (key: string) => Buffer.from(data[key]!, 'base64').toString('utf8');
  };
  const client = await secret('default', 'allocator-client.default');
  const ca = await secret('agones-system', 'allocator-tls-ca');
  return { cert: client('tls.crt'), key: client('tls.key'), ca: ca('tls-ca.crt') };
}

async function createGameServer(port: number, name: string): Promise<void> {
  const created = await once(port, 'POST', '/apis/agones.dev/v1/namespaces/default/gameservers', {
    metadata: { name },
    spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
  });
  expect(created.status).toBe(201);
  await waitFor(async () => {
    const gs = await once(port, 'GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`);
    return (gs.json as { status?: { state?: string } }).status?.state === 'Ready';
  }, { timeoutMs: seconds(20), what: `${name} Ready` });
}

describe('connections that say nothing, or too little, are closed (timeouts scaled by 0.02)', () => {
  let serve: ServeProcess;
  let allocatorPort: number;
  let tls: ClientTls;
  let sidecar: SidecarProcess;
  const env = cleanEnv({ FLEETSIM_CONNECTION_TIMEOUT_SCALE: SCALE });

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '1', '--no-listen', '--allocator-tls', 'auto', '--allocator-port', '0'], undefined, { env });
    allocatorPort = Number((await serve.process.waitForStdout(ALLOCATOR_LINE))[2]);
    tls = await allocatorClientTls(serve.port);
    sidecar = await startSidecar(['--db', ':memory:'], env);
  });

  it('on the plain port, the allocator\'s TLS port and the sidecar\'s HTTP and gRPC ports, a connection that sends nothing', async () => {
    const connections = await Promise.all([serve.port, allocatorPort, sidecar.httpPort, sidecar.grpcPort].map((port) => silent(port)));
    await waitFor(() => connections.every((c) => c.closed()), { timeoutMs: seconds(10), what: 'every silent connection closed' });
  });

  it('a request that stops half-way, a TLS client that sends no HTTP/2 SETTINGS, half of HTTP/2\'s preface', async () => {
    const halfRequest = await silent(serve.port);
    halfRequest.socket.write('GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const halfPreface = await silent(sidecar.grpcPort);
    halfPreface.socket.write('PRI * HTTP/2.0\r\n');
    // The handshake itself has a deadline too: a loaded machine may miss it, then the client tries again.
    const handshaken = await waitFor(
      () =>
        new Promise<{ closed: () => boolean } | undefined>((resolve) => {
          let closed = false;
          const socket = connectTls({ host: '127.0.0.1', port: allocatorPort, ...tls, ALPNProtocols: ['h2'] }, () => {
            resolve({ closed: () => closed });
          });
          socket.on('error', () => undefined);
          socket.resume();
          socket.once('close', () => {
            closed = true;
            resolve(undefined);
          });
        }),
      { timeoutMs: seconds(20), what: 'a TLS handshake with the allocator' },
    );
    await waitFor(() => halfRequest.closed() && halfPreface.closed() && handshaken.closed(), { timeoutMs: seconds(10), what: 'the three closed' });
  });

  it('watches, a WebSocket and an SDK watch stream stay open past every timeout, and still deliver', async () => {
    await createGameServer(serve.port, 'watched');
    const sdkWatch = new NdjsonWatch(`${serve.baseUrl}/sdk/default/watched/watch/gameserver`);
    const apiWatch = new NdjsonWatch(`${serve.baseUrl}/apis/agones.dev/v1/namespaces/default/gameservers?watch=true`);
    const socket = new WebSocket(`ws://127.0.0.1:${sidecar.httpPort}/watch/gameserver`);
    const frames: string[] = [];
    socket.on('message', (data: WebSocket.RawData) => frames.push(data.toString()));
    let socketClosed = false;
    socket.once('close', () => (socketClosed = true));
    process.env.AGONES_SDK_GRPC_PORT = String(sidecar.grpcPort);
    const sdk = new AgonesSDK();
    const streamed: GameServerObject[] = [];
    const streamErrors: unknown[] = [];
    try {
      await sdk.connect();
      sdk.watchGameServer((gs) => streamed.push(gs), (error) => streamErrors.push(error));
      await waitFor(() => sdkWatch.results.length > 0 && apiWatch.documents.length > 0 && frames.length > 0 && streamed.length > 0, {
        timeoutMs: seconds(10),
        what: 'the first event of every watch',
      });

      // What the longest timeouts close, opened now: once they are closed, those timeouts have passed.
      const slowBody = await silent(serve.port);
      slowBody.socket.write('POST /apis/agones.dev/v1/namespaces/default/gameservers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      const idleHttp2 = [connectHttp2(`http://127.0.0.1:${sidecar.grpcPort}`), connectHttp2(`https://127.0.0.1:${allocatorPort}`, tls)];
      let idleClosed = 0;
      for (const session of idleHttp2) {
        session.on('error', () => undefined);
        session.once('close', () => idleClosed++);
      }
      await waitFor(() => slowBody.closed() && idleClosed === 2, { timeoutMs: seconds(30), intervalMs: 100, what: 'the request timeout and the HTTP/2 idle timeouts' });

      expect(sdkWatch.ended || sdkWatch.error !== undefined).toBe(false);
      expect(apiWatch.ended || apiWatch.error !== undefined).toBe(false);
      expect(socketClosed).toBe(false);
      expect(streamErrors).toEqual([]);
      // Each still delivers what changes after.
      expect((await once(serve.port, 'PUT', '/sdk/default/watched/metadata/label', { key: 'after', value: 'timeouts' })).status).toBe(200);
      await sdk.setLabel('after', 'timeouts');
      await waitFor(
        () =>
          sdkWatch.results.some((gs) => gs.object_meta.labels['agones.dev/sdk-after'] === 'timeouts') &&
          apiWatch.lines.some((line) => line.includes('"agones.dev/sdk-after":"timeouts"')) &&
          frames.some((frame) => frame.includes('"agones.dev/sdk-after":"timeouts"')) &&
          streamed.some((gs) => gs.objectMeta.labelsMap.some(([key, value]) => key === 'agones.dev/sdk-after' && value === 'timeouts')),
        { timeoutMs: seconds(10), what: 'the label in every watch' },
      );
    } finally {
      sdkWatch.abort();
      apiWatch.abort();
      socket.terminate();
      sdk.close();
      sdk.alpha.client.close();
      sdk.beta.client.close();
      delete process.env.AGONES_SDK_GRPC_PORT;
    }
  });
});

describe('under `ulimit -n 256`, connections that say nothing do not lock a real client out', () => {
  it('with 300 of them open on the plain and TLS ports, kubectl and fetch are answered and a watch opened before goes on', async ({ skip }) => {
    skip(...without(KUBECTL));
    // Timeouts ten times the defaults: what frees room for the real client is the cap, not a deadline.
    const serve = await startServe(
      ['--db', ':memory:', '--no-default-fleet', '--nodes', '1', '--no-listen', '--allocator-tls', 'auto', '--allocator-port', '0'],
      seconds(20),
      { env: { FLEETSIM_CONNECTION_TIMEOUT_SCALE: '10' }, fileLimit: 256 },
    );
    const allocatorPort = Number((await serve.process.waitForStdout(ALLOCATOR_LINE))[2]);
    const watch = new NdjsonWatch(`${serve.baseUrl}/apis/agones.dev/v1/namespaces/default/gameservers?watch=true`);
    const connections: Array<{ socket: Socket; closed: () => boolean }> = [];
    try {
      await waitFor(() => watch.status === 200, { timeoutMs: seconds(10), what: 'the watch open' });
      for (let i = 0; i < 300; i++) {
        connections.push(await silent(i % 2 === 0 ? serve.port : allocatorPort));
      }
      const version = await once(serve.port, 'GET', '/version');
      expect(version.status).toBe(200);
      const dir = mkdtempSync(join(tmpdir(), 'fleetsim-connections-'));
      dirs.push(dir);
      const kubectl = new Kubectl(serve.baseUrl, dir);
      expect(await kubectl.ok(['get', 'namespaces', '-o', 'name'])).toContain('namespace/default');
      await createGameServer(serve.port, 'after-the-flood');
      await waitFor(() => watch.lines.some((line) => line.includes('"name":"after-the-flood"')), { timeoutMs: seconds(10), what: 'the watch event' });
      expect(watch.ended || watch.error !== undefined).toBe(false);
    } finally {
      watch.abort();
      for (const c of connections) c.socket.destroy();
    }
  }, seconds(120));
});
