import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { type ApiResponse, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { fleetManifest } from './helpers/manifests.js';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { seconds } from './helpers/time-scale.js';
import { without } from './helpers/tools.js';

/**
 * The resource API read as the Kubernetes API server reads a request: query parameters
 * (selectors, pagination, resourceVersion and its match, watch timeouts, dryRun and
 * fieldValidation), body media types, the scale and status subresources, JSON patches, and URLs
 * no route takes. Every client mistake is a 4xx Status in JSON and changes nothing.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';

interface Status {
  kind: string;
  code: number;
  reason: string;
  message: string;
  metadata?: { continue?: string };
  details?: { causes?: Array<{ reason: string; message: string; field?: string }> };
}
interface ObjectList {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: Array<{ metadata: { name: string; namespace: string; resourceVersion: string } }>;
}

/** The answer is a Kubernetes Status of `code`, never HTML. */
function expectStatus(r: ApiResponse, code: number): Status {
  expect(r.status, r.text).toBe(code);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  const status = r.json as Status;
  expect(status).toMatchObject({ kind: 'Status', code });
  return status;
}

/** Every page of a list of `limit` items, following continue tokens. */
async function allPages(baseUrl: string, path: string, limit: number): Promise<ObjectList[]> {
  const pages: ObjectList[] = [];
  let token: string | undefined;
  do {
    const query = `limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
    const r = await apiRequest(baseUrl, 'GET', `${path}?${query}`);
    expect(r.status, r.text).toBe(200);
    const page = r.json as ObjectList;
    pages.push(page);
    token = page.metadata.continue;
  } while (token && pages.length < 50);
  return pages;
}

/** A request sent as raw bytes (a request target `fetch` would not send). */
function rawRequest(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(seconds(5), () => {
      socket.destroy();
      resolve(text);
    });
  });
}

describe.sequential('resource API input, as the API server reads it', () => {
  let serve: ServeProcess;
  const names = async (path = GAMESERVERS) => ((await apiRequest(serve.baseUrl, 'GET', path)).json as ObjectList).items.map((o) => o.metadata.name);

  beforeAll(async () => {
    serve = await startServe();
    expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('paged', 5) })).status).toBe(201);
    await waitFor(async () => (await names()).length === 5, { timeoutMs: seconds(15), what: 'five GameServers' });
  });

  afterAll(async () => {
    await killAll();
  });

  describe('labelSelector and fieldSelector', () => {
    it.each([
      ['labelSelector', 'a=b=c', "found '='"],
      ['labelSelector', 'app in (x', "expected: ',' or ')'"],
      ['labelSelector', 'a,,b', "found ','"],
      ['labelSelector', '-bad-=x', 'key: Invalid value: "-bad-"'],
      ['labelSelector', 'n>x', 'must be an integer'],
      ['fieldSelector', 'metadata.name', "can't understand 'metadata.name'"],
      ['fieldSelector', 'metadata.name=a=b', 'unescaped character'],
      ['fieldSelector', 'spec.replicas=1', 'field label not supported: spec.replicas'],
    ])('%s=%s is a 400 naming the selector and the problem (list and watch)', async (parameter, text, problem) => {
      for (const extra of ['', '&watch=true']) {
        const status = expectStatus(await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?${parameter}=${encodeURIComponent(text)}${extra}`), 400);
        expect(status.reason).toBe('BadRequest');
        expect(status.message).toContain(parameter);
        expect(status.message).toContain(JSON.stringify(text));
        expect(status.message).toContain(problem);
      }
    });

    it('a valid selector still filters', async () => {
      const r = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?labelSelector=${encodeURIComponent('agones.dev/fleet in (paged),!nope')}`);
      expect((r.json as ObjectList).items).toHaveLength(5);
      const none = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?labelSelector=${encodeURIComponent('agones.dev/fleet!=paged')}`);
      expect((none.json as ObjectList).items).toHaveLength(0);
    });
  });

  describe('limit and continue', () => {
    it('pages a list: at most limit items, a continue token while more remain, every object once in key order', async () => {
      const all = (await names()).sort();
      const pages = await allPages(serve.baseUrl, GAMESERVERS, 2);
      expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
      expect(pages.map((p) => p.metadata.remainingItemCount)).toEqual([3, 1, undefined]);
      expect(pages[2]!.metadata.continue).toBeUndefined();
      expect(pages.flatMap((p) => p.items.map((o) => o.metadata.name))).toEqual(all);
      // Every page is read at the first page's resourceVersion.
      expect(new Set(pages.map((p) => p.metadata.resourceVersion)).size).toBe(1);
    });

    it('a filtered page has no remainingItemCount; a limit of 0 or more than there is lists everything', async () => {
      const filtered = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?limit=2&labelSelector=agones.dev%2Ffleet%3Dpaged`);
      expect((filtered.json as ObjectList).metadata.continue).toBeDefined();
      expect((filtered.json as ObjectList).metadata.remainingItemCount).toBeUndefined();
      for (const limit of [0, 10]) {
        const r = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?limit=${limit}`);
        expect((r.json as ObjectList).items).toHaveLength(5);
        expect((r.json as ObjectList).metadata.continue).toBeUndefined();
      }
    });

    it('a page after the first shows an object created meanwhile, after its key, and not one that was deleted', async () => {
      const first = (await apiRequest(serve.baseUrl, 'GET', `${FLEETS}?limit=1`)).json as ObjectList;
      expect(first.items.map((o) => o.metadata.name)).toEqual(['paged']);
      expect(first.metadata.continue).toBeUndefined();
      expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('a-first', 0) })).status).toBe(201);
      expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('z-last', 0) })).status).toBe(201);
      const page = (await apiRequest(serve.baseUrl, 'GET', `${FLEETS}?limit=1`)).json as ObjectList;
      expect(page.items.map((o) => o.metadata.name)).toEqual(['a-first']);
      expect((await apiRequest(serve.baseUrl, 'DELETE', `${FLEETS}/paged`, { timeoutMs: seconds(10) })).status).toBe(200);
      const rest = await apiRequest(serve.baseUrl, 'GET', `${FLEETS}?limit=1&continue=${encodeURIComponent(page.metadata.continue!)}`);
      expect((rest.json as ObjectList).items.map((o) => o.metadata.name)).toEqual(['z-last']);
      // Put the fleet back for the tests that follow.
      for (const name of ['a-first', 'z-last']) await apiRequest(serve.baseUrl, 'DELETE', `${FLEETS}/${name}`);
      expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('paged', 5) })).status).toBe(201);
      await waitFor(async () => (await names()).length === 5, { timeoutMs: seconds(15), what: 'five GameServers again' });
    });

    it.each([
      ['continue=not-a-token', 'invalid continue token'],
      [`continue=${Buffer.from('{"v":"meta.k8s.io/v1","rv":"x","start":"a/b\\u0000"}').toString('base64url')}`, 'invalid continue token'],
      [`continue=${Buffer.from('{"v":"other/v9","rv":1,"start":"a/b\\u0000"}').toString('base64url')}`, 'not supported'],
    ])('%s is a 400', async (query, message) => {
      const status = expectStatus(await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?limit=2&${query}`), 400);
      expect(status.message).toContain(message);
    });

    it('continue with a resourceVersion is a 400, as the API server answers', async () => {
      const first = (await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?limit=2`)).json as ObjectList;
      const r = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?limit=2&resourceVersion=5&continue=${encodeURIComponent(first.metadata.continue!)}`);
      expect(expectStatus(r, 400).message).toBe('specifying resource version is not allowed when using continue');
    });

    it.each(['limit=abc', 'timeoutSeconds=soon&watch=true', 'watch=maybe'])('%s is a 400', async (query) => {
      const status = expectStatus(await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?${query}`), 400);
      expect(status.message).toContain(query.split('=')[0]!);
    });

    it('kubectl get --chunk-size=2 lists everything, page by page', async ({ skip }) => {
      skip(...without(KUBECTL));
      const home = mkdtempSync(join(tmpdir(), 'fleetsim-chunks-'));
      try {
        const result = await new Kubectl(serve.baseUrl, home).run(['get', 'gameservers', '--chunk-size=2', '-o', 'name', '-v=6']);
        expect(result.code, result.stderr).toBe(0);
        const listed = result.stdout.split('\n').filter((l) => l !== '').map((l) => l.replace(/^gameserver\.agones\.dev\//, ''));
        expect(listed.sort()).toEqual((await names()).sort());
        // Three requests: limit=2, then two with a continue token.
        expect(result.stderr.match(/GET \S+gameservers\?\S*limit=2\S* 200 OK/g)).toHaveLength(3);
        expect(result.stderr.match(/GET \S+gameservers\?\S*continue=\S+ 200 OK/g)).toHaveLength(2);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
  });

  describe('resourceVersion, resourceVersionMatch and timeoutSeconds', () => {
    const current = async () => Number(((await apiRequest(serve.baseUrl, 'GET', GAMESERVERS)).json as ObjectList).metadata.resourceVersion);

    it.each([
      ['resourceVersionMatch=NotOlderThan', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
      ['resourceVersionMatch=Newest&resourceVersion=1', 'resourceVersionMatch: Unsupported value: "Newest"'],
      ['resourceVersionMatch=Exact&resourceVersion=0', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
      ['resourceVersionMatch=NotOlderThan&watch=true', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
    ])('%s is a 422 on ListOptions', async (query, message) => {
      const status = expectStatus(await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?${query}`), 422);
      expect(status.reason).toBe('Invalid');
      expect(status.message).toContain('ListOptions.meta.k8s.io "" is invalid');
      expect(status.message).toContain(message);
      expect(status.details?.causes?.[0]?.field).toBe('resourceVersionMatch');
    });

    it('NotOlderThan and Exact at the current resourceVersion list', async () => {
      const rv = await current();
      for (const match of ['NotOlderThan', 'Exact']) {
        const r = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?resourceVersion=${rv}&resourceVersionMatch=${match}`);
        expect(r.status, r.text).toBe(200);
        expect((r.json as ObjectList).items).toHaveLength(5);
      }
    });

    it('a resourceVersion that is not a number is a 400, for a list and a watch', async () => {
      for (const extra of ['', '&watch=true']) {
        const status = expectStatus(await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?resourceVersion=abc${extra}`), 400);
        expect(status.message).toContain('"abc"');
      }
    });

    it('a resourceVersion never reached is a 504 ResourceVersionTooLarge after a short wait, for a list and a watch', async () => {
      const rv = (await current()) + 1_000_000;
      const [list, watch] = await Promise.all(
        ['', '&watch=true'].map((extra) => apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?resourceVersion=${rv}${extra}`)),
      );
      for (const r of [list!, watch!]) {
        const status = expectStatus(r, 504);
        expect(status.reason).toBe('Timeout');
        expect(status.message).toContain(`Too large resource version: ${rv}`);
        expect(status.details?.causes).toEqual([{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
      }
    });

    it('a resourceVersion reached during the wait is served', async () => {
      const rv = (await current()) + 1;
      const pending = apiRequest(serve.baseUrl, 'GET', `${FLEETS}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan`);
      expect((await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/paged`, {
        body: { metadata: { labels: { touched: 'yes' } } },
        headers: { 'content-type': 'application/merge-patch+json' },
      })).status).toBe(200);
      const r = await pending;
      expect(r.status, r.text).toBe(200);
      expect(Number((r.json as ObjectList).metadata.resourceVersion)).toBeGreaterThanOrEqual(rv);
    });

    it('a watch with timeoutSeconds ends by itself', async () => {
      const r = await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?watch=true&timeoutSeconds=1`, { timeoutMs: seconds(8) });
      expect(r.status).toBe(200);
      expect(r.text.split('\n').filter((l) => l !== '')).toHaveLength(5);
    });
  });

  describe('dryRun and fieldValidation', () => {
    it('an empty fieldValidation= or dryRun= means unset', async () => {
      const created = await apiRequest(serve.baseUrl, 'POST', `${FLEETS}?fieldValidation=&dryRun=`, { body: fleetManifest('empty-params', 0) });
      expect(created.status, created.text).toBe(201);
      expect(await names(FLEETS)).toContain('empty-params');
      const deleted = await apiRequest(serve.baseUrl, 'DELETE', `${FLEETS}/empty-params?dryRun=`);
      expect(deleted.status, deleted.text).toBe(200);
      expect(await names(FLEETS)).not.toContain('empty-params');
    });

    it('dryRun=All writes nothing; any other dryRun value is a 422 and writes nothing', async () => {
      expect((await apiRequest(serve.baseUrl, 'POST', `${FLEETS}?dryRun=All`, { body: fleetManifest('dry', 0) })).status).toBe(201);
      const status = expectStatus(await apiRequest(serve.baseUrl, 'POST', `${FLEETS}?dryRun=true`, { body: fleetManifest('dry', 0) }), 422);
      expect(status.message).toContain('CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["true"]');
      expect(await names(FLEETS)).not.toContain('dry');
    });
  });

  describe('body media types', () => {
    it.each([
      ['POST', FLEETS, 'text/plain'],
      ['POST', FLEETS, 'application/x-www-form-urlencoded'],
      ['POST', FLEETS, 'multipart/form-data; boundary=x'],
      ['POST', FLEETS, 'application/vnd.kubernetes.protobuf'],
      ['PUT', `${FLEETS}/paged`, 'text/plain'],
      ['PATCH', `${FLEETS}/paged`, 'text/plain'],
      ['PATCH', `${FLEETS}/paged`, 'application/json'],
      ['PUT', `${FLEETS}/paged/scale`, 'text/plain'],
      ['PATCH', `${FLEETS}/paged/status`, 'application/x-www-form-urlencoded'],
      ['POST', ALLOCATIONS, 'text/plain'],
      ['POST', ALLOCATIONS, 'application/x-www-form-urlencoded'],
    ])('%s %s with %s is a 415 and changes nothing', async (method, path, contentType) => {
      const before = (await apiRequest(serve.baseUrl, 'GET', FLEETS)).json as ObjectList;
      const body = path === ALLOCATIONS ? { spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'paged' } }] } } : { ...fleetManifest('paged', 7), metadata: { name: 'paged', labels: { x: 'y' } } };
      const r = await apiRequest(serve.baseUrl, method, path, { body: JSON.stringify(body), headers: { 'content-type': contentType } });
      const status = expectStatus(r, 415);
      expect(status.reason).toBe('UnsupportedMediaType');
      expect(status.message).toContain(contentType);
      expect((await apiRequest(serve.baseUrl, 'GET', FLEETS)).json).toEqual(before);
      const allocated = (await apiRequest(serve.baseUrl, 'GET', `${GAMESERVERS}?fieldSelector=status.state%3DAllocated`)).json as ObjectList;
      expect(allocated.items).toHaveLength(0);
    });

    it('JSON and YAML bodies are still read', async () => {
      const yaml = 'apiVersion: agones.dev/v1\nkind: Fleet\nmetadata:\n  name: from-yaml\nspec:\n  replicas: 0\n  template:\n    spec:\n      ports: [{name: default, containerPort: 7654}]\n      template: {spec: {containers: [{name: game, image: example/game:1}]}}\n';
      expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: yaml, headers: { 'content-type': 'application/yaml' } })).status).toBe(201);
      expect((await apiRequest(serve.baseUrl, 'DELETE', `${FLEETS}/from-yaml`)).status).toBe(200);
    });
  });

  describe('the all-namespaces path of a namespaced kind serves only list and watch', () => {
    const SECRETS = '/api/v1/namespaces/default/secrets';

    it.each([
      ['DELETE', '/apis/agones.dev/v1/gameservers', undefined],
      ['DELETE', '/apis/agones.dev/v1/gameservers?labelSelector=agones.dev%2Ffleet%3Dpaged', undefined],
      ['POST', '/apis/agones.dev/v1/fleets', fleetManifest('nowhere', 0)],
      ['DELETE', '/apis/agones.dev/v1/fleets/paged', undefined],
      ['GET', '/apis/agones.dev/v1/fleets/paged', undefined],
      ['PATCH', '/apis/agones.dev/v1/fleets/paged/scale', { spec: { replicas: 0 } }],
    ])('%s %s of a custom resource is a 404, as the CRD handler passes it on, and changes nothing', async (method, path, body) => {
      const state = async () => ({
        fleets: await names(FLEETS),
        gameServers: await names(),
        spec: ((await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/paged`)).json as { spec: unknown }).spec,
      });
      const before = await state();
      expect(before.gameServers.length).toBeGreaterThan(0);
      const headers = method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : undefined;
      const status = expectStatus(await apiRequest(serve.baseUrl, method, path, { body, headers }), 404);
      expect(status).toMatchObject({ reason: 'NotFound', message: 'the server could not find the requested resource' });
      expect(await state()).toEqual(before);
    });

    it('DELETE and POST of a built-in collection without a namespace are 405s, as go-restful answers a method it has no route for', async () => {
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kept' }, stringData: { a: 'b' } };
      expect((await apiRequest(serve.baseUrl, 'POST', SECRETS, { body: secret })).status).toBe(201);
      for (const [method, body] of [['DELETE', undefined], ['POST', { ...secret, metadata: { name: 'other' } }]] as const) {
        const status = expectStatus(await apiRequest(serve.baseUrl, method, '/api/v1/secrets', { body }), 405);
        expect(status).toMatchObject({ reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
      }
      expect(await names(SECRETS)).toEqual(['kept']);
      // The collection across namespaces still lists.
      const all = await apiRequest(serve.baseUrl, 'GET', '/api/v1/secrets');
      expect((all.json as ObjectList).items.map((o) => o.metadata.name)).toContain('kept');
    });
  });

  describe('subresources and patches', () => {
    const fleetNow = async () =>
      (await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/paged`)).json as { metadata: { resourceVersion: string; generation: number }; spec: { replicas: number } };
    // What a write of the fleet changes (its status moves on by itself while its GameServers start).
    const fleetSpec = async () => {
      const fleet = await fleetNow();
      return { generation: fleet.metadata.generation, spec: fleet.spec };
    };

    it.each([2147483648, 9007199254740991, -1])('the scale subresource refuses spec.replicas %d with a 422 naming it', async (replicas) => {
      const before = await fleetNow();
      for (const [method, contentType] of [['PUT', 'application/json'], ['PATCH', 'application/merge-patch+json']] as const) {
        const r = await apiRequest(serve.baseUrl, method, `${FLEETS}/paged/scale`, { body: `{"metadata":{"name":"paged"},"spec":{"replicas":${replicas}}}`, headers: { 'content-type': contentType } });
        const status = expectStatus(r, 422);
        expect(status.details?.causes?.[0]?.field).toBe('spec.replicas');
      }
      expect(await fleetNow()).toEqual(before);
    });

    it.each([
      ['{}', {}, 'the name of the object () does not match the name on the URL (paged)'],
      ['no metadata', { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 0 } }, 'the name of the object () does not match the name on the URL (paged)'],
      ['another name', { metadata: { name: 'other' }, spec: { replicas: 0 } }, 'the name of the object (other) does not match the name on the URL (paged)'],
      [
        'another namespace',
        { metadata: { name: 'paged', namespace: 'elsewhere' }, spec: { replicas: 0 } },
        'the namespace of the object (elsewhere) does not match the namespace on the request (default)',
      ],
      ['a Fleet', { kind: 'Fleet', apiVersion: 'agones.dev/v1', metadata: { name: 'paged' }, spec: { replicas: 0 } }, 'Fleet in version "v1" cannot be handled as a Scale'],
      [
        'a Scale of another group version',
        { kind: 'Scale', apiVersion: 'autoscaling/v2', metadata: { name: 'paged' }, spec: { replicas: 0 } },
        'Scale in version "v2" cannot be handled as a Scale: no kind "Scale" is registered for version "autoscaling/v2"',
      ],
    ])('a scale PUT of %s is a 400 as from the API server, and scales nothing', async (_what, body, message) => {
      const before = await fleetSpec();
      expect(before.spec.replicas).toBeGreaterThan(0);
      const r = await apiRequest(serve.baseUrl, 'PUT', `${FLEETS}/paged/scale`, { body });
      const status = expectStatus(r, 400);
      expect(status.reason).toBe('BadRequest');
      expect(status.message).toContain(message);
      expect(await fleetSpec()).toEqual(before);
    });

    it('a scale PATCH that renames the Scale is a 400 and scales nothing', async () => {
      const before = await fleetSpec();
      expect(before.spec.replicas).toBeGreaterThan(0);
      const r = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/paged/scale`, {
        body: { metadata: { name: 'other' }, spec: { replicas: 0 } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(expectStatus(r, 400).message).toBe('the name of the object (other) does not match the name on the URL (paged)');
      expect(await fleetSpec()).toEqual(before);
    });

    it('a scale PUT without spec.replicas (client-go omits a 0) scales to 0', async () => {
      const current = (await apiRequest(serve.baseUrl, 'GET', `${FLEETS}/paged/scale`)).json as { metadata: { resourceVersion: string } };
      const body = { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'paged', resourceVersion: current.metadata.resourceVersion }, spec: {} };
      const r = await apiRequest(serve.baseUrl, 'PUT', `${FLEETS}/paged/scale`, { body });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ spec: { replicas: 0 } });
      expect((await fleetNow()).spec.replicas).toBe(0);
    });

    it.each(['null', '[]', '123', '"text"'])('a status PUT with body %s is a 400, not a 500', async (body) => {
      const r = await apiRequest(serve.baseUrl, 'PUT', `${FLEETS}/paged/status`, { body, headers: { 'content-type': 'application/json' } });
      expect(expectStatus(r, 400).reason).toBe('BadRequest');
    });

    it('a JSON patch whose test operation fails is a 422 and changes nothing', async () => {
      const before = await fleetNow();
      const patch = [
        { op: 'replace', path: '/spec/replicas', value: 3 },
        { op: 'test', path: '/spec/replicas', value: 99 },
      ];
      const r = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/paged`, { body: patch, headers: { 'content-type': 'application/json-patch+json' } });
      const status = expectStatus(r, 422);
      expect(status.reason).toBe('Invalid');
      expect(status.message).toContain('the server rejected our request due to an error in our request');
      expect(status.message).toContain('/spec/replicas');
      expect(await fleetNow()).toEqual(before);
    });

    it('a JSON patch whose test operation holds is applied', async () => {
      const before = await fleetNow();
      const patch = [
        { op: 'test', path: '/spec/replicas', value: before.spec.replicas },
        { op: 'add', path: '/metadata/labels/tested', value: 'yes' },
      ];
      const r = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/paged`, { body: patch, headers: { 'content-type': 'application/json-patch+json' } });
      expect(r.status, r.text).toBe(200);
    });
  });

  describe('formats the schemas declare', () => {
    const AUTOSCALERS = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
    const MERGE = { 'content-type': 'application/merge-patch+json' };
    const PAYLOAD = '<img src=x onerror=alert(1)>';
    /** The 422 the API server gives a CRD field whose value is not of its format. */
    const expectNotDateTime = (r: ApiResponse, field: string, value: string) => {
      const status = expectStatus(r, 422);
      expect(status.reason).toBe('Invalid');
      expect(status.details?.causes).toEqual([
        { reason: 'FieldValueTypeInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${field} in body must be of type date-time: ${JSON.stringify(value)}` },
      ]);
    };

    it('a date-time that is not one is a 422 naming the field (status.lastScaleTime, status.reservedUntil, a schedule), and changes nothing', async () => {
      expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('dated', 1) })).status).toBe(201);
      const autoscaler = { metadata: { name: 'dated' }, spec: { fleetName: 'dated', policy: { type: 'Buffer', buffer: { bufferSize: 1, maxReplicas: 3 } } } };
      expect((await apiRequest(serve.baseUrl, 'POST', AUTOSCALERS, { body: autoscaler })).status).toBe(201);
      const gameServer = await waitFor(async () => (await names()).find((name) => name.startsWith('dated-')), { timeoutMs: seconds(15), what: 'a GameServer of fleet dated' });
      const now = async (path: string) => (await apiRequest(serve.baseUrl, 'GET', path)).json as { metadata: { resourceVersion: string }; status?: Record<string, unknown> };
      const times = async () => [(await now(`${AUTOSCALERS}/dated`)).status?.lastScaleTime, (await now(`${GAMESERVERS}/${gameServer}`)).status?.reservedUntil];
      await waitFor(async () => (await now(`${AUTOSCALERS}/dated`)).status, { timeoutMs: seconds(15), what: "the autoscaler's first status" });
      expect(await times()).toEqual([null, null]);

      for (const value of [PAYLOAD, '2024-05-01', '2024-02-30T10:00:00Z', '2024-05-01T10:00:00Zt<b>']) {
        const lastScaleTime = { status: { lastScaleTime: value } };
        expectNotDateTime(await apiRequest(serve.baseUrl, 'PATCH', `${AUTOSCALERS}/dated/status`, { body: lastScaleTime, headers: MERGE }), 'status.lastScaleTime', value);
        const put = { ...(await now(`${AUTOSCALERS}/dated`)), ...lastScaleTime };
        expectNotDateTime(await apiRequest(serve.baseUrl, 'PUT', `${AUTOSCALERS}/dated/status`, { body: put }), 'status.lastScaleTime', value);
        // A GameServer's status is no subresource: the object itself is written.
        const reservedUntil = { status: { reservedUntil: value } };
        expectNotDateTime(await apiRequest(serve.baseUrl, 'PATCH', `${GAMESERVERS}/${gameServer}`, { body: reservedUntil, headers: MERGE }), 'status.reservedUntil', value);
      }
      const scheduled = { type: 'Schedule', schedule: { between: { start: 'tomorrow' }, policy: autoscaler.spec.policy } };
      const created = await apiRequest(serve.baseUrl, 'POST', AUTOSCALERS, { body: { ...autoscaler, metadata: { name: 'scheduled' }, spec: { fleetName: 'dated', policy: scheduled } } });
      expectNotDateTime(created, 'spec.policy.schedule.between.start', 'tomorrow');

      expect(await times()).toEqual([null, null]);
      expect((await apiRequest(serve.baseUrl, 'GET', `${AUTOSCALERS}/scheduled`)).status).toBe(404);
    });

    it('an RFC 3339 date-time is taken, with a fraction or an offset', async () => {
      for (const value of ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.5+02:00']) {
        const r = await apiRequest(serve.baseUrl, 'PATCH', `${AUTOSCALERS}/dated/status`, { body: { status: { lastScaleTime: value } }, headers: MERGE });
        expect(r.status, r.text).toBe(200);
        expect(r.json).toMatchObject({ status: { lastScaleTime: value } });
      }
    });
  });

  describe('URLs no route takes', () => {
    it.each([
      ['/apis/agones.dev/v1/namespaces/%ZZ/fleets', 400],
      ['/apis/agones.dev/v1/namespaces/default/fleets/%E0%A4%A', 400],
      ['/no/such/path', 404],
      ['/apis/agones.dev/v1/namespaces/default/nothings', 404],
      ['/apis/nope.dev/v1', 404],
    ])('GET %s is a %d Status in JSON', async (path, code) => {
      const r = await apiRequest(serve.baseUrl, 'GET', path);
      expectStatus(r, code);
      expect(r.text).not.toMatch(/<html|<pre>|node_modules|\n\s+at /i);
    });

    it("a sidecar path with a bad percent-escape is a 400 in the sidecar's own error format", async () => {
      const r = await apiRequest(serve.baseUrl, 'GET', '/sdk/%ZZ/x/gameserver');
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ code: 3, details: [] });
    });

    it('a request target that is not a URL, and a malformed body on fleetsim\'s own routes, get JSON', async () => {
      for (const head of ['GET //[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 'GET /apis/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
        const text = await rawRequest(serve.port, head);
        expect(text).toMatch(/^HTTP\/1\.1 4\d\d /);
        expect(text).toMatch(/content-type: application\/json/i);
        expect(text).not.toMatch(/<html|<pre>|node_modules|\n\s+at /i);
      }
      const clock = await apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body: '{"advanceSeconds":', headers: { 'content-type': 'application/json' } });
      expect(clock.status).toBe(400);
      expect(clock.text).not.toMatch(/<html|<pre>|node_modules|\n\s+at /i);
      expect(clock.json).toBeDefined();
    });
  });
});

describe.sequential('a continue token older than the watch window', () => {
  let dir: string;

  afterAll(async () => {
    await killAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is a 410 Expired whose Status carries a token that continues at the latest state', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetsim-continue-'));
    const db = join(dir, 'fleetsim.db');
    const args = ['--db', db, '--no-default-fleet', '--nodes', '2'];
    let serve = await startServe(args);
    for (const name of ['f-a', 'f-b', 'f-c']) expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest(name, 0) })).status).toBe(201);
    const first = (await apiRequest(serve.baseUrl, 'GET', `${FLEETS}?limit=1`)).json as ObjectList;
    expect(first.metadata.continue).toBeDefined();
    // A change after the token, then a restart: the window the server keeps starts after it.
    expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('f-e', 0) })).status).toBe(201);
    await serve.process.kill('SIGTERM');
    serve = await startServe(args);
    expect((await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('f-d', 0) })).status).toBe(201);
    const r = await apiRequest(serve.baseUrl, 'GET', `${FLEETS}?limit=1&continue=${encodeURIComponent(first.metadata.continue!)}`);
    const status = expectStatus(r, 410);
    expect(status.reason).toBe('Expired');
    expect(status.message).toContain('The provided continue parameter is too old');
    expect(status.metadata?.continue).toBeDefined();

    const rest = await allPagesFrom(serve.baseUrl, status.metadata!.continue!);
    expect(rest).toEqual(['f-b', 'f-c', 'f-d', 'f-e']);
  });
});

/** The names on every page from a continue token on. */
async function allPagesFrom(baseUrl: string, token: string): Promise<string[]> {
  const seen: string[] = [];
  let next: string | undefined = token;
  while (next) {
    const r = await apiRequest(baseUrl, 'GET', `${FLEETS}?limit=1&continue=${encodeURIComponent(next)}`);
    expect(r.status, r.text).toBe(200);
    const page = r.json as ObjectList;
    seen.push(...page.items.map((o) => o.metadata.name));
    next = page.metadata.continue;
  }
  return seen;
}

/** A `fleetsim serve` of its own for a describe block, and kubectl pointed at it (filled before its tests, stopped after). */
function servedWithKubectl(): { serve: ServeProcess; kubectl: Kubectl } {
  const ctx = {} as { serve: ServeProcess; kubectl: Kubectl };
  let home = '';
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fleetsim-api-'));
    ctx.serve = await startServe();
    ctx.kubectl = new Kubectl(ctx.serve.baseUrl, home);
  });
  afterAll(async () => {
    ctx.kubectl?.killAll();
    await killAll();
    rmSync(home, { recursive: true, force: true });
  });
  return ctx;
}

describe.sequential('DeleteOptions, from the query or the body (kubectl sends the body)', () => {
  const ctx = servedWithKubectl();
  const SETS = '/apis/agones.dev/v1/namespaces/default/gameserversets';
  interface Owned {
    metadata: { name: string; uid: string; resourceVersion: string; ownerReferences?: Array<{ uid: string }> };
  }
  const list = async (path: string) => ((await apiRequest(ctx.serve.baseUrl, 'GET', path)).json as { items: Owned[] }).items;
  const fleet = async (name: string) => (await apiRequest(ctx.serve.baseUrl, 'GET', `${FLEETS}/${name}`)).json as Owned;
  const create = async (name: string, replicas = 0) => {
    expect((await apiRequest(ctx.serve.baseUrl, 'POST', FLEETS, { body: fleetManifest(name, replicas) })).status).toBe(201);
    return fleet(name);
  };
  const remove = (name: string, body: unknown, query = '') =>
    apiRequest(ctx.serve.baseUrl, 'DELETE', `${FLEETS}/${name}${query}`, { body, headers: { 'content-type': 'application/json' } });

  it('refuses a delete whose uid or resourceVersion precondition the object no longer meets (409), and deletes once they hold', async () => {
    const kept = await create('pre');
    const { uid, resourceVersion } = kept.metadata;
    const conflicts = [
      [{ preconditions: { uid: 'other-uid' } }, `the UID in the precondition (other-uid) does not match the UID in record (${uid}). The object might have been deleted and then recreated`],
      [{ preconditions: { uid, resourceVersion: '1' } }, `the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`],
    ] as const;
    for (const [body, why] of conflicts) {
      const status = expectStatus(await remove('pre', body), 409);
      expect(status).toMatchObject({ reason: 'Conflict', message: `Operation cannot be fulfilled on Fleet.agones.dev "pre": ${why}`, details: { name: 'pre', group: 'agones.dev', kind: 'Fleet' } });
      expect((await fleet('pre')).metadata.uid).toBe(uid);
    }
    const deleted = await remove('pre', { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid, resourceVersion } });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await apiRequest(ctx.serve.baseUrl, 'GET', `${FLEETS}/pre`)).status).toBe(404);
  });

  it.each([
    ['?propagationPolicy=Sideways', undefined],
    ['', { propagationPolicy: 'Sideways' }],
  ])('a propagationPolicy the API server does not know (%s %j) is a 422 naming it, and deletes nothing', async (query, body) => {
    await create('bogus');
    const status = expectStatus(await remove('bogus', body, query), 422);
    expect(status.reason).toBe('Invalid');
    expect(status.message).toBe('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
    expect(status.details?.causes?.map((c) => c.field)).toEqual(['propagationPolicy']);
    expect((await fleet('bogus')).metadata.uid).toBeDefined();
    expect((await remove('bogus', undefined)).status).toBe(200);
  });

  it('orphanDependents with a propagationPolicy is a 422; a dryRun value other than All too', async () => {
    await create('both');
    const both = expectStatus(await remove('both', { orphanDependents: true, propagationPolicy: 'Orphan' }), 422);
    expect(both.message).toContain('propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set');
    const dry = expectStatus(await remove('both', { dryRun: ['Some'] }), 422);
    expect(dry.message).toContain('dryRun: Unsupported value: ["Some"]: supported values: "All"');
    expect((await fleet('both')).metadata.name).toBe('both');
  });

  it.each([
    ['malformed JSON', '{"propagationPolicy":', 'not valid JSON'],
    ['an array', '[]', 'json: cannot unmarshal array into Go value of type struct'],
    ['a kind that is not a string', '{"kind":true}', 'json: cannot unmarshal bool into Go struct field .kind of type string'],
    ['another kind', '{"kind":"Fleet","apiVersion":"agones.dev/v1"}', 'Fleet in version "v1" cannot be handled as a DeleteOptions'],
    ['a string grace period', '{"gracePeriodSeconds":"5"}', 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    ['a fractional grace period', '{"gracePeriodSeconds":1.5}', 'json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    ['a dryRun string', '{"dryRun":"All"}', 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'],
    ['preconditions as a string', '{"preconditions":"x"}', 'json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions'],
    ['a numeric uid precondition', '{"preconditions":{"uid":5}}', 'json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID'],
    ['orphanDependents as a string', '{"orphanDependents":"yes"}', 'json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool'],
  ])('a body that is not DeleteOptions (%s) is a 400 and deletes nothing', async (_what, body, message) => {
    await apiRequest(ctx.serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('kept', 0) });
    const status = expectStatus(await remove('kept', body), 400);
    expect(status.reason).toBe('BadRequest');
    expect(status.message).toContain(message);
    expect((await fleet('kept')).metadata.name).toBe('kept');
  });

  it('gracePeriodSeconds and orphanDependents in the query must parse (400)', async () => {
    for (const query of ['?gracePeriodSeconds=soon', '?orphanDependents=maybe']) {
      const status = expectStatus(await remove('kept', undefined, query), 400);
      expect(status.message).toContain(query.slice(1).split('=')[0]!);
    }
    expect((await fleet('kept')).metadata.name).toBe('kept');
  });

  it('a dry run asked in the body (kubectl delete --dry-run=server) deletes nothing', async () => {
    const dry = await remove('kept', { dryRun: ['All'] });
    expect(dry.status, dry.text).toBe(200);
    expect(await ctx.kubectl.ok(['delete', 'fleet', 'kept', '--dry-run=server'])).toMatch(/fleet.agones.dev "kept" deleted \(server dry run\)/);
    expect((await fleet('kept')).metadata.name).toBe('kept');
    expect(await ctx.kubectl.ok(['delete', 'fleet', 'kept'])).toMatch(/deleted/);
    expect((await apiRequest(ctx.serve.baseUrl, 'GET', `${FLEETS}/kept`)).status).toBe(404);
  });

  it('kubectl delete --cascade=orphan leaves the fleet\'s GameServerSet and GameServers, without the owner reference', async () => {
    const owner = await create('orphans', 2);
    await waitFor(async () => (await list(GAMESERVERS)).length === 2, { timeoutMs: seconds(15), what: 'two GameServers' });
    const setsOfFleet = `${SETS}?labelSelector=agones.dev%2Ffleet%3Dorphans`;
    const [set] = await list(setsOfFleet);
    expect(set!.metadata.ownerReferences?.map((r) => r.uid)).toEqual([owner.metadata.uid]);
    const before = (await list(GAMESERVERS)).map((gs) => gs.metadata.name).sort();

    expect(await ctx.kubectl.ok(['delete', 'fleet', 'orphans', '--cascade=orphan'])).toMatch(/fleet.agones.dev "orphans" deleted/);
    expect((await apiRequest(ctx.serve.baseUrl, 'GET', `${FLEETS}/orphans`)).status).toBe(404);
    const sets = await list(setsOfFleet);
    expect(sets.map((s) => s.metadata.uid)).toEqual([set!.metadata.uid]);
    expect(sets[0]!.metadata.ownerReferences).toBeUndefined();
    // The set keeps its GameServers (they are its own, not the fleet's) and keeps them running.
    const gameServers = await list(GAMESERVERS);
    expect(gameServers.map((gs) => gs.metadata.name).sort()).toEqual(before);
    expect(gameServers.every((gs) => gs.metadata.ownerReferences?.[0]?.uid === set!.metadata.uid)).toBe(true);

    // Deleting the set as usual (Background) takes its GameServers with it.
    expect(await ctx.kubectl.ok(['delete', 'gameserverset', set!.metadata.name])).toMatch(/deleted/);
    await waitFor(async () => (await list(GAMESERVERS)).length === 0, { timeoutMs: seconds(15), what: 'the GameServers gone with their set' });
  });
});

describe.sequential('finalizers hold a deleted object, terminating, until they are removed', () => {
  const ctx = servedWithKubectl();
  const HOLD = 'example.com/hold';
  interface Meta {
    metadata: {
      name: string;
      resourceVersion: string;
      generation: number;
      deletionTimestamp?: string;
      deletionGracePeriodSeconds?: number;
      finalizers?: string[];
    };
  }
  const get = async (path: string) => {
    const r = await apiRequest(ctx.serve.baseUrl, 'GET', path);
    return r.status === 404 ? undefined : (r.json as Meta);
  };
  const count = async (path: string) => ((await apiRequest(ctx.serve.baseUrl, 'GET', path)).json as { items: unknown[] }).items.length;

  it('a Fleet with a finalizer gets a deletionTimestamp and stays, with what it owns, until a patch removes the finalizer', async () => {
    const manifest = fleetManifest('held', 2);
    const created = await apiRequest(ctx.serve.baseUrl, 'POST', FLEETS, { body: { ...manifest, metadata: { name: 'held', finalizers: [HOLD] } } });
    expect(created.status, created.text).toBe(201);
    await waitFor(async () => (await count(GAMESERVERS)) === 2, { timeoutMs: seconds(15), what: 'two GameServers' });
    const before = (await get(`${FLEETS}/held`))!;

    expect(await ctx.kubectl.ok(['delete', 'fleet', 'held', '--wait=false'])).toMatch(/fleet.agones.dev "held" deleted/);
    const terminating = (await get(`${FLEETS}/held`))!;
    expect(terminating.metadata).toMatchObject({ finalizers: [HOLD], deletionGracePeriodSeconds: 0, generation: before.metadata.generation + 1 });
    expect(Date.parse(terminating.metadata.deletionTimestamp!)).toBeGreaterThan(0);
    // The background garbage collector waits for the owner to go: its set and GameServers stay.
    expect(await count('/apis/agones.dev/v1/namespaces/default/gameserversets')).toBe(1);
    expect(await count(GAMESERVERS)).toBe(2);

    // Deleting it again changes nothing and answers with the object as it is.
    const again = await apiRequest(ctx.serve.baseUrl, 'DELETE', `${FLEETS}/held`);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ kind: 'Fleet', metadata: { resourceVersion: terminating.metadata.resourceVersion, deletionTimestamp: terminating.metadata.deletionTimestamp } });
    expect((await get(`${FLEETS}/held`))!.metadata.resourceVersion).toBe(terminating.metadata.resourceVersion);

    // No finalizer may be added to an object being deleted.
    const more = await apiRequest(ctx.serve.baseUrl, 'PATCH', `${FLEETS}/held`, {
      body: { metadata: { finalizers: [HOLD, 'example.com/more'] } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    const status = expectStatus(more, 422);
    expect(status.message).toBe(
      'Fleet.agones.dev "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}',
    );

    await ctx.kubectl.ok(['patch', 'fleet', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    expect(await get(`${FLEETS}/held`)).toBeUndefined();
    await waitFor(async () => (await count(GAMESERVERS)) === 0, { timeoutMs: seconds(15), what: 'the GameServers gone with the fleet' });
    expect(await count('/apis/agones.dev/v1/namespaces/default/gameserversets')).toBe(0);
  });

  it('a GameServer with a finalizer of its own stays terminating after its pod has gone (Agones takes only its own finalizer off)', async () => {
    const gameServer = {
      apiVersion: 'agones.dev/v1',
      kind: 'GameServer',
      metadata: { name: 'kept-gs', finalizers: [HOLD] },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    };
    const created = await apiRequest(ctx.serve.baseUrl, 'POST', GAMESERVERS, { body: gameServer });
    expect(created.status, created.text).toBe(201);
    expect((created.json as Meta).metadata.finalizers).toEqual([HOLD, 'agones.dev/controller']);

    const deleted = await apiRequest(ctx.serve.baseUrl, 'DELETE', `${GAMESERVERS}/kept-gs`);
    expect(deleted.status, deleted.text).toBe(200);
    const held = await waitFor(async () => {
      const gs = await get(`${GAMESERVERS}/kept-gs`);
      return gs?.metadata.finalizers?.length === 1 && gs;
    }, { what: 'the GameServer held by its own finalizer only' });
    expect(held.metadata.finalizers).toEqual([HOLD]);
    expect(held.metadata.deletionTimestamp).toBeDefined();

    await ctx.kubectl.ok(['patch', 'gameserver', 'kept-gs', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    expect(await get(`${GAMESERVERS}/kept-gs`)).toBeUndefined();
  });

  it('a namespace being deleted stays Terminating while a finalizer holds something in it, and goes once it is removed', async () => {
    await ctx.kubectl.ok(['create', 'namespace', 'holding']);
    const fleets = '/apis/agones.dev/v1/namespaces/holding/fleets';
    const created = await apiRequest(ctx.serve.baseUrl, 'POST', fleets, { body: { ...fleetManifest('in-ns', 0), metadata: { name: 'in-ns', finalizers: [HOLD] } } });
    expect(created.status, created.text).toBe(201);
    await ctx.kubectl.ok(['delete', 'namespace', 'holding', '--wait=false']);
    const namespace = async () => (await apiRequest(ctx.serve.baseUrl, 'GET', '/api/v1/namespaces/holding')).json as { status?: { phase: string }; code?: number };
    expect((await namespace()).status?.phase).toBe('Terminating');
    expect((await get(`${fleets}/in-ns`))!.metadata.deletionTimestamp).toBeDefined();

    await ctx.kubectl.ok(['patch', 'fleet', 'in-ns', '-n', 'holding', '--type=merge', '-p', '{"metadata":{"finalizers":[]}}']);
    await waitFor(async () => (await namespace()).code === 404, { what: 'the namespace gone' });
  });
});
