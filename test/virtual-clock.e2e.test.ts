import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll } from './helpers/process.js';
import { apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * The virtual clock runs the cluster: one scenario on two real `fleetsim serve` processes, one on
 * the real clock (seconds, waited for by condition), one on the virtual clock moved by ONE
 * advance; both must end in the same state. The scenario chains timers that the work of earlier
 * ones sets: simulated processes that call Ready and then Allocate a second later, a Buffer
 * autoscaler syncing every second that grows the fleet for them up to its maximum, a reservation
 * that runs out, and health pings that stop.
 */

const PROFILES = `apiVersion: fleetsim.dev/v1alpha1
kind: ProcessProfile
metadata: { name: self-allocating }
spec:
  stages:
    - { when: Scheduled, delay: 1s, next: [{ action: ready }] }
    - { when: Ready, delay: 1s, next: [{ action: allocate }] }
---
apiVersion: fleetsim.dev/v1alpha1
kind: ProcessProfile
metadata: { name: reserves-for-2s }
spec:
  stages:
    - { when: Scheduled, delay: 1s, next: [{ action: reserve, seconds: 2 }] }
---
apiVersion: fleetsim.dev/v1alpha1
kind: ProcessProfile
metadata: { name: goes-silent }
spec:
  stages:
    - { when: Scheduled, delay: 1s, next: [{ action: ready }] }
    - { when: Ready, delay: 1s, next: [{ action: stopPinging }] }
`;

const container = { template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } } };
const ports = { ports: [{ name: 'default', containerPort: 7654 }] };
const annotated = (profile: string) => ({ annotations: { 'fleetsim.dev/process-profile': profile } });

const MANIFESTS = [
  {
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name: 'f' },
    spec: { replicas: 2, template: { metadata: annotated('self-allocating'), spec: { ...ports, health: { disabled: true }, ...container } } },
  },
  {
    apiVersion: 'autoscaling.agones.dev/v1',
    kind: 'FleetAutoscaler',
    metadata: { name: 'f-buffer' },
    spec: {
      fleetName: 'f',
      policy: { type: 'Buffer', buffer: { bufferSize: 1, minReplicas: 2, maxReplicas: 4 } },
      sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } },
    },
  },
  { apiVersion: 'agones.dev/v1', kind: 'GameServer', metadata: { name: 'reserved', ...annotated('reserves-for-2s') }, spec: { ...ports, health: { disabled: true }, ...container } },
  {
    apiVersion: 'agones.dev/v1',
    kind: 'GameServer',
    metadata: { name: 'silent', ...annotated('goes-silent') },
    spec: { ...ports, health: { periodSeconds: 1, failureThreshold: 1, initialDelaySeconds: 1 }, ...container },
  },
];

interface EndState {
  fleet: { replicas: number; status: Record<string, number> };
  /** The fleet's GameServers by state, and each standalone one's state. */
  states: Record<string, number | string>;
  autoscaler: Record<string, unknown>;
}

async function endState(baseUrl: string): Promise<EndState> {
  const get = async <T>(path: string): Promise<T> => {
    const res = await apiRequest(baseUrl, 'GET', path);
    expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
    return res.json as T;
  };
  const ns = '/apis/agones.dev/v1/namespaces/default';
  const fleet = await get<{ spec: { replicas: number }; status: Record<string, number> }>(`${ns}/fleets/f`);
  const servers = await get<{ items: Array<{ metadata: { name: string; labels?: Record<string, string> }; status: { state: string } }> }>(`${ns}/gameservers`);
  const states: Record<string, number | string> = {};
  for (const gs of servers.items) {
    if (gs.metadata.labels?.['agones.dev/fleet'] === 'f') states[`f: ${gs.status.state}`] = ((states[`f: ${gs.status.state}`] as number | undefined) ?? 0) + 1;
    else states[gs.metadata.name] = gs.status.state;
  }
  const autoscaler = await get<{ status?: Record<string, unknown> }>('/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/f-buffer');
  // Before its first sync an autoscaler has no status.
  const { currentReplicas, desiredReplicas, ableToScale, scalingLimited } = autoscaler.status ?? {};
  const { replicas, readyReplicas, reservedReplicas, allocatedReplicas } = fleet.status;
  return {
    fleet: { replicas: fleet.spec.replicas, status: { replicas, readyReplicas, reservedReplicas, allocatedReplicas } as Record<string, number> },
    states,
    autoscaler: { currentReplicas, desiredReplicas, ableToScale, scalingLimited },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-virtual-clock-'));
const profiles = join(dir, 'profiles.yaml');
const manifests = join(dir, 'scenario.yaml');
const serveArgs = (clock: string) => ['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--no-listen', '--profiles', profiles, '-f', manifests, '--clock', clock];

beforeAll(() => {
  writeFileSync(profiles, PROFILES);
  writeFileSync(manifests, MANIFESTS.map((m) => JSON.stringify(m)).join('\n---\n'));
});

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('the virtual clock runs the cluster', () => {
  it('one advance ends in the state the real clock reaches in the same time', async () => {
    const real = await startServe(serveArgs('real'));
    // The real clock: wait until the scenario has played out (seconds), whatever the machine's speed.
    const onRealClock = await waitFor(
      async () => {
        const state = await endState(real.baseUrl);
        const done = state.autoscaler.scalingLimited === true && state.fleet.status.allocatedReplicas === 4 && state.states.reserved === 'Ready' && state.states.silent === 'Unhealthy';
        return done && state;
      },
      { timeoutMs: seconds(120), intervalMs: 200, what: 'the scenario to play out on the real clock' },
    );
    await real.process.kill();

    const virtual = await startServe(serveArgs('virtual'));
    const before = await endState(virtual.baseUrl);
    expect(before.states).toMatchObject({ reserved: expect.not.stringMatching(/Ready|Reserved/), silent: expect.not.stringMatching(/Unhealthy/) });
    const advance = await apiRequest(virtual.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: 30 }, timeoutMs: seconds(60) });
    expect(advance.status, advance.text).toBe(200);
    expect(advance.json).toMatchObject({ kind: 'virtual', now: '2026-01-01T00:00:30.000Z' });
    expect((advance.json as { timersFired: number }).timersFired).toBeGreaterThan(20);
    expect(advance.json).not.toHaveProperty('unsettled');
    const onVirtualClock = await endState(virtual.baseUrl);

    expect(onVirtualClock).toEqual(onRealClock);
    // And that state is the scenario's end: the buffer grew the fleet to its maximum for the processes that allocated themselves.
    expect(onVirtualClock).toEqual({
      fleet: { replicas: 4, status: { replicas: 4, readyReplicas: 0, reservedReplicas: 0, allocatedReplicas: 4 } },
      states: { 'f: Allocated': 4, reserved: 'Ready', silent: 'Unhealthy' },
      autoscaler: { currentReplicas: 4, desiredReplicas: 4, ableToScale: true, scalingLimited: true },
    });
  });

  it('serializes advances asked for together, and refuses an advance that is not a finite number, changing nothing', async () => {
    const serve = await startServe(serveArgs('virtual'));
    const advance = (body: unknown) => apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body, timeoutMs: seconds(60) });
    const answers = await Promise.all([advance({ advanceSeconds: 10 }), advance({ advanceSeconds: 10 }), advance({ advanceSeconds: 10 })]);
    expect(answers.map((a) => (a.json as { now: string }).now).sort()).toEqual(['2026-01-01T00:00:10.000Z', '2026-01-01T00:00:20.000Z', '2026-01-01T00:00:30.000Z']);
    for (const body of [{ advanceSeconds: -1 }, { advanceSeconds: '5' }, {}, '{"advanceSeconds": 1e999}']) {
      const refused = await advance(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json).toEqual({ message: 'advanceSeconds: must be a finite number >= 0' });
    }
    const clock = await apiRequest(serve.baseUrl, 'GET', '/fleetsim/v1/clock');
    expect(clock.json).toEqual({ kind: 'virtual', now: '2026-01-01T00:00:30.000Z' });
  });
});
