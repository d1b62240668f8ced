import { afterAll, describe, expect, it } from 'vitest';
import { killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { fleetManifest } from './helpers/manifests.js';

/**
 * Kubernetes Events expire as the API server's --event-ttl makes them (one hour by default):
 * `fleetsim serve` on the virtual clock, a fleet whose controllers record Events, then the clock
 * moved past the TTL with nothing else written. Events listed at
 * /api/v1/namespaces/default/events go away; `--event-ttl` changes the hour.
 */

const EVENTS = '/api/v1/namespaces/default/events';
const FLEETS = '/apis/agones.dev/v1/namespaces/default/fleets';

interface EventItem {
  metadata: { name: string };
  reason: string;
  lastTimestamp: string;
  involvedObject: { kind: string; name: string };
}

async function events(serve: ServeProcess): Promise<EventItem[]> {
  const res = await apiRequest(serve.baseUrl, 'GET', EVENTS);
  expect(res.status, res.text).toBe(200);
  return (res.json as { items: EventItem[] }).items;
}

async function advance(serve: ServeProcess, seconds: number): Promise<number> {
  const res = await apiRequest(serve.baseUrl, 'POST', '/fleetsim/v1/clock', { body: { advanceSeconds: seconds } });
  expect(res.status, res.text).toBe(200);
  return Date.parse((res.json as { now: string }).now);
}

/** Starts a virtual-clock server with a fleet that has recorded its Events; returns their names. */
async function withFleetEvents(extra: string[]): Promise<{ serve: ServeProcess; before: Set<string> }> {
  const serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '2', '--clock', 'virtual', ...extra]);
  const fleet = fleetManifest('ttl', 2, { spec: { health: { disabled: true } } });

  const created = await apiRequest(serve.baseUrl, 'POST', FLEETS, { body: fleet });
  expect(created.status, created.text).toBe(201);
  // The controllers' work queues run on the virtual clock: a zero step lets them run. Wait for
  // the fleet controller's CreatingGameServerSet and the set's SuccessfulCreate.
  const recorded = async (reason: string) => {
    await advance(serve, 0);
    return (await events(serve)).some((e) => e.reason === reason);
  };
  await waitFor(() => recorded('CreatingGameServerSet'), { what: 'the fleet controller recording Events' });
  await waitFor(() => recorded('SuccessfulCreate'), { what: 'the set recording SuccessfulCreate' });
  return { serve, before: new Set((await events(serve)).map((e) => e.metadata.name)) };
}

describe('Kubernetes Events expire after the event TTL', () => {
  afterAll(killAll);

  it('after an hour by default: kept at 59 minutes, gone after 61, with nothing else written', async () => {
    const { serve, before } = await withFleetEvents([]);
    expect(before.size).toBeGreaterThan(0);
    await advance(serve, 59 * 60);
    const kept = new Set((await events(serve)).map((e) => e.metadata.name));
    for (const name of before) expect(kept, name).toContain(name);

    const now = await advance(serve, 2 * 60);
    await waitFor(async () => (await events(serve)).every((e) => !before.has(e.metadata.name)), { what: 'the first Events expiring' });
    // Whatever is listed now was written within the hour.
    for (const e of await events(serve)) expect(now - Date.parse(e.lastTimestamp), e.reason).toBeLessThan(60 * 60 * 1000);
    // A get of an expired one is a 404, as for any object that is gone.
    const gone = await apiRequest(serve.baseUrl, 'GET', `${EVENTS}/${[...before][0]!}`);
    expect(gone.status).toBe(404);
  });

  it('--event-ttl 10m keeps them ten minutes', async () => {
    const { serve, before } = await withFleetEvents(['--event-ttl', '10m']);
    await advance(serve, 9 * 60);
    expect((await events(serve)).filter((e) => before.has(e.metadata.name))).toHaveLength(before.size);
    await advance(serve, 2 * 60);
    await waitFor(async () => (await events(serve)).every((e) => !before.has(e.metadata.name)), { what: 'Events expiring after 10 minutes' });
  });

  it('refuses an --event-ttl that is not a duration, naming the flag', async () => {
    const r = await runCli(['serve', '--db', ':memory:', '--port', '0', '--event-ttl', 'an hour']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--event-ttl: "an hour" is not a duration');
  });
});
