import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ApiResponse, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';

/**
 * Who may make `fleetsim serve` run a command (`fleetsim.dev/command`): only the one who creates
 * a GameServer (or its set or fleet) with it. An allocation, an update or a patch cannot add one
 * later.
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
  await serve?.process.kill('SIGTERM', 10_000);
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
      { timeoutMs: 15_000, intervalMs: 100, what: 'a Ready GameServer' },
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
  }, 40_000);

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
  }, 40_000);
});
