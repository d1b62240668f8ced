import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';

/**
 * `fleetsim serve --node-pools FILE` as a user runs it: a real process on the virtual clock, its
 * nodes read through the resource API as kubectl reads them, a fleet scaled through it, and time
 * moved with `POST /fleetsim/v1/clock`.
 */

const POOLS = `apiVersion: fleetsim.dev/v1alpha1
kind: NodePool
metadata: { name: default }
spec:
  podsPerNode: 4
  minNodes: 1
  maxNodes: 4
  scaleUpDelay: 30s
  scaleDownUnneededTime: 1m
  scaleDownDelayAfterAdd: 2m
  scanInterval: 10s
`;

const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';

interface NodeItem {
  metadata: { name: string; labels: Record<string, string> };
  status: { allocatable: { pods: string } };
}

let dir: string;
let poolsFile: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetsim-node-pools-'));
  poolsFile = join(dir, 'pools.yaml');
  writeFileSync(poolsFile, POOLS);
  serve = await startServe(['--clock', 'virtual', '--db', ':memory:', '--no-default-fleet', '--no-listen', '--node-pools', poolsFile]);
});

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function getJson<T>(path: string): Promise<T> {
  const res = await apiRequest(serve.baseUrl, 'GET', path);
  expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
  return res.json as T;
}

const nodes = async () => (await getJson<{ items: NodeItem[] }>('/api/v1/nodes')).items;
const readyReplicas = async () => (await getJson<{ status?: { readyReplicas?: number } }>(`${FLEETS}/f`)).status?.readyReplicas ?? 0;

async function advance(seconds: number): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: seconds } });
  expect(res.status, res.text).toBe(200);
}

/**
 * Moves time a second at a time until `probe` holds, at most `seconds` (checked before each step,
 * so the work a commit queues gets the request round trips in between).
 */
async function advanceUntil<T>(probe: () => Promise<T | undefined | false>, seconds: number, what: string): Promise<T> {
  for (let waited = 0; ; waited++) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (waited >= seconds) throw new Error(`${what}: not after ${seconds} s of virtual time\n${serve.process.describe()}`);
    await advance(1);
  }
}

async function scaleFleet(replicas: number): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'PATCH', `${FLEETS}/f`, { body: { spec: { replicas } }, headers: { 'content-type': 'application/merge-patch+json' } });
  expect(res.status, res.text).toBe(200);
}

/** The nodes, once there are `count` of them (within `seconds` of virtual time). */
function nodesOnceThereAre(count: number, seconds: number): Promise<NodeItem[]> {
  return advanceUntil(async () => {
    const items = await nodes();
    return items.length === count && items;
  }, seconds, `${count} nodes`);
}

describe('fleetsim serve --node-pools', () => {
  it('starts the pools with their initial nodes, grows them for a fleet scaled up and shrinks them once it is scaled down', async () => {
    const initial = await nodes();
    expect(initial.map((n) => [n.metadata.name, n.metadata.labels['fleetsim.dev/node-pool'], n.status.allocatable.pods])).toEqual([['default-1', 'default', '4']]);

    const created = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleetManifest('f', 2) });
    expect(created.status, created.text).toBe(201);
    await advanceUntil(async () => (await readyReplicas()) === 2, 30, 'two Ready');
    expect((await nodes()).map((n) => n.metadata.name)).toEqual(['default-1']);

    // 10 pods on nodes of 4: two more nodes, after the next scan and 30 s of provisioning.
    await scaleFleet(10);
    const grown = await nodesOnceThereAre(3, 60);
    expect(grown.map((n) => n.metadata.name)).toEqual(['default-1', 'default-2', 'default-3']);
    await advanceUntil(async () => (await readyReplicas()) === 10, 30, 'ten Ready');
    const triggered = await getJson<{ items: Array<{ reason: string; message: string }> }>('/api/v1/namespaces/default/events');
    expect(triggered.items.some((e) => e.reason === 'TriggeredScaleUp' && e.message === 'pod triggered scale-up: [{default 1->3 (max: 4)}]')).toBe(true);

    // Scaled to 1, the emptied nodes go (after the 2-minute cooldown and a minute empty), down to minNodes.
    await scaleFleet(1);
    expect(await nodesOnceThereAre(1, 400)).toHaveLength(1);
    await waitFor(async () => (await readyReplicas()) === 1, { what: 'one Ready' });
  });

  it('refuses --nodes with --node-pools, and a pool file with an unknown field, naming them', async () => {
    const both = await runCli(['serve', '--db', ':memory:', '--port', '0', '--nodes', '2', '--node-pools', poolsFile]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--nodes and --node-pools do not combine');
    const badFile = join(dir, 'bad.yaml');
    writeFileSync(badFile, POOLS.replace('podsPerNode: 4', 'podsPerNod: 4'));
    const bad = await runCli(['serve', '--db', ':memory:', '--port', '0', '--node-pools', badFile]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`--node-pools: ${badFile}, document 1: spec.podsPerNod: unknown field`);
  });
});
