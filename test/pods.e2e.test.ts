import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL, Kubectl } from './helpers/kubectl.js';
import { skipWithout } from './helpers/tools.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Pods with the real kubectl: one per GameServer, projected from it, with the output of its
 * real process (test/fixtures/sdk-game-server.cjs) as `kubectl logs`, and a deleted pod making
 * its GameServer Unhealthy as in Agones.
 */

const GAME_SERVER = fileURLToPath(new URL('./fixtures/sdk-game-server.cjs', import.meta.url));

interface Pod {
  metadata: { name: string; uid: string; labels: Record<string, string>; ownerReferences: Array<{ kind: string; name: string; uid: string; controller: boolean }> };
  spec: { nodeName: string; containers: Array<{ name: string; ports: Array<{ containerPort: number; hostPort: number; protocol: string }> }> };
  status: { phase: string; podIP: string; containerStatuses: Array<{ name: string; ready: boolean; restartCount: number; state: Record<string, unknown> }> };
}

describe.sequential('pods of GameServers, with kubectl', () => {
  skipWithout(KUBECTL);
  let serve: ServeProcess;
  let home: string;
  let out: string;
  let kubectl: Kubectl;
  let names: string[];

  const gameServer = async (name: string) =>
    (await apiRequest(serve.baseUrl, 'GET', `/apis/agones.dev/v1/namespaces/default/gameservers/${name}`)).json as {
      metadata: { uid: string };
      status: { state: string; nodeName: string; ports: Array<{ port: number }> };
    };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fleetsim-pods-'));
    out = join(home, 'out');
    rmSync(out, { recursive: true, force: true });
    (await import('node:fs')).mkdirSync(out);
    serve = await startServe();
    kubectl = new Kubectl(serve.baseUrl, home);
    const created = await apiRequest(serve.baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/fleets', {
      body: {
        apiVersion: 'agones.dev/v1',
        kind: 'Fleet',
        metadata: { name: 'pods' },
        spec: {
          replicas: 2,
          template: {
            metadata: { labels: { team: 'blue' }, annotations: { 'fleetsim.dev/command': `node ${GAME_SERVER}` } },
            spec: {
              ports: [{ name: 'game', containerPort: 7777, protocol: 'TCP' }],
              health: { disabled: true },
              template: { spec: { containers: [{ name: 'game', image: 'game:1', env: [{ name: 'OUT_DIR', value: out }] }] } },
            },
          },
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    names = await waitFor(
      async () => {
        const list = (await apiRequest(serve.baseUrl, 'GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as {
          items: Array<{ metadata: { name: string }; status: { state: string } }>;
        };
        return list.items.length === 2 && list.items.every((gs) => gs.status.state === 'Ready') && list.items.map((gs) => gs.metadata.name).sort();
      },
      { timeoutMs: seconds(20), intervalMs: 200, what: 'two Ready GameServers' },
    );
  });

  afterAll(async () => {
    kubectl?.killAll();
    await serve?.process.kill('SIGTERM', seconds(10));
    await killAll();
    rmSync(home, { recursive: true, force: true });
  });

  it('lists one Running pod per GameServer, with kubectl get pods, -o wide and a label selector', async () => {
    const rows = (await kubectl.ok(['get', 'pods'])).trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 4))).toEqual(names.map((n) => [n, '2/2', 'Running', '0']));
    const wide = await kubectl.ok(['get', 'pods', '-o', 'wide']);
    expect(wide.split('\n')[0]).toMatch(/IP\s+NODE/);
    const one = await kubectl.ok(['get', 'po', '-l', `agones.dev/gameserver=${names[0]}`, '-o', 'name']);
    expect(one.trim()).toBe(`pod/${names[0]}`);
    expect((await kubectl.ok(['get', 'pods', '--field-selector', 'status.phase=Running', '-o', 'name'])).trim().split('\n')).toHaveLength(2);
  });

  it('shows the pod Agones builds: labels, owner, node, ports and container status', async () => {
    const pod = await kubectl.json<Pod>(['get', 'pod', names[0]!]);
    const gs = await gameServer(names[0]!);
    // The pod template's labels and Agones's own; the GameServer's labels (team) stay on the GameServer.
    expect(pod.metadata.labels).toEqual({ 'agones.dev/role': 'gameserver', 'agones.dev/gameserver': names[0] });
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'GameServer', name: names[0], uid: gs.metadata.uid, controller: true })]);
    expect(pod.metadata.uid).not.toBe(gs.metadata.uid);
    expect(pod.spec.nodeName).toBe(gs.status.nodeName);
    expect(pod.spec.containers[0]!.ports).toEqual([{ name: 'game', containerPort: 7777, hostPort: gs.status.ports[0]!.port, protocol: 'TCP' }]);
    expect(pod.status.phase).toBe('Running');
    expect(pod.status.containerStatuses[0]).toMatchObject({ name: 'game', ready: true, restartCount: 0, state: { running: expect.any(Object) } });
    const described = await kubectl.ok(['describe', 'pod', names[0]!]);
    expect(described).toMatch(/Controlled By:\s+GameServer\/pods-/);
    expect(described).toMatch(/Host Port:\s+\d+\/TCP/);
    // The kubelet's events are on the pod.
    expect(described).toMatch(/Normal\s+Started\s+.*Started container with command: node /);
  });

  it('serves the process output as kubectl logs, with --tail, --timestamps and -f', async () => {
    const logs = await kubectl.ok(['logs', names[0]!]);
    expect(logs).toBe(`${names[0]} ready\n${names[0]} says hello on stderr\n`);
    expect(await kubectl.ok(['logs', names[0]!, '--tail', '1'])).toBe(`${names[0]} says hello on stderr\n`);
    expect(await kubectl.ok(['logs', names[0]!, '--timestamps', '--tail', '1'])).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z .* says hello on stderr\n$/);
    // The sidecar's container logs each SDK call it received, as Agones's does: the official SDK's
    // GetGameServer, WatchGameServer and Ready, and its health pings, in the order they came.
    const sidecar = (await kubectl.ok(['logs', names[0]!, '-c', 'agones-gameserver-sidecar'])).split('\n');
    const calls = sidecar.map((line) => /^\S+ info {2}(Received .*)$/.exec(line)?.[1]).filter((call) => call !== undefined);
    expect(calls.slice(0, 2)).toEqual(['Received GetGameServer request', 'Received WatchGameServer request']);
    expect(calls).toContain('Received Ready request');
    expect(calls).toContain('Received health ping');
    expect(await kubectl.ok(['logs', names[0]!, '-c', 'agones-gameserver-sidecar', '--tail', '1'])).toMatch(/^\S+ info {2}Received \w+/);
    const bad = await kubectl.run(['logs', names[0]!, '-c', 'nope']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/container nope is not valid for pod/);
    const missing = await kubectl.run(['logs', 'no-such-pod']);
    expect(missing.stderr).toMatch(/pods "no-such-pod" not found/);
    const badTail = await apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/pods/${names[0]}/log?tailLines=x`);
    expect(badTail.status).toBe(400);
    expect(badTail.text).toMatch(/tailLines/);
    // -f: what is there, then it follows until the pod goes (deleted below ends it).
    const follow = kubectl.stream(['logs', '-f', names[1]!]);
    await waitFor(() => follow.out.includes('says hello'), { what: 'the followed log' });
  });

  it('refuses the log options the API server refuses (422 on PodLogOptions) and honours sinceTime', async () => {
    const pod = names[0]!;
    const log = (query: string) => apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/pods/${pod}/log?${query}`);
    for (const [query, message] of [
      ['limitBytes=0', 'limitBytes: Invalid value: 0: must be greater than 0'],
      ['limitBytes=-5', 'limitBytes: Invalid value: -5: must be greater than 0'],
      ['sinceSeconds=0', 'sinceSeconds: Invalid value: 0: must be greater than 0'],
      ['tailLines=-1', 'tailLines: Invalid value: -1: must be greater than or equal to 0'],
      ['sinceSeconds=10&sinceTime=2020-01-01T00:00:00Z', ': Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'],
    ]) {
      const r = await log(query!);
      expect(r.status, `${query}: ${r.text}`).toBe(422);
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'Invalid', message: `PodLogOptions "${pod}" is invalid: ${message}`, details: { name: pod, kind: 'PodLogOptions' } });
    }
    for (const query of ['sinceTime=yesterday', 'sinceTime=2020-01-01', 'limitBytes=1.5']) {
      const r = await log(query);
      expect(r.status, `${query}: ${r.text}`).toBe(400);
      expect(r.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringContaining(query.split('=')[0]!) });
    }
    // sinceTime (RFC 3339): a time after the last line shows none, one before the first shows all.
    const all = `${pod} ready\n${pod} says hello on stderr\n`;
    expect(await kubectl.ok(['logs', pod, '--since-time=2000-01-01T00:00:00Z'])).toBe(all);
    expect(await kubectl.ok(['logs', pod, `--since-time=${new Date(Date.now() + 3_600_000).toISOString()}`])).toBe('');
    const first = (await log('timestamps=true')).text.split('\n')[0]!.split(' ')[0]!;
    expect((await log(`sinceTime=${encodeURIComponent(first)}`)).text).toBe(all);
    const limited = await kubectl.run(['logs', pod, '--since=10s', '--since-time=2000-01-01T00:00:00Z']);
    expect(limited.code).not.toBe(0);
  });

  it("refuses a created pod without containers, or named as a GameServer's, and any update of a pod", async () => {
    const create = (body: unknown) => apiRequest(serve.baseUrl, 'POST', '/api/v1/namespaces/default/pods', { body });
    const empty = await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } });
    expect(empty.status, empty.text).toBe(422);
    expect(empty.json).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueRequired', field: 'spec.containers' }] } });
    const noImage = await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [{ name: 'c', ports: [{ containerPort: 70000 }] }] } });
    expect(noImage.status, noImage.text).toBe(422);
    expect((noImage.json as { details: { causes: Array<{ field: string }> } }).details.causes.map((c) => c.field)).toEqual(['spec.containers[0].image', 'spec.containers[0].ports[0].containerPort']);
    const badVolumes = await create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x' },
      spec: { volumes: [{ name: 'v' }], containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: 'w', mountPath: '/a' }, { name: 'v', mountPath: '/a' }] }] },
    });
    expect(badVolumes.status, badVolumes.text).toBe(422);
    expect((badVolumes.json as { message: string }).message).toBe(
      'Pod "x" is invalid: [spec.volumes[0]: Required value: must specify a volume type, spec.containers[0].volumeMounts[0].name: Not found: "w", spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique]',
    );
    const taken = await create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: names[0] }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    expect(taken.status, taken.text).toBe(409);
    expect((await apiRequest(serve.baseUrl, 'GET', '/api/v1/namespaces/default/pods/x')).status).toBe(404);
    const patched = await apiRequest(serve.baseUrl, 'PATCH', `/api/v1/namespaces/default/pods/${names[0]}`, { body: {}, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(patched.status).toBe(405);
    expect(patched.text).toMatch(/never updated/);
  });

  it('makes the GameServer Unhealthy when its pod is deleted, and the fleet replaces it', async () => {
    const watch = kubectl.stream(['get', 'pods', '-w', '--output-watch-events']);
    await waitFor(() => watch.lines().length >= 3, { what: 'the watch listing' });
    const victim = names[1]!;
    expect(await kubectl.ok(['delete', 'pod', victim])).toMatch(`pod "${victim}" deleted`);
    const events = (await apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${victim}`)).json as {
      items: Array<{ reason: string; message: string }>;
    };
    expect(events.items.some((e) => e.reason === 'Unhealthy' && /pod was deleted/.test(e.message))).toBe(true);
    expect((await kubectl.run(['get', 'pod', victim])).stderr).toMatch(/not found/);
    await waitFor(
      async () => {
        const rows = (await kubectl.ok(['get', 'pods', '-o', 'name'])).trim().split('\n');
        return rows.length === 2 && !rows.includes(`pod/${victim}`) && rows;
      },
      { timeoutMs: seconds(20), intervalMs: 250, what: 'a replacement pod' },
    );
    await waitFor(() => watch.lines().some((l) => l.startsWith('DELETED') && l.includes(victim)), { what: 'DELETED on the watch' });
    expect(watch.lines().some((l) => l.startsWith('ADDED') && !names.some((n) => l.includes(n)))).toBe(true);
  });

  it('evicts a pod through pods/eviction (policy/v1), which makes its GameServer Unhealthy; a mismatched name is a 400', async () => {
    const pods = await waitFor(
      async () => {
        const rows = (await kubectl.ok(['get', 'pods', '-o', 'name'])).trim().split('\n');
        return rows.length === 2 && rows.map((r) => r.replace('pod/', ''));
      },
      { timeoutMs: seconds(20), intervalMs: 250, what: 'two pods' },
    );
    const victim = pods[0]!;
    const path = `/api/v1/namespaces/default/pods/${victim}/eviction`;
    const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } });
    const { metadata: _unnamed, ...noName } = eviction(victim);
    for (const [body, message] of [
      [eviction('someone-else'), 'name in URL does not match name in Eviction object'],
      [noName, 'name in URL does not match name in Eviction object'],
      [{ metadata: { namespace: 'default' } }, 'name in URL does not match name in Eviction object'],
      [{ ...eviction(victim), kind: 'Pod', apiVersion: 'v1' }, 'the API version in the data (v1) does not match the expected API version (policy/v1)'],
      [{ ...eviction(victim), kind: 'Drain' }, 'Drain in version "v1" cannot be handled as a Eviction: no kind "Drain" is registered for version "policy/v1"'],
      [{ ...eviction(victim), apiVersion: 'policy/v2' }, 'Eviction in version "v2" cannot be handled as a Eviction: no kind "Eviction" is registered for version "policy/v2"'],
    ] as const) {
      const wrong = await apiRequest(serve.baseUrl, 'POST', path, { body });
      expect(wrong.status, wrong.text).toBe(400);
      expect(wrong.json).toMatchObject({ kind: 'Status', reason: 'BadRequest', message });
    }
    expect((await gameServer(victim)).status.state).toBe('Ready');
    // policy/v1beta1 Evictions are read too (kubectl drain falls back to them).
    const beta = await apiRequest(serve.baseUrl, 'POST', `${path}?dryRun=All`, { body: { ...eviction(victim), apiVersion: 'policy/v1beta1' } });
    expect(beta.status, beta.text).toBe(201);
    expect((await gameServer(victim)).status.state).toBe('Ready');
    const evicted = await apiRequest(serve.baseUrl, 'POST', path, { body: eviction(victim) });
    expect(evicted.status).toBe(201);
    expect(evicted.json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await kubectl.run(['get', 'pod', victim])).stderr).toMatch(/not found/);
    const events = (await apiRequest(serve.baseUrl, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${victim}`)).json as {
      items: Array<{ reason: string; message: string }>;
    };
    expect(events.items.some((e) => e.reason === 'Unhealthy' && /pod was evicted/.test(e.message))).toBe(true);
    const discovery = (await apiRequest(serve.baseUrl, 'GET', '/api/v1')).json as { resources: Array<{ name: string; kind: string; group?: string }> };
    expect(discovery.resources.find((r) => r.name === 'pods/eviction')).toMatchObject({ kind: 'Eviction', group: 'policy' });
  });
});
