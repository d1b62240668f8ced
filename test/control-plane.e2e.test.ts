import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { skipWithout } from './helpers/tools.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Agones's control plane in agones-system, with the real kubectl: the Deployments
 * agones-controller, agones-extensions and agones-allocator, read-only, and their pods, found by
 * the labels Agones's e2e subpackages list them by, and replaced when deleted.
 */

interface Pod {
  metadata: { name: string; labels: Record<string, string> };
  status: { phase: string; containerStatuses: Array<{ ready: boolean; state: { running?: unknown } }> };
}
interface Deployment {
  metadata: { name: string };
  spec: { replicas: number };
  status: { replicas: number; availableReplicas: number; readyReplicas: number };
}

const NS = ['-n', 'agones-system'];

afterAll(() => killAll());

describe.sequential("Agones's control-plane Deployments and pods, with kubectl", () => {
  skipWithout(KUBECTL);
  let serve: ServeProcess;
  let kubectl: Kubectl;
  const pods = async (selector: string) => (await kubectl.json<{ items: Pod[] }>(['get', 'pods', ...NS, '-l', selector])).items;

  beforeAll(async () => {
    serve = await startServe();
    kubectl = new Kubectl(serve.baseUrl, mkdtempSync(join(tmpdir(), 'fleetsim-control-plane-')));
  });

  it('lists the Deployments with their replicas, all available', async () => {
    const rows = (await kubectl.ok(['get', 'deploy', ...NS])).trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 4).join(' ')).sort()).toEqual([
      'agones-allocator 3/3 3 3',
      'agones-controller 2/2 2 2',
      'agones-extensions 2/2 2 2',
    ]);
    const allocator = await kubectl.json<Deployment>(['get', 'deployment', ...NS, 'agones-allocator']);
    expect(allocator.spec.replicas).toBe(3);
    expect(allocator.status.availableReplicas).toBe(allocator.status.replicas);
  });

  it('lists each Deployment\'s pods by the labels Agones gives them, Running', async () => {
    for (const [selector, count] of [['agones.dev/role=controller', 2], ['agones.dev/role=extensions', 2], ['multicluster.agones.dev/role=allocator', 3]] as const) {
      const found = await pods(selector);
      expect(found, selector).toHaveLength(count);
      for (const pod of found) {
        expect(pod.status.phase).toBe('Running');
        expect(pod.status.containerStatuses.every((c) => c.ready && c.state.running)).toBe(true);
      }
    }
    const rows = (await kubectl.ok(['get', 'pods', ...NS])).trim().split('\n');
    expect(rows).toHaveLength(1 + 7);
    expect(rows.slice(1).every((r) => /^agones-(controller|extensions|allocator)-\S+\s+1\/1\s+Running\s+0\s/.test(r))).toBe(true);
  });

  it('replaces a deleted pod with a new one, Running', async () => {
    const before = await pods('multicluster.agones.dev/role=allocator');
    const gone = before[1]!.metadata.name;
    const watch = kubectl.stream(['get', 'pods', ...NS, '-l', 'multicluster.agones.dev/role=allocator', '-w', '--output-watch-events']);
    await waitFor(() => watch.lines().length >= 4, { what: 'the watch listing' });
    await kubectl.ok(['delete', 'pod', ...NS, gone]);
    const after = await waitFor(
      async () => {
        const now = await pods('multicluster.agones.dev/role=allocator');
        return now.length === 3 && !now.some((p) => p.metadata.name === gone) ? now : undefined;
      },
      { what: 'a replacement allocator pod', timeoutMs: seconds(30), intervalMs: 200 },
    );
    const added = after.filter((p) => !before.some((b) => b.metadata.name === p.metadata.name));
    expect(added).toHaveLength(1);
    expect(added[0]!.status.phase).toBe('Running');
    expect(added[0]!.metadata.name).toMatch(/^agones-allocator-[a-z0-9]{10}-[a-z0-9]{5}$/);
    expect((await kubectl.run(['get', 'pod', ...NS, gone])).stderr).toMatch(/NotFound|not found/);
    await waitFor(() => watch.lines().some((l) => l.startsWith('DELETED') && l.includes(gone)), { what: 'DELETED on the watch' });
    await waitFor(() => watch.lines().some((l) => l.startsWith('ADDED') && l.includes(added[0]!.metadata.name)), { what: 'the replacement ADDED on the watch' });
    // The Deployment stays whole.
    const allocator = await kubectl.json<Deployment>(['get', 'deployment', ...NS, 'agones-allocator']);
    expect(allocator.status.availableReplicas).toBe(3);
  });

  it('refuses writes of a Deployment with a clear error, changing nothing', async () => {
    const scale = await kubectl.run(['scale', 'deployment', ...NS, 'agones-controller', '--replicas', '5']);
    expect(scale.code).not.toBe(0);
    const patch = await kubectl.run(['patch', 'deployment', ...NS, 'agones-controller', '--type', 'merge', '-p', '{"spec":{"replicas":5}}']);
    expect(patch.code).not.toBe(0);
    expect(patch.stderr).toMatch(/MethodNotAllowed|not allowed|cannot be changed/i);
    const deleted = await apiRequest(serve.baseUrl, 'DELETE', '/apis/apps/v1/namespaces/agones-system/deployments/agones-controller');
    expect(deleted.status).toBe(405);
    expect(deleted.json).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    expect(JSON.stringify(deleted.json)).toMatch(/deployments/);
    const controller = await kubectl.json<Deployment>(['get', 'deployment', ...NS, 'agones-controller']);
    expect(controller.spec.replicas).toBe(2);
    expect(await pods('agones.dev/role=controller')).toHaveLength(2);
  });
});

describe("Agones's control plane on a log served again", () => {
  it('comes back as the log left it: a replacement pod is in the log, and nothing is installed twice', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'fleetsim-control-plane-log-')), 'log.db');
    const args = ['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen'];
    const names = async (server: ServeProcess) => {
      const r = await apiRequest(server.baseUrl, 'GET', '/api/v1/namespaces/agones-system/pods');
      return ((r.json as { items: Pod[] }).items).map((p) => p.metadata.name).sort();
    };
    let server = await startServe(args);
    const first = await names(server);
    expect(first).toHaveLength(7);
    const controller = first.find((n) => n.startsWith('agones-controller-'))!;
    const deleted = await apiRequest(server.baseUrl, 'DELETE', `/api/v1/namespaces/agones-system/pods/${controller}`);
    expect(deleted.status, deleted.text).toBe(200);
    const live = await names(server);
    expect(live).toHaveLength(7);
    expect(live).not.toContain(controller);
    await server.process.kill('SIGKILL');
    server = await startServe(args);
    expect(await names(server)).toEqual(live);
    const deployments = await apiRequest(server.baseUrl, 'GET', '/apis/apps/v1/namespaces/agones-system/deployments');
    expect((deployments.json as { items: Deployment[] }).items.map((d) => d.metadata.name).sort()).toEqual(['agones-allocator', 'agones-controller', 'agones-extensions']);
  });
});
