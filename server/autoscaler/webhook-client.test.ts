import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import {
  type TestCa,
  type TestHttpsServer,
  type TestServerCertificate,
  createServerCertificate,
  createTestCa,
  hasOpenssl,
  startHttpsServer,
} from '../../test/helpers/tls.js';
import { waitFor } from '../../test/helpers/wait.js';
import {
  type FleetAutoscaleRequest,
  WebhookClient,
  WebhookError,
  loopbackServiceResolver,
  parseReviewResponse,
  reviewStatus,
  webhookTarget,
} from './webhook-client.js';

const REQUEST: FleetAutoscaleRequest = {
  uid: '6a1c-uid',
  name: 'simple-game-server',
  namespace: 'default',
  status: { replicas: 3, readyReplicas: 2, reservedReplicas: 0, allocatedReplicas: 1 },
};

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(text);
}

/** What a well-behaved webhook answers: the request's uid, scale to `replicas`. */
function answer(body: string, replicas: number, scale = true): unknown {
  const review = JSON.parse(body) as { request: { uid: string } };
  return { response: { uid: review.request.uid, scale, replicas } };
}

describe('webhookTarget (Agones buildURLFromConfiguration, spec: https only)', () => {
  it('uses a url as given', () => {
    expect(webhookTarget({ url: 'https://autoscaler.example:8443/scale' })).toEqual({
      url: 'https://autoscaler.example:8443/scale',
      tls: true,
      host: 'autoscaler.example',
      port: 8443,
      path: '/scale',
      hostHeader: 'autoscaler.example:8443',
      serverName: 'autoscaler.example',
    });
    expect(webhookTarget({ url: 'https://[::1]/' })).toMatchObject({ host: '::1', port: 443, path: '/' });
  });

  it('builds a service URL: http without caBundle, https with; namespace default, port 8000, a slash before the path', () => {
    expect(webhookTarget({ service: { name: 'autoscaler-webhook-service', path: 'scale' } })).toEqual({
      url: 'http://autoscaler-webhook-service.default.svc:8000/scale',
      tls: false,
      host: 'autoscaler-webhook-service.default.svc',
      port: 8000,
      path: '/scale',
      hostHeader: 'autoscaler-webhook-service.default.svc:8000',
      serverName: 'autoscaler-webhook-service.default.svc',
      service: { namespace: 'default', name: 'autoscaler-webhook-service', port: 8000 },
    });
    expect(webhookTarget({ service: { name: 'hook', namespace: 'games', port: 9443 }, caBundle: 'x' }, loopbackServiceResolver)).toEqual({
      url: 'https://hook.games.svc:9443',
      tls: true,
      host: '127.0.0.1',
      port: 9443,
      path: '/',
      hostHeader: 'hook.games.svc:9443',
      serverName: 'hook.games.svc',
      service: { namespace: 'games', name: 'hook', port: 9443 },
    });
  });

  it.each([
    [{}, 'URL was not provided'],
    [{ url: '' }, 'URL was not provided'],
    [{ url: 'https://a/', service: { name: 'b' } }, 'service and URL cannot be used simultaneously'],
    [{ service: { namespace: 'default' } }, 'service name was not provided'],
    [{ url: 'http://plain.example/scale' }, "'https' is the only allowed URL scheme: http://plain.example/scale"],
    [{ url: 'not a url' }, 'url is not valid: not a url'],
  ])('rejects %j', (config, message) => {
    expect(() => webhookTarget(config)).toThrow(new WebhookError(message));
  });
});

describe('reviewStatus', () => {
  it('keeps the fleet status fields and drops empty maps', () => {
    expect(
      reviewStatus({ replicas: 4, readyReplicas: 3, reservedReplicas: 0, allocatedReplicas: 1, counters: {}, lists: {}, shutdownReplicas: 2 }),
    ).toEqual({ replicas: 4, readyReplicas: 3, reservedReplicas: 0, allocatedReplicas: 1 });
    const counters = { rooms: { count: 1, capacity: 10, allocatedCount: 0, allocatedCapacity: 0 } };
    expect(reviewStatus({ replicas: 1, counters, players: { count: 0, capacity: 0 } })).toEqual({
      replicas: 1,
      readyReplicas: 0,
      reservedReplicas: 0,
      allocatedReplicas: 0,
      players: { count: 0, capacity: 0 },
      counters,
    });
  });
});

describe('parseReviewResponse', () => {
  const url = 'https://hook/scale';
  it('reads scale and replicas', () => {
    expect(parseReviewResponse('{"response":{"uid":"u","scale":true,"replicas":5}}', 'u', url)).toEqual({ uid: 'u', scale: true, replicas: 5 });
    expect(parseReviewResponse('{"response":{"uid":"u","scale":false}}', 'u', url)).toEqual({ uid: 'u', scale: false, replicas: 0 });
    expect(parseReviewResponse('{"response":{"uid":"u"}}', 'u', url)).toEqual({ uid: 'u', scale: false, replicas: 0 });
  });
  it.each([
    ['not json', 'the webhook https://hook/scale answered with invalid JSON'],
    ['{}', 'the webhook https://hook/scale answered without a "response" object'],
    ['{"response":null}', 'answered without a "response" object'],
    ['{"response":{"uid":"other","scale":true,"replicas":1}}', 'answered uid "other", not the request\'s uid "u"'],
    ['{"response":{"scale":true,"replicas":1}}', 'answered uid null, not the request\'s uid "u"'],
    ['{"response":{"uid":"u","scale":"yes","replicas":1}}', 'a "scale" that is not a boolean'],
    ['{"response":{"uid":"u","scale":true}}', '"scale": true with "replicas" null'],
    ['{"response":{"uid":"u","scale":true,"replicas":-1}}', '"scale": true with "replicas" -1'],
    ['{"response":{"uid":"u","scale":true,"replicas":2.5}}', '"scale": true with "replicas" 2.5'],
    ['{"response":{"uid":"u","scale":true,"replicas":"3"}}', '"scale": true with "replicas" "3"'],
  ])('rejects %s', (body, message) => {
    expect(() => parseReviewResponse(body, 'u', url)).toThrow(WebhookError);
    expect(() => parseReviewResponse(body, 'u', url)).toThrow(message);
  });
});

describe.skipIf(!hasOpenssl())('WebhookClient over the network', () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let certificate: TestServerCertificate;
  let server: TestHttpsServer;
  /** How the server answers the next requests, by path. */
  const behaviour = new Map<string, (body: string, res: ServerResponse) => void>();
  let plain: HttpServer;
  let plainPort: number;
  const plainBodies: Array<{ url: string; host: string | undefined; body: string }> = [];

  beforeAll(async () => {
    ca = createTestCa();
    otherCa = createTestCa('another CA');
    certificate = createServerCertificate(ca, ['hook.games.svc']);
    server = await startHttpsServer(certificate, (req, body, res) => {
      const handle = behaviour.get(req.url ?? '');
      if (handle) handle(body, res);
      else json(res, 200, answer(body, 7));
    });
    plain = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        plainBodies.push({ url: req.url ?? '', host: req.headers.host, body });
        json(res, 200, answer(body, 2));
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
    const address = plain.address();
    plainPort = typeof address === 'object' && address ? address.port : 0;
  });

  afterAll(async () => {
    await server?.close();
    plain?.closeAllConnections();
    await new Promise<void>((resolve) => (plain ? plain.close(() => resolve()) : resolve()));
  });

  function client(config: { url?: string; service?: { name: string; namespace?: string; path?: string; port?: number }; caBundle?: string }, timeoutMs?: number) {
    const clock = new VirtualClock();
    return { clock, client: new WebhookClient(config, { clock, resolveService: loopbackServiceResolver, ...(timeoutMs !== undefined && { timeoutMs }) }) };
  }

  it('POSTs the FleetAutoscaleReview as JSON and returns the answer, trusting only the caBundle', async () => {
    const { client: c } = client({ url: `${server.baseUrl}/scale`, caBundle: ca.caBundle });
    const before = server.requests.length;
    await expect(c.review(REQUEST)).resolves.toEqual({ uid: REQUEST.uid, scale: true, replicas: 7 });
    const received = server.requests[before]!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/scale');
    expect(received.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received.body)).toEqual({ request: REQUEST });
  });

  it("resolves a service's address at each call: one that cannot be reached yet fails that call only", async () => {
    let ready = false;
    const resolveService = ({ port }: { port: number }) => {
      if (!ready) throw new Error('no endpoints available for service "hook" in namespace "games"');
      return { host: '127.0.0.1', port: port === 8000 ? plainPort : 0 };
    };
    const c = new WebhookClient({ service: { name: 'hook', namespace: 'games', path: 'scale' } }, { clock: new VirtualClock(), resolveService });
    await expect(c.review(REQUEST)).rejects.toThrow(
      new WebhookError('the webhook call to http://hook.games.svc:8000/scale failed: no endpoints available for service "hook" in namespace "games"'),
    );
    ready = true;
    await expect(c.review(REQUEST)).resolves.toEqual({ uid: REQUEST.uid, scale: true, replicas: 2 });
  });

  it('passes scale: false through', async () => {
    behaviour.set('/no', (body, res) => json(res, 200, answer(body, 99, false)));
    const { client: c } = client({ url: `${server.baseUrl}/no`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).resolves.toEqual({ uid: REQUEST.uid, scale: false, replicas: 99 });
  });

  it('rejects an answer for another request', async () => {
    behaviour.set('/wrong-uid', (_body, res) => json(res, 200, { response: { uid: 'someone-else', scale: true, replicas: 1 } }));
    const { client: c } = client({ url: `${server.baseUrl}/wrong-uid`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).rejects.toThrow(`answered uid "someone-else", not the request's uid "${REQUEST.uid}"`);
  });

  it('rejects garbage', async () => {
    behaviour.set('/garbage', (_body, res) => res.writeHead(200).end('<html>'));
    const { client: c } = client({ url: `${server.baseUrl}/garbage`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).rejects.toThrow(`the webhook ${server.baseUrl}/garbage answered with invalid JSON`);
  });

  it('rejects a non-2xx status as Agones words it', async () => {
    behaviour.set('/broken', (body, res) => json(res, 500, answer(body, 1)));
    const { client: c } = client({ url: `${server.baseUrl}/broken`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).rejects.toThrow(new WebhookError(`bad status code 500 from the server: ${server.baseUrl}/broken`));
  });

  it('does not trust a server whose certificate another CA signed', async () => {
    const { client: c } = client({ url: `${server.baseUrl}/scale`, caBundle: otherCa.caBundle });
    const error = await c.review(REQUEST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookError);
    expect((error as Error).message).toMatch(new RegExp(`^the certificate of the webhook ${server.baseUrl}/scale is not trusted \\([A-Z_]+\\)`));
  });

  it('uses the system roots without a caBundle, so a private CA is not trusted', async () => {
    const { client: c } = client({ url: `${server.baseUrl}/scale` });
    await expect(c.review(REQUEST)).rejects.toThrow(/is not trusted/);
  });

  it('checks the certificate names the host', async () => {
    const { client: c } = client({ url: `https://localhost:${server.port}/scale`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).resolves.toMatchObject({ replicas: 7 });
    const unnamed = createServerCertificate(ca); // no hook.games.svc
    const other = await startHttpsServer(unnamed, (_req, body, res) => json(res, 200, answer(body, 1)));
    try {
      const { client: svc } = client({ service: { name: 'hook', namespace: 'games', port: other.port, path: '/scale' }, caBundle: ca.caBundle });
      await expect(svc.review(REQUEST)).rejects.toThrow(/https:\/\/hook\.games\.svc:\d+\/scale is not trusted \(ERR_TLS_CERT_ALTNAME_INVALID\)/);
    } finally {
      await other.close();
    }
  });

  it('reaches a service over https through the resolver, verifying the service name', async () => {
    const { client: c } = client({ service: { name: 'hook', namespace: 'games', port: server.port, path: 'scale' }, caBundle: ca.caBundle });
    expect(c.url).toBe(`https://hook.games.svc:${server.port}/scale`);
    const before = server.requests.length;
    await expect(c.review(REQUEST)).resolves.toMatchObject({ scale: true, replicas: 7 });
    expect(server.requests[before]!.headers.host).toBe(`hook.games.svc:${server.port}`);
  });

  it('reaches a service over plain http without a caBundle', async () => {
    const { client: c } = client({ service: { name: 'autoscaler-webhook-service', port: plainPort, path: 'scale' } });
    await expect(c.review(REQUEST)).resolves.toEqual({ uid: REQUEST.uid, scale: true, replicas: 2 });
    expect(plainBodies.at(-1)).toMatchObject({ url: '/scale', host: `autoscaler-webhook-service.default.svc:${plainPort}` });
  });

  it('fails every call of a client whose caBundle holds no certificate', async () => {
    const { client: c } = client({ url: `${server.baseUrl}/scale`, caBundle: Buffer.from('not a certificate').toString('base64') });
    await expect(c.review(REQUEST)).rejects.toThrow(new WebhookError('no certs were appended from caBundle'));
    await expect(c.review(REQUEST)).rejects.toThrow('no certs were appended from caBundle');
  });

  it('says when nothing listens', async () => {
    const closed = await startHttpsServer(certificate, () => undefined);
    const port = closed.port;
    await closed.close();
    const { client: c } = client({ url: `https://127.0.0.1:${port}/scale`, caBundle: ca.caBundle });
    await expect(c.review(REQUEST)).rejects.toThrow(`could not connect to the webhook https://127.0.0.1:${port}/scale: connection refused`);
  });

  it('gives up after the time limit, measured on the injected clock (15 s by default)', async () => {
    const held: ServerResponse[] = [];
    behaviour.set('/slow', (_body, res) => held.push(res));
    const { clock, client: c } = client({ url: `${server.baseUrl}/slow`, caBundle: ca.caBundle });
    let outcome: unknown;
    const call = c.review(REQUEST).then(
      (v) => (outcome = v),
      (e: unknown) => (outcome = e),
    );
    await waitFor(() => held.length === 1, { what: 'the request to arrive' });
    clock.advance(14_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBeUndefined();
    clock.advance(1);
    await call;
    expect(outcome).toEqual(new WebhookError(`the webhook ${server.baseUrl}/slow did not answer within 15s`));
    for (const res of held) res.destroy();
  });

  it('takes a configured time limit', async () => {
    const held: ServerResponse[] = [];
    behaviour.set('/slower', (_body, res) => held.push(res));
    const { clock, client: c } = client({ url: `${server.baseUrl}/slower`, caBundle: ca.caBundle }, 2_500);
    const call = c.review(REQUEST);
    await waitFor(() => held.length === 1, { what: 'the request to arrive' });
    clock.advance(2_500);
    await expect(call).rejects.toThrow('did not answer within 2500ms');
    for (const res of held) res.destroy();
  });

  it('can be cancelled', async () => {
    const held: ServerResponse[] = [];
    behaviour.set('/held', (_body, res) => held.push(res));
    const { client: c } = client({ url: `${server.baseUrl}/held`, caBundle: ca.caBundle });
    const abort = new AbortController();
    const call = c.review(REQUEST, abort.signal);
    await waitFor(() => held.length === 1, { what: 'the request to arrive' });
    abort.abort();
    await expect(call).rejects.toThrow('was cancelled');
    for (const res of held) res.destroy();
  });
});
