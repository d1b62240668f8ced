import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsIn } from './helpers/log-file.js';
import { fleetManifest } from './helpers/manifests.js';
import { killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { tempDir } from './helpers/temp-dir.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `fleetsim serve --db LOG --read-only`: a log (here a stopped serve's) served as it ends —
 * reads, the dashboard's timeline, explain and metrics — with nothing running and every write
 * refused, the log left as it was.
 */

interface List {
  items: Array<{ metadata: { name: string }; status: { state?: string; readyReplicas?: number } }>;
}

describe.sequential('serve --read-only', () => {
  let dir: string;
  let db: string;
  let server: ServeProcess;
  let events: number;

  const eventCount = () => eventsIn(db).length;

  beforeAll(async () => {
    dir = tempDir('fleetsim-read-only-');
    db = join(dir, 'cluster.db');
    const live = await startServe(['--db', db, '--no-default-fleet', '--nodes', '2', '--no-listen']);
    const fleet = fleetManifest('game', 2);
    expect((await apiRequest(live.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/fleets', { body: fleet })).status).toBe(201);
    await waitFor(async () => ((await apiRequest(live.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as List).items.filter((gs) => gs.status.state === 'Ready').length === 2, {
      timeoutMs: seconds(20),
      what: 'two Ready GameServers',
    });
    expect((await live.process.kill('SIGTERM')).code).toBe(0);
    events = eventCount();
    server = await startServe(['--db', db, '--read-only']);
  });
  afterAll(() => killAll());

  it('says what it serves', () => {
    expect(server.process.stdout).toMatch(new RegExp(`^read-only: .*cluster\\.db as it ends \\(${events} events, the last at \\S+\\); nothing runs, and writes are answered 405$`, 'm'));
  });

  it('serves the log as it ends: objects, the dashboard state, explain, metrics', async () => {
    const gameServers = (await apiRequest(server.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as List;
    expect(gameServers.items.map((gs) => gs.status.state)).toEqual(['Ready', 'Ready']);
    const fleet = (await apiRequest(server.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/fleets/game')).json as List['items'][number];
    expect(fleet.status.readyReplicas).toBe(2);
    const state = (await apiRequest(server.baseUrl, 'GET', '/fleetsim/v1/state?seq=1')).json as { seq: number; live: boolean };
    expect(state).toMatchObject({ seq: 1, live: false });
    const explained = await apiRequest(server.baseUrl, 'GET', '/fleetsim/v1/explain/fleet/default/game');
    expect(explained.status).toBe(200);
    const metrics = await apiRequest(server.baseUrl, 'GET', '/metrics');
    expect(metrics.text).toMatch(/^agones_gameservers_count\{type="Ready",fleet_name="game",namespace="default"\} 2$/m);
  });

  it('refuses every write with 405, and runs nothing: the log is left as it was', async () => {
    for (const [method, path] of [
      ['POST', '/apis/agones.dev/v1/namespaces/default/fleets'],
      ['PATCH', '/apis/agones.dev/v1/namespaces/default/fleets/game'],
      ['DELETE', '/apis/agones.dev/v1/namespaces/default/gameservers/x'],
      ['POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations'],
      ['POST', '/fleetsim/v1/clock'],
    ]) {
      const answer = await apiRequest(server.baseUrl, method!, path!, { body: {} });
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.json).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
      expect((answer.json as { message: string }).message).toBe(`fleetsim serve --read-only: ${method} ${path} would change the cluster, and this server only shows the log ${db} as it ends`);
    }
    expect(eventCount()).toBe(events);
  });

  it('takes no flag that would build or run a cluster, and needs a log', async () => {
    const nodes = await runCli(['serve', '--db', db, '--read-only', '--nodes', '3']);
    expect(nodes.code).toBe(2);
    expect(nodes.stderr).toBe('fleetsim serve: --nodes: serve --read-only runs nothing and changes nothing, so it takes no --nodes\n');
    const missing = await runCli(['serve', '--db', join(dir, 'none.db'), '--read-only', '--port', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no event log at .*none\.db: --read-only serves an existing log/);
  });
});
