import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAll, startSidecar } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { call, getGameServer } from './helpers/sidecar-http.js';
import { waitFor } from './helpers/wait.js';
import { fleetManifest } from './helpers/manifests.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Restarts on the same log, as a user meets them: `fleetsim serve --db FILE` killed and started
 * again must hand out uids and names no earlier start handed out (deletion cascades by owner
 * uid), and `fleetsim sidecar` keeps a log only when `--db` names one, as `sdk-server --local`
 * forgets everything.
 */

const dirs: string[] = [];
afterEach(() => killAll());
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-restart-'));
  dirs.push(dir);
  return dir;
}

const NS = '/apis/agones.dev/v1/namespaces/default';

interface Listed {
  items: Array<{ metadata: { name: string; uid: string; labels?: Record<string, string> } }>;
}

async function list(server: ServeProcess, path: string): Promise<Listed['items']> {
  const res = await apiRequest(server.baseUrl, 'GET', path);
  expect(res.status).toBe(200);
  return (res.json as Listed).items;
}

const gameServersOf = async (server: ServeProcess, fleetName: string) =>
  (await list(server, `${NS}/gameservers`)).filter((gs) => gs.metadata.labels?.['agones.dev/fleet'] === fleetName);

describe('fleetsim serve restarted on its log', () => {
  it('gives objects created after a restart uids and names no earlier object had', async () => {
    const db = join(tempDir(), 'fleetsim.db');
    // No nodes: the GameServers stay Pending, and nothing but creations draws from the generator.
    const args = ['--db', db, '--no-default-fleet', '--nodes', '0', '--seed', '5'];
    let server = await startServe(args);
    expect((await apiRequest(server.baseUrl, 'POST', `${NS}/fleets`, { body: fleetManifest('first', 3) })).status).toBe(201);
    await waitFor(async () => (await gameServersOf(server, 'first')).length === 3, { what: 'three GameServers of the first fleet' });
    await server.process.kill('SIGKILL');

    server = await startServe(args);
    expect((await apiRequest(server.baseUrl, 'POST', `${NS}/fleets`, { body: fleetManifest('second', 3) })).status).toBe(201);
    await waitFor(async () => (await gameServersOf(server, 'second')).length === 3, { what: 'three GameServers of the second fleet' });

    const everything = [
      ...(await list(server, '/api/v1/nodes')),
      ...(await list(server, `${NS}/fleets`)),
      ...(await list(server, `${NS}/gameserversets`)),
      ...(await list(server, `${NS}/gameservers`)),
    ];
    const uids = everything.map((o) => o.metadata.uid);
    expect(new Set(uids).size).toBe(uids.length);
    const names = (await list(server, `${NS}/gameservers`)).map((o) => o.metadata.name);
    expect(new Set(names).size).toBe(names.length);

    // Deleting the new fleet cascades to its own objects only.
    expect((await apiRequest(server.baseUrl, 'DELETE', `${NS}/fleets/second`)).status).toBe(200);
    await waitFor(async () => (await gameServersOf(server, 'second')).length === 0, { what: 'the second fleet gone' });
    expect(await gameServersOf(server, 'first')).toHaveLength(3);
  });
});

describe('fleetsim serve stopped soon after a start', () => {
  it('exits 0 on SIGTERM while its controllers are still at work, and on one that comes with the serving line', async () => {
    const dir = tempDir();
    const manifest = join(dir, 'fleet.yaml');
    // Thousands of GameServers on their way to Ready: the controllers have work queued when the signal comes.
    writeFileSync(manifest, JSON.stringify(fleetManifest('busy', 3000)));
    const args = ['--no-default-fleet', '--nodes', '40', '--no-listen'];
    for (let round = 0; round < 5; round++) {
      const db = join(dir, `fleetsim-${round}.db`);
      const server = await startServe(['--db', db, ...args, '-f', manifest], seconds(60));
      // The first GameServers Ready while thousands more are still being made and moved on.
      const ready = async () => ((await list(server, `${NS}/gameservers?limit=500`)) as Array<{ status?: { state?: string } }>).some((gs) => gs.status?.state === 'Ready');
      await waitFor(ready, { what: 'the first GameServers Ready', timeoutMs: seconds(30) });
      const status = await server.process.kill('SIGTERM', seconds(30));
      expect(status, server.process.describe()).toEqual({ code: 0, signal: null });
      expect(server.process.stderr).toBe('');
      // Started again on that log, with the fleet still growing, and stopped at once.
      const again = await startServe(['--db', db, ...args], seconds(60));
      expect(await again.process.kill('SIGTERM', seconds(30)), again.process.describe()).toEqual({ code: 0, signal: null });
      expect(again.process.stderr).toBe('');
    }
  }, seconds(300));
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('fleetsim sidecar and its log', () => {
  const setLabel = (baseUrl: string) => call(baseUrl, 'PUT', '/metadata/label', JSON.stringify({ key: 'kept', value: 'yes' }));

  it('starts fresh every time without --db: its log is a temporary file, removed at exit (or by the next start after a kill)', async () => {
    const first = await startSidecar([]);
    expect(first.log).toMatch(new RegExp(`^${escapeRegExp(tmpdir())}/fleetsim-sidecar-\\d+-[^/]+/log\\.db$`));
    expect(existsSync(first.log)).toBe(true);
    expect((await setLabel(first.baseUrl)).status).toBe(200);
    expect((await getGameServer(first.baseUrl)).object_meta.labels['agones.dev/sdk-kept']).toBe('yes');
    await first.process.kill('SIGTERM');
    expect(existsSync(dirname(first.log))).toBe(false);

    const second = await startSidecar([]);
    expect((await getGameServer(second.baseUrl)).object_meta.labels['agones.dev/sdk-kept']).toBeUndefined();
    await second.process.kill('SIGKILL');
    expect(existsSync(second.log)).toBe(true);

    const third = await startSidecar([]);
    expect(existsSync(dirname(second.log))).toBe(false);
    await third.process.kill('SIGTERM');
  });

  it('keeps its state across restarts with --db FILE', async () => {
    const db = join(tempDir(), 'sidecar.db');
    const first = await startSidecar(['--db', db]);
    expect((await setLabel(first.baseUrl)).status).toBe(200);
    await first.process.kill('SIGTERM');

    const second = await startSidecar(['--db', db]);
    expect((await getGameServer(second.baseUrl)).object_meta.labels['agones.dev/sdk-kept']).toBe('yes');
  });
});
