import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * A Node lost with GameServers on it, as `kubectl delete node` does it: its pods go with it, so
 * its GameServers turn Unhealthy (Agones's health controller) and their fleet replaces them on the
 * nodes left.
 */

interface GameServerList {
  items: Array<{ metadata: { name: string }; status: { state: string; nodeName: string } }>;
}

describe('a Node deleted', () => {
  let serve: ServeProcess;
  const gameServers = async () => ((await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as GameServerList).items;

  beforeAll(async () => {
    serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--max-pods', '3', '--no-listen']);
    const fleet = fleetManifest('game', 3);
    expect((await apiRequest(serve.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/fleets', { body: fleet })).status).toBe(201);
  });
  afterAll(() => killAll());

  it('makes the GameServers on it Unhealthy, and their fleet replaces them elsewhere', async () => {
    const ready = await waitFor(async () => {
      const list = await gameServers();
      return list.length === 3 && list.every((gs) => gs.status.state === 'Ready') && list;
    }, { timeoutMs: seconds(20), what: 'three Ready GameServers' });
    // Packed: the first node is filled first.
    const lost = ready.filter((gs) => gs.status.nodeName === 'node-1').map((gs) => gs.metadata.name);
    expect(lost.length).toBeGreaterThan(0);

    const deleted = await apiRequest(serve.baseUrl, 'DELETE', '/api/v1/nodes/node-1');
    expect(deleted.status).toBe(200);
    expect((await apiRequest(serve.baseUrl, 'GET', '/api/v1/nodes/node-1')).status).toBe(404);

    await waitFor(async () => {
      const list = await gameServers();
      return list.length === 3 && list.every((gs) => gs.status.state === 'Ready' && gs.status.nodeName === 'node-2' && !lost.includes(gs.metadata.name));
    }, { timeoutMs: seconds(20), what: 'three Ready GameServers on node-2, none of those lost' });
    const events = (await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/events')).json as { items: Array<{ involvedObject: { name: string }; message: string }> };
    expect(events.items.some((e) => e.involvedObject.name === lost[0] && e.message.includes('its node node-1 was deleted'))).toBe(true);
  });
});
