import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe as startServeProcess } from './helpers/serve.js';
import { type TestCa, type TestHttpsServer, createServerCertificate, createTestCa, hasOpenssl, startHttpsServer } from './helpers/tls.js';
import { seconds } from './helpers/time-scale.js';

/**
 * FleetAutoscalers against a real `fleetsim serve` process on the virtual clock, driven only
 * through HTTP: the resource API (as kubectl would), the GameServers' sidecars (as game servers
 * would), and `POST /fleetsim/v1/clock` to move time. Nothing sleeps: time moves by request, and
 * each wait checks a condition after every step.
 */

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const AUTOSCALERS = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
const EVENTS = '/api/v1/namespaces/default/events';

type Serve = ServeProcess;

const startServe = (extra: readonly string[] = []): Promise<Serve> =>
  startServeProcess(['--clock', 'virtual', '--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--no-listen', ...extra]);

function request(serve: Serve, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const mergePatch = method === 'PATCH' && path.startsWith('/apis');
  return apiRequest(serve.baseUrl, method, path, { body, timeoutMs: seconds(30), ...(mergePatch && { headers: { 'content-type': 'application/merge-patch+json' } }) });
}

async function create(serve: Serve, collection: string, body: unknown): Promise<void> {
  const res = await request(serve, 'POST', collection, body);
  expect(res.status, `POST ${collection}: ${res.text}`).toBe(201);
}

interface Fleet {
  spec: { replicas: number };
  status?: { replicas: number; readyReplicas: number; allocatedReplicas: number };
}
interface GameServerItem {
  metadata: { name: string; labels: Record<string, string> };
  status?: { state?: string };
}
interface EventItem {
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string };
}
interface AutoscalerStatus {
  currentReplicas: number;
  desiredReplicas: number;
  lastScaleTime: string | null;
  ableToScale: boolean;
  scalingLimited: boolean;
  lastAppliedPolicy: string;
}

async function getJson<T>(serve: Serve, path: string): Promise<T> {
  const res = await request(serve, 'GET', path);
  expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
  return res.json as T;
}

const fleet = (serve: Serve, name: string) => getJson<Fleet>(serve, `${FLEETS}/${name}`);
const autoscalerStatus = async (serve: Serve, name: string) =>
  (await getJson<{ status?: AutoscalerStatus }>(serve, `${AUTOSCALERS}/${name}`)).status;
const gameServers = async (serve: Serve, fleetName: string) =>
  (await getJson<{ items: GameServerItem[] }>(serve, `${GAMESERVERS}?labelSelector=${encodeURIComponent(`agones.dev/fleet=${fleetName}`)}`)).items;
const inState = async (serve: Serve, fleetName: string, state: string) =>
  (await gameServers(serve, fleetName)).filter((gs) => gs.status?.state === state);
const eventsOf = async (serve: Serve, autoscaler: string) =>
  (await getJson<{ items: EventItem[] }>(serve, EVENTS)).items.filter(
    (e) => e.involvedObject.kind === 'FleetAutoscaler' && e.involvedObject.name === autoscaler,
  );

async function advance(serve: Serve, seconds: number): Promise<void> {
  const res = await request(serve, 'POST', '/fleetsim/v1/clock', { advanceSeconds: seconds });
  expect(res.status, res.text).toBe(200);
}

/**
 * Moves the virtual clock `stepSeconds` at a time until `check` holds (checked before each step,
 * so work that needs real time, like a webhook call, gets the request round trips in between).
 */
async function advanceUntil(serve: Serve, what: string, check: () => Promise<boolean>, stepSeconds = 1, maxSteps = 300): Promise<void> {
  for (let step = 0; step <= maxSteps; step++) {
    if (await check()) return;
    await advance(serve, stepSeconds);
  }
  throw new Error(`${what}: not reached after ${maxSteps} steps of ${stepSeconds} s\n${serve.process.describe()}`);
}

function fleetBody(name: string, replicas: number, templateSpec: Record<string, unknown> = {}) {
  return fleetManifest(name, replicas, {
    spec: { health: { disabled: true }, ...templateSpec },
    containers: [{ name: 'simple-game-server', image: 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.35' }],
  });
}

function autoscalerBody(name: string, fleetName: string, policy: Record<string, unknown>, sync?: Record<string, unknown>) {
  return { apiVersion: 'autoscaling.agones.dev/v1', kind: 'FleetAutoscaler', metadata: { name }, spec: { fleetName, policy, ...(sync && { sync }) } };
}

afterAll(async () => {
  await killAll();
});

describe('fleetsim serve: Buffer and Webhook autoscalers', () => {
  let serve: Serve;

  beforeAll(async () => {
    serve = await startServe();
  });

  it('a Buffer autoscaler refills its buffer as GameServers are allocated through their sidecars', async () => {
    await create(serve, FLEETS, fleetBody('buffered', 1));
    await create(serve, AUTOSCALERS, autoscalerBody('buffered-fas', 'buffered', { type: 'Buffer', buffer: { bufferSize: 2, maxReplicas: 10 } }));

    await advanceUntil(serve, 'two Ready GameServers', async () => (await fleet(serve, 'buffered')).spec.replicas === 2 && (await inState(serve, 'buffered', 'Ready')).length === 2);
    expect((await eventsOf(serve, 'buffered-fas')).map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Normal', 'AutoScalingFleet', 'Scaling fleet buffered from 1 to 2'],
    ]);

    const [first] = await inState(serve, 'buffered', 'Ready');
    const allocated = await request(serve, 'POST', `/sdk/default/${first!.metadata.name}/allocate`, {});
    expect(allocated.status, allocated.text).toBe(200);

    // The next sync (within 30 s) wants 1 allocated + 2 ready.
    await advanceUntil(
      serve,
      'the buffer refilled',
      async () => {
        const f = await fleet(serve, 'buffered');
        return f.spec.replicas === 3 && f.status?.allocatedReplicas === 1 && f.status.readyReplicas === 2;
      },
      5,
      60,
    );
    expect((await eventsOf(serve, 'buffered-fas')).map((e) => e.message)).toContain('Scaling fleet buffered from 2 to 3');
    expect(await autoscalerStatus(serve, 'buffered-fas')).toMatchObject({ desiredReplicas: 3, ableToScale: true, scalingLimited: false });
  });

  describe.skipIf(!hasOpenssl())('webhooks over HTTPS', () => {
    let ca: TestCa;
    let otherCa: TestCa;
    let hook: TestHttpsServer;
    const reviews: unknown[] = [];

    beforeAll(async () => {
      ca = createTestCa();
      otherCa = createTestCa('a CA nobody trusts');
      hook = await startHttpsServer(createServerCertificate(ca), (_req, body, res: ServerResponse) => {
        const review = JSON.parse(body) as { request: { uid: string; status: { allocatedReplicas: number } } };
        reviews.push(review);
        // A webhook of its own: one allocated server plus three spare.
        const replicas = review.request.status.allocatedReplicas + 3;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ response: { uid: review.request.uid, scale: true, replicas } }));
      });
    });

    afterAll(async () => {
      await hook?.close();
    });

    it('a Webhook autoscaler scales the fleet to what a trusted HTTPS webhook answers', async () => {
      await create(serve, FLEETS, fleetBody('hooked', 1));
      await create(
        serve,
        AUTOSCALERS,
        autoscalerBody('hooked-fas', 'hooked', { type: 'Webhook', webhook: { url: `${hook.baseUrl}/scale`, caBundle: ca.caBundle } }),
      );
      await advanceUntil(serve, 'the fleet scaled by the webhook', async () => (await fleet(serve, 'hooked')).spec.replicas === 3);
      // The autoscaler writes its status after the Fleet, as Agones's does: a read in between sees the one before.
      await advanceUntil(serve, "the autoscaler's status", async () => (await autoscalerStatus(serve, 'hooked-fas'))?.desiredReplicas === 3);
      expect(await autoscalerStatus(serve, 'hooked-fas')).toMatchObject({ desiredReplicas: 3, ableToScale: true, scalingLimited: false });
      expect(reviews[0]).toMatchObject({ request: { name: 'hooked', namespace: 'default', status: { replicas: expect.any(Number) as number } } });
      expect((await eventsOf(serve, 'hooked-fas')).map((e) => e.message)).toEqual(['Scaling fleet hooked from 1 to 3']);
    });

    it('a webhook whose certificate is not trusted does not scale: a Warning Event, and no status (unable to scale is the zero status, which Agones leaves unwritten)', async () => {
      await create(serve, FLEETS, fleetBody('guarded', 2));
      await create(
        serve,
        AUTOSCALERS,
        autoscalerBody('guarded-fas', 'guarded', { type: 'Webhook', webhook: { url: `${hook.baseUrl}/scale`, caBundle: otherCa.caBundle } }),
      );
      await advanceUntil(serve, 'the Warning Event', async () => (await eventsOf(serve, 'guarded-fas')).length > 0);
      expect(await autoscalerStatus(serve, 'guarded-fas')).toBeUndefined();
      expect((await fleet(serve, 'guarded')).spec.replicas).toBe(2);
      const [warning] = await eventsOf(serve, 'guarded-fas');
      expect(warning).toMatchObject({ type: 'Warning', reason: 'FleetAutoscaler' });
      expect(warning!.message).toMatch(/^Error calculating desired fleet size on FleetAutoscaler guarded-fas\. Error: the certificate of the webhook .* is not trusted/);
    });
  });
});

describe('fleetsim serve --feature-gates CountsAndLists=true: a Counter autoscaler', () => {
  let serve: Serve;

  beforeAll(async () => {
    serve = await startServe(['--feature-gates', 'CountsAndLists=true']);
  });

  it('adds GameServers as rooms fill through the sidecar counters API', async () => {
    await create(serve, FLEETS, fleetBody('rooms', 1, { counters: { rooms: { count: 0, capacity: 10 } } }));
    await create(
      serve,
      AUTOSCALERS,
      autoscalerBody('rooms-fas', 'rooms', { type: 'Counter', counter: { key: 'rooms', bufferSize: 5, maxCapacity: 100 } }),
    );
    await advanceUntil(serve, 'one Ready GameServer', async () => (await inState(serve, 'rooms', 'Ready')).length === 1);
    // 10 rooms free, 5 wanted: one server is enough.
    expect((await fleet(serve, 'rooms')).spec.replicas).toBe(1);

    const [gs] = await inState(serve, 'rooms', 'Ready');
    const filled = await request(serve, 'PATCH', `/sdk/default/${gs!.metadata.name}/v1beta1/counters/rooms`, { countDiff: 6 });
    expect(filled.status, filled.text).toBe(200);

    // 4 rooms free < 5: one more server at the next sync.
    await advanceUntil(
      serve,
      'a second Ready GameServer',
      async () => (await fleet(serve, 'rooms')).spec.replicas === 2 && (await inState(serve, 'rooms', 'Ready')).length === 2,
      5,
      60,
    );
    expect((await eventsOf(serve, 'rooms-fas')).map((e) => e.message)).toContain('Scaling fleet rooms from 1 to 2');
    expect(await autoscalerStatus(serve, 'rooms-fas')).toMatchObject({ desiredReplicas: 2, ableToScale: true });
  });
});

describe('fleetsim serve: Schedule and Chain autoscalers on the virtual clock (which starts at 2026-01-01T00:00:00Z)', () => {
  let serve: Serve;

  beforeAll(async () => {
    serve = await startServe();
  });

  const bufferPolicy = (bufferSize: number) => ({ type: 'Buffer', buffer: { bufferSize, maxReplicas: 50 } });
  const everyFiveSeconds = { type: 'FixedInterval', fixedInterval: { seconds: 5 } };
  const chainEvents = async (name: string) => (await eventsOf(serve, name)).filter((e) => e.reason === 'ChainPolicy').map((e) => [e.type, e.message]);
  const now = async () => Date.parse((await getJson<{ now: string }>(serve, '/fleetsim/v1/clock')).now);

  it('a Chain scales by its schedule entry from 00:10 for 30 minutes, and by its default entry before and after', async () => {
    await create(serve, FLEETS, fleetBody('launch', 1));
    const launchChain = {
      type: 'Chain',
      chain: [
        {
          id: 'launch-window',
          type: 'Schedule',
          schedule: {
            between: { start: '2026-01-01T00:10:00Z' },
            activePeriod: { timezone: 'UTC', startCron: '10 0 * * *', duration: '30m' },
            policy: bufferPolicy(10),
          },
        },
        { id: 'default', ...bufferPolicy(2) },
      ],
    };
    await create(serve, AUTOSCALERS, autoscalerBody('launch-fas', 'launch', launchChain, everyFiveSeconds));

    await advanceUntil(serve, 'the default entry applied', async () => (await autoscalerStatus(serve, 'launch-fas'))?.lastAppliedPolicy === 'Chain:default:Buffer');
    expect((await fleet(serve, 'launch')).spec.replicas).toBe(2);
    expect(await chainEvents('launch-fas')).toEqual([['Normal', "FleetAutoscaler 'launch-fas' successfully applied ChainPolicy | ID: default | Type: Buffer"]]);

    await advanceUntil(serve, 'the launch window applied', async () => (await fleet(serve, 'launch')).spec.replicas === 10, 30, 40);
    expect(await now()).toBeGreaterThanOrEqual(Date.parse('2026-01-01T00:10:00Z'));
    expect(await autoscalerStatus(serve, 'launch-fas')).toMatchObject({ desiredReplicas: 10, ableToScale: true, lastAppliedPolicy: 'Chain:launch-window:Schedule' });
    expect((await chainEvents('launch-fas')).at(-1)).toEqual([
      'Normal',
      "FleetAutoscaler 'launch-fas' successfully applied ChainPolicy | ID: launch-window | Type: Schedule",
    ]);

    await advanceUntil(serve, 'back to the default entry', async () => (await fleet(serve, 'launch')).spec.replicas === 2, 30, 80);
    expect(await now()).toBeGreaterThanOrEqual(Date.parse('2026-01-01T00:40:00Z'));
    expect(await autoscalerStatus(serve, 'launch-fas')).toMatchObject({ desiredReplicas: 2, ableToScale: true, lastAppliedPolicy: 'Chain:default:Buffer' });
    expect(await chainEvents('launch-fas')).toHaveLength(3);
    expect((await eventsOf(serve, 'launch-fas')).filter((e) => e.type === 'Warning')).toEqual([]);
  });

  it('a Schedule that is not active leaves the fleet alone, with no Warning and no status', async () => {
    await create(serve, FLEETS, fleetBody('quiet', 1));
    const from2030 = { type: 'Schedule', schedule: { between: { start: '2030-01-01T00:00:00Z' }, policy: bufferPolicy(5) } };
    await create(serve, AUTOSCALERS, autoscalerBody('quiet-fas', 'quiet', from2030, everyFiveSeconds));
    await advanceUntil(serve, 'one Ready GameServer', async () => (await inState(serve, 'quiet', 'Ready')).length === 1);
    await advance(serve, 60);
    expect((await fleet(serve, 'quiet')).spec.replicas).toBe(1);
    expect(await eventsOf(serve, 'quiet-fas')).toEqual([]);
    expect(await autoscalerStatus(serve, 'quiet-fas')).toBeUndefined();
  });
});
