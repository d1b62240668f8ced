import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetManifest } from './helpers/manifests.js';
import { killAll } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { waitFor } from './helpers/wait.js';
import { seconds } from './helpers/time-scale.js';

/**
 * `GET /metrics` on `serve`: Prometheus text with Agones's metric names, labels and types, agreeing
 * with the resource API, and carrying every series Agones's own Grafana dashboards query.
 */

interface Family {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string }>;
}

/**
 * The series Agones's Grafana dashboards (build/grafana in the Agones repository) query, with the
 * labels their queries select on. Labels Prometheus adds at scrape time (app, kubernetes_pod_name,
 * agones_dev_role) are not the exporter's and are left out.
 */
const DASHBOARD_SERIES: Record<string, string[]> = {
  agones_fleet_autoscalers_able_to_scale: ['name', 'namespace'],
  agones_fleet_autoscalers_buffer_limits: ['name', 'namespace', 'type'],
  agones_fleet_autoscalers_buffer_size: ['name', 'namespace', 'type'],
  agones_fleet_autoscalers_current_replicas_count: ['name', 'namespace'],
  agones_fleet_autoscalers_desired_replicas_count: ['name', 'namespace'],
  agones_fleet_autoscalers_limited: ['name', 'namespace'],
  agones_fleet_rollout_percent: ['name', 'namespace', 'type'],
  agones_fleets_replicas_count: ['name', 'namespace', 'type'],
  agones_gameserver_allocations_duration_seconds: ['fleet_name', 'status'],
  agones_gameserver_state_duration: [],
  agones_gameservers_count: ['fleet_name', 'namespace'],
  agones_gameservers_node_count: [],
  agones_gameservers_total: ['fleet_name', 'namespace'],
  agones_healthcheck_status: ['check'],
  agones_k8s_client_http_request_duration_seconds: ['endpoint', 'verb'],
  agones_k8s_client_http_request_total: [],
  agones_k8s_client_workqueue_depth: ['queue_name'],
  agones_k8s_client_workqueue_items_total: ['queue_name'],
  agones_k8s_client_workqueue_latency_seconds: ['queue_name'],
  agones_k8s_client_workqueue_retries_total: ['queue_name'],
  agones_k8s_client_workqueue_work_duration_seconds: ['queue_name'],
  agones_nodes_count: ['empty'],
  apiserver_request_duration_seconds: ['resource', 'verb'],
  apiserver_request_total: ['code', 'resource', 'subresource', 'verb'],
  process_cpu_seconds_total: [],
  process_open_fds: [],
  process_resident_memory_bytes: [],
  process_start_time_seconds: [],
  process_virtual_memory_bytes: [],
};

/**
 * Dashboard series fleetsim does not produce: none now. `go_*` and `up` are not listed: a Node
 * process has no Go runtime, and `up` is Prometheus's own.
 */
const NOT_YET: string[] = [];

/**
 * The samples of one series name (`x_count` of a histogram too), labels and value: the parser
 * above checks the format but keeps no labels on histogram samples.
 */
const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      return { labels, value: Number(m[2]) };
    });
const value = (text: string, name: string, labels: Record<string, string>) =>
  samples(text, name).find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v))?.value;

describe('Prometheus metrics at /metrics', () => {
  let serve: ServeProcess;
  const api = (method: string, path: string, body?: unknown) => apiRequest(serve.baseUrl, method, path, body === undefined ? {} : { body });
  const scrapeText = async (): Promise<string> => {
    const res = await fetch(`${serve.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  const scrape = async (): Promise<Family[]> => parsePrometheusTextFormat(await scrapeText()) as Family[];
  const family = (families: Family[], name: string) => families.find((f) => f.name === name);

  beforeAll(async () => {
    serve = await startServe();
    expect((await api('POST', '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('arena', 3))).status).toBe(201);
    const autoscaler = {
      apiVersion: 'autoscaling.agones.dev/v1',
      kind: 'FleetAutoscaler',
      metadata: { name: 'arena-fas' },
      spec: { fleetName: 'arena', policy: { type: 'Buffer', buffer: { bufferSize: 2, minReplicas: 3, maxReplicas: 10 } }, sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } } },
    };
    expect((await api('POST', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers', autoscaler)).status).toBe(201);
    await waitFor(
      async () => ((await api('GET', '/apis/agones.dev/v1/namespaces/default/fleets/arena')).json as { status?: { readyReplicas?: number } }).status?.readyReplicas === 3,
      { timeoutMs: seconds(15), what: '3 Ready' },
    );
    const allocated = await api('POST', '/gameserverallocation', { namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'arena' } }] });
    expect(allocated.status).toBe(200);
    // The autoscaler keeps 2 Ready beside the allocated one: 3 replicas stay, then it settles.
    await waitFor(
      async () => {
        const status = ((await api('GET', '/apis/agones.dev/v1/namespaces/default/fleets/arena')).json as { status?: { readyReplicas?: number; allocatedReplicas?: number } }).status;
        return status?.allocatedReplicas === 1 && status.readyReplicas === 2;
      },
      { timeoutMs: seconds(15), what: '1 Allocated, 2 Ready' },
    );
  });
  afterAll(() => killAll());

  it('parses as Prometheus text, with Agones names and types', async () => {
    const families = await scrape();
    for (const [name, type] of [
      ['agones_gameservers_count', 'GAUGE'],
      ['agones_gameservers_total', 'COUNTER'],
      ['agones_fleets_replicas_count', 'GAUGE'],
      ['agones_gameserver_allocations_duration_seconds', 'HISTOGRAM'],
      ['agones_gameserver_state_duration', 'HISTOGRAM'],
      ['agones_gameservers_node_count', 'HISTOGRAM'],
      ['agones_nodes_count', 'GAUGE'],
      ['apiserver_request_total', 'COUNTER'],
    ]) {
      expect(family(families, name!)?.type, name).toBe(type);
    }
  });

  it('has every series an Agones Grafana dashboard queries, with the labels the queries select on', async () => {
    const text = await scrapeText();
    const families = parsePrometheusTextFormat(text) as Family[];
    for (const [name, labels] of Object.entries(DASHBOARD_SERIES)) {
      const found = family(families, name);
      expect(found, name).toBeDefined();
      if (labels.length === 0) continue;
      const series = samples(text, found!.type === 'HISTOGRAM' ? `${name}_count` : name);
      expect(series.length, `${name} has samples`).toBeGreaterThan(0);
      for (const label of labels) expect(Object.keys(series[0]!.labels), `${name}{${label}}`).toContain(label);
    }
    for (const name of NOT_YET) expect(family(families, name), `${name} is listed as not produced yet`).toBeUndefined();
  });

  it('agrees with the resource API: GameServers by state, fleet replicas, the autoscaler, nodes, the allocation', async () => {
    // The scrape and the API reads are separate requests: an autoscaler sync (every second) may land
    // between them. A disagreement that lasts through every retry is a real one.
    for (let attempt = 1; ; attempt++) {
      try {
        return await agreesWithResourceApi();
      } catch (error) {
        if (attempt === 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  });

  async function agreesWithResourceApi(): Promise<void> {
    const families = await scrapeText();
    const gameServers = (await api('GET', '/apis/agones.dev/v1/namespaces/default/gameservers')).json as { items: Array<{ status: { state: string } }> };
    const byState = new Map<string, number>();
    for (const gs of gameServers.items) byState.set(gs.status.state, (byState.get(gs.status.state) ?? 0) + 1);
    for (const [state, n] of byState) expect(value(families, 'agones_gameservers_count', { type: state, fleet_name: 'arena', namespace: 'default' }), state).toBe(n);

    const fleet = (await api('GET', '/apis/agones.dev/v1/namespaces/default/fleets/arena')).json as {
      spec: { replicas: number };
      status: { replicas: number; readyReplicas: number; allocatedReplicas: number; reservedReplicas: number };
    };
    const replicas = (type: string) => value(families, 'agones_fleets_replicas_count', { name: 'arena', type, namespace: 'default' });
    expect(replicas('total')).toBe(fleet.status.replicas);
    expect(replicas('ready')).toBe(fleet.status.readyReplicas);
    expect(replicas('allocated')).toBe(fleet.status.allocatedReplicas);
    expect(replicas('reserved')).toBe(fleet.status.reservedReplicas);
    expect(replicas('desired')).toBe(fleet.spec.replicas);

    const fas = (await api('GET', '/apis/autoscaling.agones.dev/v1/namespaces/default/fleetautoscalers/arena-fas')).json as {
      status: { currentReplicas: number; desiredReplicas: number; ableToScale: boolean; scalingLimited: boolean };
    };
    const labels = { name: 'arena-fas', fleet_name: 'arena', namespace: 'default' };
    expect(value(families, 'agones_fleet_autoscalers_desired_replicas_count', labels)).toBe(fas.status.desiredReplicas);
    expect(value(families, 'agones_fleet_autoscalers_current_replicas_count', labels)).toBe(fas.status.currentReplicas);
    expect(value(families, 'agones_fleet_autoscalers_able_to_scale', labels)).toBe(Number(fas.status.ableToScale));
    expect(value(families, 'agones_fleet_autoscalers_limited', labels)).toBe(Number(fas.status.scalingLimited));
    expect(value(families, 'agones_fleet_autoscalers_buffer_size', { ...labels, type: 'count' })).toBe(2);
    expect(value(families, 'agones_fleet_autoscalers_buffer_limits', { ...labels, type: 'max' })).toBe(10);
    expect(value(families, 'agones_fleet_autoscalers_buffer_limits', { ...labels, type: 'min' })).toBe(3);

    const nodes = (await api('GET', '/api/v1/nodes')).json as { items: Array<{ metadata: { name: string } }> };
    const busy = new Set((gameServers.items as Array<{ status: { nodeName?: string } }>).map((g) => g.status.nodeName).filter(Boolean));
    expect(value(families, 'agones_nodes_count', { empty: 'false' })).toBe(busy.size);
    expect(value(families, 'agones_nodes_count', { empty: 'true' })).toBe(nodes.items.length - busy.size);

    const allocated = samples(families, 'agones_gameserver_allocations_duration_seconds_count').find(
      (m) => m.labels.status === 'Allocated' && m.labels.fleet_name === 'arena',
    );
    expect(allocated?.value).toBe(1);
    expect(allocated?.labels).toMatchObject({ is_multicluster: 'false', scheduling_strategy: 'Packed' });
    // The allocated GameServer left Ready: how long it was Ready is in the state-duration histogram.
    const readyFor = samples(families, 'agones_gameserver_state_duration_count').find((m) => m.labels.type === 'Ready' && m.labels.fleet_name === 'arena');
    expect(readyFor?.value).toBeGreaterThanOrEqual(1);
    const readySum = samples(families, 'agones_gameserver_state_duration_sum').find((m) => m.labels.type === 'Ready' && m.labels.fleet_name === 'arena');
    expect(readySum?.value).toBeGreaterThan(0);
    // Each GameServer passed through Ready once at least: the counter of state changes says so.
    expect(value(families, 'agones_gameservers_total', { type: 'Ready', fleet_name: 'arena', namespace: 'default' })).toBeGreaterThanOrEqual(3);
  }

  it("counts the controllers' writes as the API requests Agones's controllers would make", async () => {
    const text = await scrapeText();
    // The set created its GameServers (POST 201) and the GameServer controller moved them (PUT 200).
    expect(value(text, 'agones_k8s_client_http_request_total', { status_code: '201', verb: 'POST' })).toBeGreaterThanOrEqual(1);
    expect(value(text, 'agones_k8s_client_http_request_total', { status_code: '200', verb: 'PUT' })).toBeGreaterThanOrEqual(3);
    const puts = samples(text, 'agones_k8s_client_http_request_duration_seconds_count').find(
      (m) => m.labels.verb === 'PUT' && m.labels.endpoint === '/apis/agones.dev/v1/namespaces/{namespace}/gameservers/{name}',
    );
    expect(puts?.value).toBeGreaterThanOrEqual(3);
  });

  it("reports the controllers' work queues and liveness checks under Agones's queue and check names", async () => {
    const text = await scrapeText();
    for (const check of ['gameserver-workerqueue', 'gameserverset-workerqueue', 'fleet-workerqueue', 'fleetautoscaler-workerqueue']) {
      expect(value(text, 'agones_healthcheck_status', { check }), check).toBe(0);
    }
    for (const queue of ['agones.dev.GameServerController', 'agones.dev.GameServerSetController', 'agones.dev.FleetController', 'autoscaling.agones.dev.FleetAutoscalerController']) {
      const labels = { queue_name: queue };
      // Each queue had work: the fleet, its set and GameServers, the autoscaler.
      expect(value(text, 'agones_k8s_client_workqueue_items_total', labels), queue).toBeGreaterThan(0);
      expect(value(text, 'agones_k8s_client_workqueue_work_duration_seconds_count', labels), queue).toBeGreaterThan(0);
      expect(value(text, 'agones_k8s_client_workqueue_latency_seconds_count', labels), queue).toBeGreaterThan(0);
      expect(value(text, 'agones_k8s_client_workqueue_depth', labels), queue).toBeGreaterThanOrEqual(0);
      expect(value(text, 'agones_k8s_client_workqueue_retries_total', labels), queue).toBeGreaterThanOrEqual(0);
    }
  });

  it("counts the resource API's requests as the API server does (verb, resource, scope, code)", async () => {
    expect((await api('GET', '/apis/agones.dev/v1/namespaces/default/fleets/missing')).status).toBe(404);
    const families = await scrapeText();
    expect(value(families, 'apiserver_request_total', { verb: 'GET', resource: 'fleets', scope: 'resource', code: '404', group: 'agones.dev' })).toBe(1);
    expect(value(families, 'apiserver_request_total', { verb: 'CREATE', resource: 'fleets', scope: 'namespace', code: '201' })).toBe(1);
  });
});

describe('metrics count from the start of the process, as Agones\'s do', () => {
  afterAll(() => killAll());

  it('counts at the first scrape the allocation and the state changes made before it', async () => {
    const serve = await startServe();
    const api = (method: string, path: string, body?: unknown) => apiRequest(serve.baseUrl, method, path, body === undefined ? {} : { body });
    expect((await api('POST', '/apis/agones.dev/v1/namespaces/default/fleets', fleetManifest('early', 2))).status).toBe(201);
    await waitFor(
      async () => ((await api('GET', '/apis/agones.dev/v1/namespaces/default/fleets/early')).json as { status?: { readyReplicas?: number } }).status?.readyReplicas === 2,
      { timeoutMs: seconds(15), what: '2 Ready' },
    );
    const allocated = await api('POST', '/gameserverallocation', { namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': 'early' } }] });
    expect(allocated.status).toBe(200);

    const res = await fetch(`${serve.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const allocations = samples(text, 'agones_gameserver_allocations_duration_seconds_count').find((m) => m.labels.fleet_name === 'early');
    expect(allocations).toMatchObject({ labels: { status: 'Allocated' }, value: 1 });
    expect(value(text, 'agones_gameservers_total', { type: 'Ready', fleet_name: 'early', namespace: 'default' })).toBe(2);
    expect(value(text, 'agones_gameservers_total', { type: 'Allocated', fleet_name: 'early', namespace: 'default' })).toBe(1);
    expect(value(text, 'apiserver_request_total', { verb: 'CREATE', resource: 'fleets', scope: 'namespace', code: '201' })).toBe(1);
    expect(value(text, 'agones_k8s_client_workqueue_items_total', { queue_name: 'agones.dev.FleetController' })).toBeGreaterThan(0);
  });
});
