import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, runCli } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { seconds } from './helpers/time-scale.js';

/**
 * The spec's Limits 3, 4 and 5 for FleetAutoscalers, through the resource API: each bad value is
 * a 422 whose causes name the field, and nothing is created.
 */

const PATH = '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers';
let serve: ServeProcess;

beforeAll(async () => {
  serve = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '1', '--feature-gates', 'CountsAndLists=true']);
});
afterAll(() => killAll());

function autoscaler(name: string, policy: Record<string, unknown>) {
  return { apiVersion: 'autoscaling.agones.dev/v1', kind: 'FleetAutoscaler', metadata: { name }, spec: { fleetName: 'f', policy } };
}

const buffer = (b: Record<string, unknown>) => ({ type: 'Buffer', buffer: b });
const counter = (c: Record<string, unknown>) => ({ type: 'Counter', counter: { key: 'rooms', ...c } });
const list = (l: Record<string, unknown>) => ({ type: 'List', list: { key: 'players', ...l } });
const webhook = (url: string) => ({ type: 'Webhook', webhook: { url } });

const INVALID: Array<[string, Record<string, unknown>, string]> = [
  // Limit 3: Buffer.
  ['buffer-max-not-above-min', buffer({ bufferSize: 5, minReplicas: 20, maxReplicas: 10 }), 'spec.policy.buffer.minReplicas'],
  ['buffer-max-not-above-buffer', buffer({ bufferSize: 20, maxReplicas: 10 }), 'spec.policy.buffer.maxReplicas'],
  ['buffer-min-not-above-buffer', buffer({ bufferSize: 5, minReplicas: 3, maxReplicas: 10 }), 'spec.policy.buffer.minReplicas'],
  ['buffer-size-zero', buffer({ bufferSize: 0, maxReplicas: 10 }), 'spec.policy.buffer.bufferSize'],
  ['buffer-percent-out-of-range', buffer({ bufferSize: '150%', minReplicas: 1, maxReplicas: 10 }), 'spec.policy.buffer.bufferSize'],
  // Limit 4: Counter and List.
  ['counter-max-not-above-min', counter({ bufferSize: 5, minCapacity: 200, maxCapacity: 100 }), 'spec.policy.counter.minCapacity'],
  ['counter-max-not-above-buffer', counter({ bufferSize: 200, maxCapacity: 100 }), 'spec.policy.counter.maxCapacity'],
  ['counter-min-not-above-buffer', counter({ bufferSize: 10, minCapacity: 5, maxCapacity: 100 }), 'spec.policy.counter.minCapacity'],
  ['counter-size-zero', counter({ bufferSize: 0, maxCapacity: 100 }), 'spec.policy.counter.bufferSize'],
  ['list-max-not-above-buffer', list({ bufferSize: 200, maxCapacity: 100 }), 'spec.policy.list.maxCapacity'],
  ['list-min-not-above-buffer', list({ bufferSize: 10, minCapacity: 5, maxCapacity: 100 }), 'spec.policy.list.minCapacity'],
  // Limit 5: webhook URL.
  ['webhook-http', webhook('http://scaler.example.com/scale'), 'spec.policy.webhook.url'],
  ['webhook-userinfo', webhook('https://user:secret@scaler.example.com/scale'), 'spec.policy.webhook.url'],
  ['webhook-query', webhook('https://scaler.example.com/scale?x=1'), 'spec.policy.webhook.url'],
  ['webhook-fragment', webhook('https://scaler.example.com/scale#top'), 'spec.policy.webhook.url'],
];

describe('FleetAutoscaler validation through the resource API (spec Limits 3-5)', () => {
  it.each(INVALID)('%s: 422 naming %s, nothing created', async (name, policy, field) => {
    const res = await apiRequest(serve.baseUrl, 'POST', PATH, { body: autoscaler(name, policy) });
    expect(res.status).toBe(422);
    const status = res.json as { reason: string; details: { causes: Array<{ field: string }> } };
    expect(status.reason).toBe('Invalid');
    expect(status.details.causes.map((c) => c.field)).toContain(field);
    expect((await apiRequest(serve.baseUrl, 'GET', `${PATH}/${name}`)).status).toBe(404);
  });

  it('accepts the valid forms of each policy', async () => {
    for (const [name, policy] of [
      ['buffer-ok', buffer({ bufferSize: 5, minReplicas: 10, maxReplicas: 20 })],
      ['buffer-percent-ok', buffer({ bufferSize: '20%', minReplicas: 1, maxReplicas: 20 })],
      ['counter-ok', counter({ bufferSize: 5, minCapacity: 10, maxCapacity: 100 })],
      ['list-ok', list({ bufferSize: 5, maxCapacity: 100 })],
      ['webhook-ok', webhook('https://scaler.example.com/scale')],
    ] as const) {
      const res = await apiRequest(serve.baseUrl, 'POST', PATH, { body: autoscaler(name, policy) });
      expect(res.status, `${name}: ${res.text}`).toBe(201);
    }
  });

  it("leaves a schedule's policy unchecked, in a chain too, as Agones does", async () => {
    // Agones's TestChainAutoscaler schedules these buffers: a minimum equal to, then below, the buffer.
    const schedule = (b: Record<string, unknown>) => ({ type: 'Schedule', schedule: { activePeriod: { startCron: '* * * * *' }, policy: buffer(b) } });
    const chain = {
      type: 'Chain',
      chain: [
        { id: 'schedule-1', ...schedule({ bufferSize: 10, minReplicas: 10, maxReplicas: 20 }) },
        { id: 'schedule-2', ...schedule({ bufferSize: 4, minReplicas: 3, maxReplicas: 7 }) },
      ],
    };
    const res = await apiRequest(serve.baseUrl, 'POST', PATH, { body: autoscaler('chain-of-schedules', chain) });
    expect(res.status, res.text).toBe(201);
  });
});

describe("--validation agones: Agones's rule for the bounds, for manifests from a real cluster", () => {
  // Agones's e2e suite's buffers: each bound equal to bufferSize.
  const EQUAL_BOUNDS: Array<[string, Record<string, unknown>, string]> = [
    ['max-equals-buffer', buffer({ bufferSize: 5, maxReplicas: 5 }), 'spec.policy.buffer.maxReplicas'],
    ['min-equals-buffer', buffer({ bufferSize: 5, minReplicas: 5, maxReplicas: 10 }), 'spec.policy.buffer.minReplicas'],
    ['counter-equals', counter({ bufferSize: 10, minCapacity: 10, maxCapacity: 10 }), 'spec.policy.counter.minCapacity'],
  ];

  it('by default, a bound equal to the buffer is refused, the message saying Agones accepts it and how to have its rule', async () => {
    for (const [name, policy, field] of EQUAL_BOUNDS) {
      const res = await apiRequest(serve.baseUrl, 'POST', PATH, { body: autoscaler(name, policy) });
      expect(res.status, name).toBe(422);
      const status = res.json as { details: { causes: Array<{ field: string; message: string }> } };
      const cause = status.details.causes.find((c) => c.field === field);
      expect(cause?.message, name).toContain('Agones accepts an equal value, as fleetsim serve --validation agones does');
    }
  });

  it('with --validation agones, those are accepted; a bound below the buffer is still refused, in Agones\'s words', async () => {
    const agones = await startServe(['--db', ':memory:', '--no-default-fleet', '--nodes', '1', '--no-listen', '--feature-gates', 'CountsAndLists=true', '--validation', 'agones']);
    for (const [name, policy] of EQUAL_BOUNDS) {
      const res = await apiRequest(agones.baseUrl, 'POST', PATH, { body: autoscaler(name, policy) });
      expect(res.status, `${name}: ${res.text}`).toBe(201);
    }
    const below = await apiRequest(agones.baseUrl, 'POST', PATH, { body: autoscaler('below', buffer({ bufferSize: 5, minReplicas: 3, maxReplicas: 10 })) });
    expect(below.status).toBe(422);
    expect(below.text).toContain('minReplicas should be bigger than or equal to bufferSize');
  });

  it('refuses another value of --validation, naming the flag and its values', async () => {
    const run = await runCli(['serve', '--db', ':memory:', '--port', '0', '--no-listen', '--validation', 'lenient'], seconds(60));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--validation must be spec or agones, not "lenient"');
    const help = await runCli(['serve', '--help'], seconds(60));
    expect(help.stdout).toMatch(/--validation[\s\S]*agones \(each of those may be equal, as Agones accepts/);
  });
});
