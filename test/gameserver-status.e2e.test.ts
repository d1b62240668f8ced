import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * A GameServer's status is not a subresource (Agones's CRD has none): one update changes spec and
 * status together, and the controllers act on the state written, as Agones's do — what Agones's
 * own end-to-end tests rely on to mark a server Reserved, RequestReady or Shutdown.
 */

const GS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';

interface GameServer {
  metadata: { name: string; resourceVersion: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
  status: { state: string; reservedUntil?: string | null };
}

describe('a GameServer update writes its status', () => {
  let serve: ServeProcess;
  const api = (method: string, path: string, body?: unknown) => apiRequest(serve.baseUrl, method, path, body === undefined ? {} : { body });
  const get = async (name: string) => (await api('GET', `${GS}/${name}`)).json as GameServer;
  const ready = async () => {
    const list = (await api('GET', `${GS}?labelSelector=agones.dev%2Ffleet%3Dstates`)).json as { items: GameServer[] };
    return list.items.filter((gs) => gs.status.state === 'Ready');
  };
  const update = async (gs: GameServer, state: string) => {
    const res = await api('PUT', `${GS}/${gs.metadata.name}`, { ...gs, status: { ...gs.status, state } });
    expect(res.status, res.text).toBe(200);
    return res.json as GameServer;
  };

  beforeAll(async () => {
    serve = await startServe();
    const created = await api('POST', FLEETS, fleetManifest('states', 3));
    expect(created.status, created.text).toBe(201);
    await waitFor(async () => (await ready()).length === 3, { timeoutMs: seconds(15), what: '3 Ready GameServers' });
  });
  afterAll(() => killAll());

  it('Reserved by an update counts as reserved in its fleet, with labels changed in the same write', async () => {
    const [gs] = await ready();
    const written = await api('PUT', `${GS}/${gs!.metadata.name}`, {
      ...gs,
      metadata: { ...gs!.metadata, labels: { ...gs!.metadata.labels, held: 'yes' } },
      status: { ...gs!.status, state: 'Reserved' },
    });
    expect(written.status, written.text).toBe(200);
    expect(written.json).toMatchObject({ metadata: { labels: { held: 'yes' } }, status: { state: 'Reserved' } });
    expect((await get(gs!.metadata.name)).status.state).toBe('Reserved');
    await waitFor(
      async () => {
        const status = ((await api('GET', `${FLEETS}/states`)).json as { status?: { reservedReplicas?: number; readyReplicas?: number } }).status;
        return status?.reservedReplicas === 1 && status.readyReplicas === 2;
      },
      { what: 'the fleet counting 1 reserved and 2 ready' },
    );
  });

  it('RequestReady by an update is made Ready again by the controller', async () => {
    const [gs] = await ready();
    expect((await update(gs!, 'RequestReady')).status.state).toBe('RequestReady');
    await waitFor(async () => (await get(gs!.metadata.name)).status.state === 'Ready', { what: 'Ready again' });
  });

  it('Shutdown by an update deletes the GameServer, and its fleet replaces it', async () => {
    const [gs] = await ready();
    await update(gs!, 'Shutdown');
    await waitFor(async () => (await api('GET', `${GS}/${gs!.metadata.name}`)).status === 404, { what: 'the GameServer deleted' });
    await waitFor(async () => (await ready()).length === 2, { timeoutMs: seconds(15), what: 'a replacement (2 Ready beside the Reserved one)' });
  });

  it('a state outside the enum is refused, naming the field, and changes nothing', async () => {
    const [gs] = await ready();
    const res = await api('PUT', `${GS}/${gs!.metadata.name}`, { ...gs, status: { ...gs!.status, state: 'Sleeping' } });
    expect(res.status).toBe(422);
    expect(res.text).toContain('status.state');
    expect((await get(gs!.metadata.name)).status.state).toBe('Ready');
  });

  it('a stale resourceVersion is a conflict and the status stays', async () => {
    const [gs] = await ready();
    const moved = await apiRequest(serve.baseUrl, 'PATCH', `${GS}/${gs!.metadata.name}`, {
      body: { metadata: { labels: { touched: 'x' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(moved.status, moved.text).toBe(200);
    const res = await api('PUT', `${GS}/${gs!.metadata.name}`, { ...gs, status: { ...gs!.status, state: 'Allocated' } });
    expect(res.status).toBe(409);
    expect((await get(gs!.metadata.name)).status.state).toBe('Ready');
  });
});
