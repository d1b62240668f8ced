import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { type ApiResponse, type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { fleetYaml } from './helpers/manifests.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * Allocation against a real `fleetsim serve` process, through both entry points: the resource
 * API's GameServerAllocation (`POST /apis/allocation.agones.dev/v1/namespaces/{ns}/gameserverallocations`,
 * 201 whatever the state) and the allocator service's REST endpoint (`POST /gameserverallocation`,
 * 200 with an AllocationResponse, 429 when nothing is left). Then a burst from many clients at
 * once, which must never hand out a GameServer twice.
 */

const ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';
const GAMESERVERS = '/apis/agones.dev/v1/namespaces/default/gameservers';

const PROBE_REPLICAS = 4;
const BURST_REPLICAS = 50;

let dir: string;
let serve: ServeProcess | undefined;
let base: string;

/** A JSON request to the server; a JSON reply is parsed into `json`. */
function call(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return apiRequest(base, method, path, { body, timeoutMs: seconds(15) });
}

interface FleetStatus {
  replicas: number;
  readyReplicas: number;
  allocatedReplicas: number;
}

async function fleetStatus(name: string): Promise<FleetStatus> {
  const reply = await call('GET', `${FLEETS}/${name}`);
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { status: FleetStatus }).status;
}

const selectFleet = (name: string) => ({ matchLabels: { 'agones.dev/fleet': name } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetsim-allocation-e2e-'));
  const manifest = join(dir, 'fleets.yaml');
  writeFileSync(manifest, `${fleetYaml('probe', PROBE_REPLICAS, { namespace: 'default' })}\n---\n${fleetYaml('burst', BURST_REPLICAS, { namespace: 'default' })}\n`);
  serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '4', '-f', manifest]);
  base = serve.baseUrl;
  // Simulated processes call Ready 1-3 s after their GameServer is scheduled.
  await waitFor(
    async () => {
      const [probe, burst] = await Promise.all([fleetStatus('probe'), fleetStatus('burst')]);
      return probe.readyReplicas === PROBE_REPLICAS && burst.readyReplicas === BURST_REPLICAS;
    },
    { timeoutMs: seconds(20), intervalMs: 100, what: 'both fleets Ready' },
  );
});

afterAll(async () => {
  await serve?.process.kill('SIGTERM');
  await killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface GsaStatus {
  state: string;
  gameServerName: string;
  ports?: Array<{ name: string; port: number }>;
  address?: string;
  nodeName?: string;
  source: string;
  metadata?: { labels: Record<string, string>; annotations: Record<string, string> };
}

describe('allocation end to end', () => {
  it('allocates through the resource API: 201 with the Allocated status, and the GameServer is Allocated', async () => {
    const reply = await call('POST', ALLOCATIONS, {
      apiVersion: 'allocation.agones.dev/v1',
      kind: 'GameServerAllocation',
      spec: { selectors: [selectFleet('probe')], metadata: { labels: { mode: 'ctf' } } },
    });
    expect(reply.status, reply.text).toBe(201);
    const gsa = reply.json as { kind: string; metadata: { name: string; namespace: string }; status: GsaStatus };
    expect(gsa.kind).toBe('GameServerAllocation');
    expect(gsa.status.state).toBe('Allocated');
    expect(gsa.status.gameServerName).toMatch(/^probe-/);
    expect(gsa.metadata).toMatchObject({ name: gsa.status.gameServerName, namespace: 'default' });
    expect(gsa.status.ports).toEqual([{ name: 'default', port: expect.any(Number) as number }]);
    expect(gsa.status.address).toMatch(/\S/);
    expect(gsa.status.nodeName).toMatch(/\S/);
    expect(gsa.status.source).toBe('local');
    expect(gsa.status.metadata?.labels).toMatchObject({ 'agones.dev/fleet': 'probe', mode: 'ctf' });

    const gs = await call('GET', `${GAMESERVERS}/${gsa.status.gameServerName}`);
    expect((gs.json as { status: { state: string } }).status.state).toBe('Allocated');
    expect((gs.json as { metadata: { labels: Record<string, string> } }).metadata.labels.mode).toBe('ctf');
  });

  it('allocates through the allocator service: 200 with an AllocationResponse', async () => {
    const reply = await call('POST', '/gameserverallocation', {
      namespace: 'default',
      gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'probe' } }],
      metadata: { annotations: { map: 'dust2' } },
    });
    expect(reply.status, reply.text).toBe(200);
    const response = reply.json as Record<string, unknown> & { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    expect(Object.keys(response).sort()).toEqual(
      ['address', 'addresses', 'counters', 'gameServerName', 'lists', 'metadata', 'nodeName', 'ports', 'source'].sort(),
    );
    expect(response.gameServerName).toMatch(/^probe-/);
    expect(response.ports).toEqual([{ name: 'default', port: expect.any(Number) as number }]);
    expect(response.address).toMatch(/\S/);
    expect(response.nodeName).toMatch(/\S/);
    expect(response.source).toBe('local');
    expect(response.metadata.labels['agones.dev/fleet']).toBe('probe');
    expect(response.metadata.annotations.map).toBe('dust2');
    expect(response.counters).toEqual({});
    expect(response.lists).toEqual({});
    const status = await fleetStatus('probe');
    expect(status.allocatedReplicas).toBe(2);
  });

  it('answers UnAllocated: 201 with state UnAllocated on the resource API, 429 on the allocator', async () => {
    const resource = await call('POST', ALLOCATIONS, { spec: { selectors: [selectFleet('no-such-fleet')] } });
    expect(resource.status, resource.text).toBe(201);
    expect((resource.json as { status: GsaStatus }).status).toEqual({ state: 'UnAllocated', gameServerName: '', source: '' });

    const allocator = await call('POST', '/gameserverallocation', {
      namespace: 'default',
      gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'no-such-fleet' } }],
    });
    expect(allocator.status, allocator.text).toBe(429);
    expect(allocator.json).toEqual({ code: 8, message: 'there is no available GameServer to allocate', details: [] });
  });

  it('refuses an invalid selector: 422 Invalid on the resource API, INVALID_ARGUMENT on the allocator', async () => {
    const resource = await call('POST', ALLOCATIONS, { spec: { selectors: [{ matchLabels: { 'bad key!': 'x' } }] } });
    expect(resource.status, resource.text).toBe(422);
    const status = resource.json as { kind: string; reason: string; code: number; details: { causes: Array<{ field: string; message: string }> } };
    expect(status).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect(status.details.causes[0]!.field).toBe('spec.selectors[0].labelSelector');
    expect(status.details.causes[0]!.message).toMatch(/Error converting label selector/);

    const allocator = await call('POST', '/gameserverallocation', { gameServerSelectors: [{ matchLabels: { 'bad key!': 'x' } }] });
    expect(allocator.status, allocator.text).toBe(400);
    expect(allocator.json).toMatchObject({ code: 3, details: [] });
    expect((allocator.json as { message: string }).message).toMatch(/Error converting label selector/);
    // Nothing was allocated by either.
    expect((await fleetStatus('probe')).allocatedReplicas).toBe(2);
  });

  it('refuses bad input on both endpoints with a clear error, each time, and allocates nothing', async () => {
    const raw = async (method: string, path: string, body?: string, contentType = 'application/json'): Promise<Pick<ApiResponse, 'status' | 'text' | 'json'>> => {
      const res = await fetch(`${base}${path}`, {
        method,
        ...(body !== undefined && { body, headers: { 'content-type': contentType } }),
        signal: AbortSignal.timeout(seconds(15)),
      });
      const text = await res.text();
      return { status: res.status, text, json: text ? (JSON.parse(text) as unknown) : undefined };
    };
    const before = (await fleetStatus('probe')).allocatedReplicas;
    // Twice each: a refused request is never remembered as a good one.
    for (let round = 0; round < 2; round++) {
      const malformed = await raw('POST', ALLOCATIONS, '{"spec": ');
      expect(malformed.status, malformed.text).toBe(400);
      expect((malformed.json as { message: string }).message).toMatch(/^the request body is not valid JSON: /);
      const unknownField = await raw('POST', ALLOCATIONS, JSON.stringify({ spec: { selectors: [selectFleet('probe')], colour: 'red' } }));
      expect(unknownField.status, unknownField.text).toBe(400);
      expect((unknownField.json as { message: string }).message).toBe('strict decoding error: unknown field "spec.colour"');
      const badMode = await raw('POST', `${ALLOCATIONS}?fieldValidation=Loose`, JSON.stringify({ spec: {} }));
      expect(badMode.status, badMode.text).toBe(400);
      expect((badMode.json as { message: string }).message).toBe('fieldValidation must be Strict, Warn or Ignore, not "Loose"');
      const allocatorMalformed = await raw('POST', '/gameserverallocation', '{"namespace": ');
      expect(allocatorMalformed.status, allocatorMalformed.text).toBe(400);
      expect(allocatorMalformed.json).toMatchObject({ code: 3, details: [] });
      expect((allocatorMalformed.json as { message: string }).message).toMatch(/^proto: syntax error: /);
    }
    const tooLarge = await raw('POST', ALLOCATIONS, JSON.stringify({ spec: {}, pad: 'x'.repeat(3 * 1024 * 1024) }));
    expect(tooLarge.status, tooLarge.text).toBe(413);
    expect(tooLarge.json).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    const allocatorTooLarge = await raw('POST', '/gameserverallocation', JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }));
    expect(allocatorTooLarge.status, allocatorTooLarge.text).toBe(429);
    expect(allocatorTooLarge.json).toMatchObject({ code: 8, message: 'request body too large: the limit is 1048576 bytes' });
    const list = await raw('GET', ALLOCATIONS);
    expect(list.status, list.text).toBe(405);
    const allocatorGet = await raw('GET', '/gameserverallocation');
    expect(allocatorGet.json).toMatchObject({ message: 'Method Not Allowed' });
    expect((await fleetStatus('probe')).allocatedReplicas).toBe(before);

    // The same allocation as YAML, and with an unknown field under fieldValidation=Ignore, allocates.
    const yaml = await raw('POST', ALLOCATIONS, 'spec:\n  selectors:\n    - matchLabels: {agones.dev/fleet: probe}\n', 'application/yaml');
    expect(yaml.status, yaml.text).toBe(201);
    expect((yaml.json as { status: GsaStatus }).status.state).toBe('Allocated');
    const ignored = await raw('POST', `${ALLOCATIONS}?fieldValidation=Ignore`, JSON.stringify({ spec: { selectors: [selectFleet('probe')], colour: 'red' } }));
    expect(ignored.status, ignored.text).toBe(201);
    expect((ignored.json as { status: GsaStatus }).status.state).toBe('Allocated');
    expect((await fleetStatus('probe')).allocatedReplicas).toBe(before + 2);
  });

  it('never hands out a GameServer twice under a burst of 200 requests from 20 concurrent clients', async () => {
    const CLIENTS = 20;
    const PER_CLIENT = 10;
    const names: string[] = [];
    const unexpected: string[] = [];
    let unallocated = 0;
    const client = async (id: number) => {
      for (let i = 0; i < PER_CLIENT; i++) {
        // Half the clients use the resource API, half the allocator service; they alternate too.
        if ((id + i) % 2 === 0) {
          const reply = await call('POST', ALLOCATIONS, { spec: { selectors: [selectFleet('burst')] } });
          const state = (reply.json as { status?: GsaStatus } | undefined)?.status;
          if (reply.status === 201 && state?.state === 'Allocated') names.push(state.gameServerName);
          else if (reply.status === 201 && state?.state === 'UnAllocated') unallocated++;
          else unexpected.push(`resource API ${reply.status}: ${reply.text}`);
        } else {
          const reply = await call('POST', '/gameserverallocation', { gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'burst' } }] });
          if (reply.status === 200) names.push((reply.json as { gameServerName: string }).gameServerName);
          else if (reply.status === 429) unallocated++;
          else unexpected.push(`allocator ${reply.status}: ${reply.text}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, id) => client(id)));

    expect(unexpected).toEqual([]);
    expect(names.length + unallocated).toBe(CLIENTS * PER_CLIENT);
    expect(new Set(names).size).toBe(names.length);
    expect(names.every((n) => n.startsWith('burst-'))).toBe(true);
    expect(names.length).toBe(BURST_REPLICAS);
    const status = await waitFor(
      async () => {
        const s = await fleetStatus('burst');
        return s.allocatedReplicas === names.length ? s : undefined;
      },
      { timeoutMs: seconds(5), intervalMs: 50, what: `fleet burst to show ${names.length} allocated` },
    );
    expect(status).toMatchObject({ replicas: BURST_REPLICAS, readyReplicas: 0, allocatedReplicas: BURST_REPLICAS });
  });
});
