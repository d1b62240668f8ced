import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll, runCli } from './helpers/process.js';
import { type ApiResponse, DEFAULT_SERVE_ARGS, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Who may make `fleetsim serve` run a command (`fleetsim.dev/command`): only the one who creates
 * a GameServer (or its set or fleet) with it. An allocation, an update or a patch cannot add one
 * later; and beyond loopback nobody can unless serve was started with --allow-commands.
 */

const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';

interface Cause {
  reason: string;
  field: string;
  message: string;
}
const causes = (r: ApiResponse) => (r.json as { details?: { causes?: Cause[] } }).details?.causes ?? [];

let out: string;
let serve: ServeProcess | undefined;

const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => apiRequest(serve!.baseUrl, method, path, { body, headers });
const mergePatch = (path: string, body: unknown) => api('PATCH', path, body, { 'content-type': 'application/merge-patch+json' });

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'fleetsim-commands-'));
});
afterEach(async () => {
  await serve?.process.kill('SIGTERM', seconds(10));
  await killAll();
  serve = undefined;
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('commands only from whoever creates the GameServer', () => {
  it('refuses an allocation that sets a fleetsim.dev/ annotation, on the allocator and on the resource API, allocating nothing (S1)', async () => {
    serve = await startServe();
    expect((await api('POST', FLEETS, fleetManifest('sim', 1))).status).toBe(201);
    const [ready] = await waitFor(
      async () => {
        const items = ((await api('GET', `${GAMESERVERS}?labelSelector=agones.dev/fleet=sim`)).json as { items: Array<{ metadata: { name: string }; status: { state: string } }> }).items;
        return items.length === 1 && items[0]!.status.state === 'Ready' && items;
      },
      { timeoutMs: seconds(15), intervalMs: 100, what: 'a Ready GameServer' },
    );
    const marker = join(out, 'allocation-ran');
    const annotations = { 'fleetsim.dev/command': `touch ${marker}` };

    const allocator = await api('POST', '/gameserverallocation', {
      namespace: 'default',
      gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'sim' } }],
      metadata: { annotations },
    });
    expect(allocator.status, allocator.text).toBe(400);
    expect(allocator.json).toMatchObject({ code: 3, details: [] });
    expect((allocator.json as { message: string }).message).toMatch(/spec\.metadata\.annotations\[fleetsim\.dev\/command\]: Forbidden: fleetsim\.dev\/ annotations are fixed when the GameServer is created/);

    const resource = await api('POST', '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations', {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': 'sim' } }], metadata: { annotations: { ...annotations, 'fleetsim.dev/process-profile': 'none' } } },
    });
    expect(resource.status, resource.text).toBe(422);
    expect(causes(resource).map((c) => [c.reason, c.field])).toEqual([
      ['FieldValueForbidden', 'spec.metadata.annotations[fleetsim.dev/command]'],
      ['FieldValueForbidden', 'spec.metadata.annotations[fleetsim.dev/process-profile]'],
    ]);

    // Nothing was allocated: the GameServer is Ready, without the annotation.
    const after = (await api('GET', `${GAMESERVERS}/${ready!.metadata.name}`)).json as { metadata: { annotations: Record<string, string> }; status: { state: string } };
    expect(after.status.state).toBe('Ready');
    expect(after.metadata.annotations['fleetsim.dev/command']).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses an update or patch that adds, changes or removes a GameServer\'s fleetsim.dev/ annotation, naming it, and leaves its other annotations writable (S4)', async () => {
    serve = await startServe();
    // No process: it stays Scheduled, as a GameServer whose pod runs but has not said Ready.
    const created = await api('POST', GAMESERVERS, {
      apiVersion: 'agones.dev/v1',
      kind: 'GameServer',
      metadata: { name: 'idle', annotations: { 'fleetsim.dev/process-profile': 'none' } },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
    expect(created.status, created.text).toBe(201);
    await waitFor(async () => ((await api('GET', `${GAMESERVERS}/idle`)).json as { status: { state: string } }).status.state === 'Scheduled', {
      what: 'the GameServer Scheduled',
    });
    const marker = join(out, 'patch-ran');

    const added = await mergePatch(`${GAMESERVERS}/idle`, { metadata: { annotations: { 'fleetsim.dev/command': `touch ${marker}` } } });
    expect(added.status, added.text).toBe(422);
    expect(causes(added)).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'metadata.annotations[fleetsim.dev/command]',
        message: expect.stringMatching(/^Forbidden: fleetsim\.dev\/ annotations are fixed when the GameServer is created .*: they may not be added, changed or removed later$/),
      },
    ]);
    const removed = await mergePatch(`${GAMESERVERS}/idle`, { metadata: { annotations: { 'fleetsim.dev/process-profile': null } } });
    expect(removed.status, removed.text).toBe(422);
    expect(causes(removed).map((c) => c.field)).toEqual(['metadata.annotations[fleetsim.dev/process-profile]']);

    const current = (await api('GET', `${GAMESERVERS}/idle`)).json as { metadata: { annotations: Record<string, string> } };
    const changed = await api('PUT', `${GAMESERVERS}/idle`, {
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, 'fleetsim.dev/process-profile': 'default' } },
    });
    expect(changed.status, changed.text).toBe(422);
    expect(causes(changed).map((c) => c.field)).toEqual(['metadata.annotations[fleetsim.dev/process-profile]']);

    const other = await mergePatch(`${GAMESERVERS}/idle`, { metadata: { annotations: { note: 'kept' } } });
    expect(other.status, other.text).toBe(200);
    expect((other.json as { metadata: { annotations: Record<string, string> } }).metadata.annotations).toMatchObject({
      note: 'kept',
      'fleetsim.dev/process-profile': 'none',
    });
    expect((other.json as { metadata: { annotations: Record<string, string> } }).metadata.annotations['fleetsim.dev/command']).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });

  it('beyond loopback, runs no command unless --allow-commands: a log holding one is refused at start-up, a write is a 422, and the banner and --help say what the flag means (S3)', async () => {
    const db = join(out, 'beyond.db');
    const marker = join(out, 'beyond-ran');
    const command = { 'fleetsim.dev/command': `touch ${marker}` };
    serve = await startServe(['--db', db, '--no-default-fleet', '--no-listen']);
    // The banner's last line on loopback: nothing about commands follows it.
    await serve.process.waitForStdout(/^ {2}kubectl .*get fleets,gameservers\n/m);
    expect(serve.process.stdout).not.toMatch(/commands:/);
    expect((await api('POST', FLEETS, fleetManifest('cmd', 0, { annotations: command }))).status).toBe(201);
    await serve.process.kill('SIGTERM', seconds(10));

    const refused = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--db', db, '--no-default-fleet', '--no-listen']);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    // One line, naming what holds the command (the fleet, or the set it made) and why it is refused.
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^fleetsim serve: the log holds (Fleet default\/cmd|GameServerSet default\/cmd-\w+), which runs a command \(spec\.template\.metadata\.annotations\[fleetsim\.dev\/command\]\), but commands are off: serve listens on 0\.0\.0\.0, beyond loopback, without --allow-commands$/,
      ),
    ]);

    serve = await startServe([...DEFAULT_SERVE_ARGS, '--host', '0.0.0.0']);
    await serve.process.waitForStdout(/^ {2}commands: off \(serve listens on 0\.0\.0\.0, beyond loopback, without --allow-commands\)/m);
    const gameServer = await api('POST', GAMESERVERS, {
      metadata: { name: 'beyond', annotations: command },
      spec: { ports: [{ name: 'default', containerPort: 7654 }], template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } },
    });
    expect(gameServer.status, gameServer.text).toBe(422);
    expect(causes(gameServer)).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'metadata.annotations[fleetsim.dev/command]',
        message: 'Forbidden: commands are off: serve listens on 0.0.0.0, beyond loopback, without --allow-commands',
      },
    ]);
    const fleet = await api('POST', FLEETS, fleetManifest('beyond', 1, { annotations: command }));
    expect(fleet.status, fleet.text).toBe(422);
    expect(causes(fleet).map((c) => c.field)).toEqual(['spec.template.metadata.annotations[fleetsim.dev/command]']);
    await serve.process.kill('SIGTERM', seconds(10));

    serve = await startServe(['--db', db, '--no-default-fleet', '--no-listen', '--host', '0.0.0.0', '--allow-commands']);
    await serve.process.waitForStdout(/^ {2}commands: on \(--allow-commands\): anyone who can reach this server can run any command on this machine as (user|uid) \S+$/m);
    expect(((await api('GET', `${FLEETS}/cmd`)).json as { metadata: { name: string } }).metadata.name).toBe('cmd');
    expect(existsSync(marker)).toBe(false);

    const help = await runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/--allow-commands +run GameServers' commands \(fleetsim\.dev\/command\) even when --host is not loopback: anyone who can reach the port can then run any command on this machine as this user/);
  });
});
