import { join } from 'node:path';
import { stringify } from 'yaml';
import type { AllocatorOptions } from '../server/allocation/allocator.js';
import type { BaselineConfig, CannedResponse, SidecarGameServer } from './baseline-server.js';
import { type AgonesStage, stageRate } from './durations.js';
import { LIFECYCLE_COUNTER, lifecycleGameServer } from './lifecycle-gameserver.js';
import { SCENARIOS_DIR } from './paths.js';
import type { RemoteTarget } from './remote-target.js';
import { type AllocatorClient, type HttpAnswer, readSecret, request } from './servers.js';
import { ALLOCATOR_CLIENT_CA_SECRET, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_SECRET } from '../server/allocation/allocator-install.js';
import { HttpsTransport } from '../server/allocation/remote-transport.js';
import { encodeAllocationResponse } from '../server/grpc/allocation-grpc.js';
import type { AllocationResponseJson } from '../server/allocation/allocation-request.js';

/**
 * What the harness knows about each k6 scenario in scenarios/: its defaults, the fixture
 * fleetsim starts with, the settings the script reads from its environment, which k6 metrics
 * make the run's request rate and latency, and how to record fleetsim's answers for the baseline.
 */

export const SCENARIO_NAMES = ['allocation-throughput', 'allocation-grpc', 'watch-fanout', 'sidecar-lifecycle', 'agones-scenario'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}

/** A run's settings, defaults filled in. */
export interface BenchSettings {
  scenario: ScenarioName;
  /** Length of the load phase (k6 duration text) and in seconds. */
  duration: string;
  durationSeconds: number;
  rate: number;
  vus: number;
  fleetSize: number;
  /** Seconds an allocated game server plays before it shuts down (or a lifecycle VU's session). */
  session: number;
  /** The p99 (ms) the scenario's latency threshold allows. */
  p99Ms: number;
  baseline: boolean;
  keepRaw: boolean;
  /**
   * Seconds between scrapes of fleetsim's GET /metrics during its run, as Prometheus would
   * (Agones's own setup scrapes every 30 s); 0 for none. A scrape turns the metrics' observation
   * of state changes, allocations and requests on, so the run measures what that costs.
   */
  scrapeSeconds: number;
  /** `fleetsim serve --allocator-model` and, for agones-batch, its replicas, batch wait and lag. */
  allocator: AllocatorOptions;
  /** `--target-allocator`: allocate from another cluster instead of a local fleetsim. */
  remote?: RemoteTarget;
  /** agones-scenario: the file and the factor its durations are scaled by. */
  scenarioFile?: string;
  stages?: AgonesStage[];
  timeScale?: number;
}

export interface Fixture {
  /** Manifests (YAML) applied with `fleetsim serve -f`. */
  manifests?: string;
  /** ProcessProfiles (YAML) for `fleetsim serve --profiles`. */
  profiles?: string;
}

/** A k6 metric and the samples of it that count (by the `endpoint` tag; undefined: any). */
export interface MetricSelector {
  metric: string;
  endpoints?: readonly string[];
}

export interface ScenarioDefinition {
  name: ScenarioName;
  summary: string;
  defaults: { duration: string; rate: number; vus: number; fleetSize: number; session: number; p99Ms: number };
  featureGates: string;
  fleet?: { name: string; waitFor: 'ready' | 'exists' };
  /** The scenario addresses game servers by name: the harness writes them to a file for k6. */
  needsNames: boolean;
  fixture(settings: BenchSettings): Fixture;
  nodes(settings: BenchSettings): number;
  k6Env(settings: BenchSettings): Record<string, string>;
  /** Samples counted for the request rate (one per request or delivery). */
  requests: MetricSelector;
  /** Samples whose values make the latency figures. */
  latency: MetricSelector;
  /**
   * fleetsim serves its allocator over mutual TLS (--allocator-tls auto) and the script gets its
   * address and the client certificate: ALLOCATOR_ADDRESS, CLIENT_CERT, CLIENT_KEY, CA_CERT, PROTO_DIR.
   */
  allocatorTls?: boolean;
  /** Whether latency samples are allocation requests (they then also fill the allocation histogram). */
  allocation: boolean;
  /** Summary metrics whose counts are the outcomes, by label. */
  outcomes: Record<string, string>;
  /** Seconds k6 should take, setup and grace included, to bound the run. */
  expectedSeconds(settings: BenchSettings): number;
  /** Records fleetsim's answers to each route the script uses, for the baseline to repeat. */
  capture(baseUrl: string, settings: BenchSettings, names: readonly string[], allocatorClient: AllocatorClient | undefined): Promise<BaselineConfig>;
  /** What baselineRatio compares, in words, for the console and the report. */
  ratioMeaning: string;
}

export const MAX_PODS_PER_NODE = 110;

const canned = (answer: HttpAnswer): CannedResponse => ({ status: answer.status, body: answer.body });

function expectStatus(what: string, answer: HttpAnswer, ...statuses: number[]): HttpAnswer {
  if (!statuses.includes(answer.status)) throw new Error(`recording fleetsim's answer to ${what}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return answer;
}

// -- fixtures ------------------------------------------------------------------------------------

export const SESSION_PROFILE = 'bench-session';

/**
 * Game servers that become Ready 200-600 ms after they are scheduled and shut down `session` s
 * after allocation. Quick starts keep the set's servers-starting limit (5,000, as Agones's
 * controller) from capping how fast a churning fleet refills.
 */
export function sessionProfile(session: number): string {
  return stringify({
    apiVersion: 'fleetsim.dev/v1alpha1',
    kind: 'ProcessProfile',
    metadata: { name: SESSION_PROFILE },
    spec: {
      health: { ping: false },
      stages: [
        { when: 'Scheduled', delay: { min: '200ms', max: '600ms' }, next: [{ action: 'ready' }] },
        { when: 'Allocated', delay: `${session}s`, next: [{ action: 'shutdown' }] },
      ],
    },
  });
}

/** A Fleet of `replicas` whose GameServers run `spec` (health, pod template) on port 7654. */
function fleetManifest(name: string, namespace: string, replicas: number, annotations: Record<string, string>, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name, namespace },
    spec: { replicas, template: { metadata: { annotations }, spec: { ports: [{ name: 'default', containerPort: 7654 }], ...spec } } },
  };
}

/** A fleet of simulated game servers: their process is the ProcessProfile's, so the image is a name only. */
function simulatedFleet(name: string, replicas: number, annotations: Record<string, string>): Record<string, unknown> {
  return fleetManifest(name, 'default', replicas, annotations, {
    // Simulated processes send no pings here: health checking is not what these runs measure.
    health: { disabled: true },
    template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
  });
}

/**
 * A Buffer FleetAutoscaler that keeps 90% of `size` Ready beyond the allocated ones (the buffer
 * must be below minReplicas; never fewer than `size` replicas, at most four times it). The buffer
 * is large because replacements take a moment (the autoscaler's 1 s interval, then start-up): at
 * thousands of allocations a second, thousands are on their way, and a smaller buffer would
 * measure the fleet running dry rather than allocation.
 */
function bufferAutoscaler(name: string, namespace: string, size: number): Record<string, unknown> {
  return {
    apiVersion: 'autoscaling.agones.dev/v1',
    kind: 'FleetAutoscaler',
    metadata: { name, namespace },
    spec: {
      fleetName: name,
      policy: {
        type: 'Buffer',
        buffer: { bufferSize: Math.max(1, Math.floor(size * 0.9)), minReplicas: size, maxReplicas: size * 4 },
      },
      sync: { type: 'FixedInterval', fixedInterval: { seconds: 1 } },
    },
  };
}

/**
 * A churning fleet: `size` Ready game servers, their Buffer FleetAutoscaler, and allocated servers
 * that shut down after their session (the ProcessProfile) and are replaced.
 */
export function churningFleet(name: string, size: number): string {
  const fleet = simulatedFleet(name, size, { 'fleetsim.dev/process-profile': SESSION_PROFILE });
  return [fleet, bufferAutoscaler(name, 'default', size)].map((d) => stringify(d)).join('---\n');
}

/** Agones's example game server: real clusters can pull it, and fleetsim simulates that image. */
export const SIMPLE_GAME_SERVER_IMAGE = 'us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41';

/**
 * The same churning fleet for another cluster (`--target-allocator --kubeconfig`): the example
 * game server, which marks itself Ready on start and shuts itself down `session` seconds (whole,
 * at least 1) after it is allocated (its -automaticShutdownDelaySec), with the same autoscaler.
 */
export function remoteChurningFleet(name: string, namespace: string, size: number, session: number): string {
  const container = { name: 'simple-game-server', image: SIMPLE_GAME_SERVER_IMAGE, args: [`-automaticShutdownDelaySec=${remoteSessionSeconds(session)}`] };
  const fleet = fleetManifest(name, namespace, size, {}, { template: { spec: { containers: [container] } } });
  return [fleet, bufferAutoscaler(name, namespace, size)].map((d) => stringify(d)).join('---\n');
}

/** The example's shutdown delay takes whole seconds. */
export const remoteSessionSeconds = (session: number) => Math.max(1, Math.round(session));

/**
 * The baseline of allocation over gRPC: fleetsim's answer to one allocation, as the
 * AllocationResponse bytes its gRPC port would send, served with the allocator's own certificate
 * and client CA.
 */
async function captureGrpcAllocation(baseUrl: string, client: AllocatorClient | undefined, fleet: string): Promise<BaselineConfig> {
  if (!client) throw new Error('allocation-grpc records its baseline through the allocator, which this fleetsim does not serve over TLS');
  const server = await readSecret(baseUrl, ALLOCATOR_NAMESPACE, ALLOCATOR_TLS_SECRET);
  const clientCa = await readSecret(baseUrl, ALLOCATOR_NAMESPACE, ALLOCATOR_CLIENT_CA_SECRET);
  // Through the allocator's TLS port, where a client with the certificate allocates (the main port refuses).
  const transport = new HttpsTransport();
  const call = { endpoint: client.address, body: JSON.stringify(ALLOCATOR_BODY(fleet)), tls: client, signal: AbortSignal.timeout(30_000), socketTimeoutMs: 30_000 };
  const answer = expectStatus('POST /gameserverallocation', await transport.post(call).finally(() => transport.close()), 200);
  const response = Buffer.from(encodeAllocationResponse(JSON.parse(answer.body) as AllocationResponseJson)).toString('base64');
  return {
    routes: {},
    sidecar: {},
    allocator: { response, cert: server['tls.crt'] ?? '', key: server['tls.key'] ?? '', clientCa: clientCa['client-ca.crt'] ?? '' },
  };
}

const nodesFor = (pods: number) => Math.ceil(Math.max(pods, 1) / MAX_PODS_PER_NODE) + 2;

/** Room for a churning fleet at its largest (four times its size) and the servers shutting down. */
export const churningFleetNodes = (size: number) => nodesFor(size * 5);

// -- allocation (allocation-throughput and agones-scenario) -------------------------------------

const ALLOCATOR_BODY = (fleet: string) => ({ namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }] });
const RESOURCE_API_BODY = (fleet: string) => ({
  apiVersion: 'allocation.agones.dev/v1',
  kind: 'GameServerAllocation',
  spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }] },
});
const RESOURCE_API_ALLOCATIONS = '/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations';

async function captureAllocations(baseUrl: string, fleet: string, resourceApi: boolean): Promise<BaselineConfig> {
  const routes: Record<string, CannedResponse> = {};
  routes['POST /gameserverallocation'] = canned(
    expectStatus('POST /gameserverallocation', await request(baseUrl, 'POST', '/gameserverallocation', ALLOCATOR_BODY(fleet)), 200),
  );
  if (resourceApi) {
    const answer = expectStatus('a GameServerAllocation', await request(baseUrl, 'POST', RESOURCE_API_ALLOCATIONS, RESOURCE_API_BODY(fleet)), 201);
    if (!answer.body.includes('"state":"Allocated"')) throw new Error(`recording a GameServerAllocation: not Allocated: ${answer.body.slice(0, 300)}`);
    routes[`POST ${RESOURCE_API_ALLOCATIONS}`] = canned(answer);
  }
  return { routes, sidecar: {} };
}

/** The fleet of an allocation scenario: `name`, churning (sessions end, an autoscaler refills it), waited on until Ready. */
function churningAllocationFleet(name: string): Pick<ScenarioDefinition, 'fleet' | 'fixture' | 'nodes'> {
  return {
    fleet: { name, waitFor: 'ready' },
    fixture: (s) => ({ manifests: churningFleet(name, s.fleetSize), profiles: sessionProfile(s.session) }),
    nodes: (s) => churningFleetNodes(s.fleetSize),
  };
}

const ALLOCATION_OUTCOMES = { Allocated: 'alloc_allocated', UnAllocated: 'alloc_unallocated', Contention: 'alloc_contention', error: 'alloc_error' };

const allocationThroughput: ScenarioDefinition = {
  name: 'allocation-throughput',
  summary: 'open-model allocations through the resource API and POST /gameserverallocation against a churning, autoscaled fleet',
  defaults: { duration: '30s', rate: 200, vus: 100, fleetSize: 1000, session: 10, p99Ms: 50 },
  featureGates: '',
  ...churningAllocationFleet('bench-allocation'),
  needsNames: false,
  k6Env: (s) => ({ FLEET: 'bench-allocation', RATE: String(s.rate), VUS: String(s.vus), DURATION: s.duration, P99_MS: String(s.p99Ms) }),
  requests: { metric: 'http_reqs', endpoints: ['resource-api', 'allocator'] },
  latency: { metric: 'http_req_duration', endpoints: ['resource-api', 'allocator'] },
  allocation: true,
  outcomes: ALLOCATION_OUTCOMES,
  expectedSeconds: (s) => s.durationSeconds + 15,
  capture: (baseUrl) => captureAllocations(baseUrl, 'bench-allocation', true),
  ratioMeaning: 'allocation requests completed per second (any outcome), fleetsim / baseline',
};

const allocationGrpc: ScenarioDefinition = {
  name: 'allocation-grpc',
  summary: 'open-model allocations through gRPC allocation.AllocationService/Allocate over mutual TLS against a churning, autoscaled fleet',
  defaults: { duration: '30s', rate: 200, vus: 100, fleetSize: 1000, session: 10, p99Ms: 50 },
  featureGates: '',
  ...churningAllocationFleet('bench-grpc'),
  needsNames: false,
  allocatorTls: true,
  k6Env: (s) => ({ FLEET: 'bench-grpc', RATE: String(s.rate), VUS: String(s.vus), DURATION: s.duration, P99_MS: String(s.p99Ms) }),
  requests: { metric: 'grpc_req_duration', endpoints: ['allocator-grpc'] },
  latency: { metric: 'grpc_req_duration', endpoints: ['allocator-grpc'] },
  allocation: true,
  outcomes: ALLOCATION_OUTCOMES,
  expectedSeconds: (s) => s.durationSeconds + 15,
  capture: (baseUrl, _s, _names, allocatorClient) => captureGrpcAllocation(baseUrl, allocatorClient, 'bench-grpc'),
  ratioMeaning: 'gRPC allocation calls completed per second (any outcome), fleetsim / a canned gRPC allocator (HTTP/2, the same mutual TLS)',
};

const agonesScenario: ScenarioDefinition = {
  name: 'agones-scenario',
  summary: "Agones's allocation load-test scenario file (duration,clients,intervalMs per line) through POST /gameserverallocation",
  defaults: { duration: '', rate: 0, vus: 200, fleetSize: 1000, session: 10, p99Ms: 500 },
  featureGates: '',
  ...churningAllocationFleet('bench-agones'),
  needsNames: false,
  k6Env: (s) => ({
    FLEET: 'bench-agones',
    SCENARIO_FILE: s.scenarioFile ?? join(SCENARIOS_DIR, 'agones', 'fixed.txt'),
    TIME_SCALE: String(s.timeScale ?? 1),
    VUS: String(s.vus),
    P99_MS: String(s.p99Ms),
  }),
  requests: { metric: 'http_reqs', endpoints: ['allocator'] },
  latency: { metric: 'http_req_duration', endpoints: ['allocator'] },
  allocation: true,
  outcomes: ALLOCATION_OUTCOMES,
  expectedSeconds: (s) => s.durationSeconds + 15,
  capture: (baseUrl) => captureAllocations(baseUrl, 'bench-agones', false),
  ratioMeaning: 'allocation requests completed per second (any outcome), fleetsim / baseline',
};

/** The highest allocation rate an Agones scenario asks for (to size k6's VUs in the summary). */
export function peakStageRate(stages: readonly AgonesStage[]): number {
  return Math.max(...stages.map(stageRate));
}

// -- watch fan-out -------------------------------------------------------------------------------

export const WATCHERS_PER_VU = 50;
export const DRAIN_SECONDS = 2;
/** Time the watchers get to connect before the driver starts changing game servers. */
export const connectSeconds = (watchers: number) => Math.min(15, 1 + Math.ceil(watchers / 1000));

const watchFanout: ScenarioDefinition = {
  name: 'watch-fanout',
  summary: 'WebSocket watches on GameServer sidecars while a driver changes those GameServers at a set rate',
  defaults: { duration: '30s', rate: 20, vus: 100, fleetSize: 50, session: 0, p99Ms: 250 },
  featureGates: '',
  fleet: { name: 'bench-watch', waitFor: 'ready' },
  needsNames: true,
  fixture: (s) => ({ manifests: stringify(simulatedFleet('bench-watch', s.fleetSize, {})) }),
  nodes: (s) => nodesFor(s.fleetSize),
  k6Env: (s) => ({
    WATCHERS: String(s.vus),
    WATCHERS_PER_VU: String(WATCHERS_PER_VU),
    RATE: String(s.rate),
    DURATION: s.duration,
    CONNECT_SECONDS: String(connectSeconds(s.vus)),
    DRAIN_SECONDS: String(DRAIN_SECONDS),
    P99_MS: String(s.p99Ms),
  }),
  requests: { metric: 'watch_delivered' },
  latency: { metric: 'watch_delivery_ms' },
  allocation: false,
  outcomes: { changes: 'watch_changes', delivered: 'watch_delivered', socketErrors: 'watch_socket_errors', earlyCloses: 'watch_early_closes' },
  expectedSeconds: (s) => connectSeconds(s.vus) + s.durationSeconds + DRAIN_SECONDS + 15,
  capture: async (baseUrl, _s, names) => {
    const name = names[0];
    if (!name) throw new Error('the watch fleet has no GameServers');
    const sdk = `/sdk/default/${encodeURIComponent(name)}`;
    // Set the driver's annotation once first, so the recorded GameServer is as large as the ones
    // the watchers receive during the run.
    const put = expectStatus('PUT metadata/annotation', await request(baseUrl, 'PUT', `${sdk}/metadata/annotation`, { key: 'bench-sent', value: `${Date.now()}-0` }), 200);
    const gs = expectStatus('GET gameserver', await request(baseUrl, 'GET', `${sdk}/gameserver`), 200);
    return {
      routes: {},
      sidecar: { 'PUT /metadata/annotation': canned(put) },
      watchGameServer: JSON.parse(gs.body) as SidecarGameServer,
    };
  },
  ratioMeaning: 'watch deliveries per second, fleetsim / baseline (the p99 delivery latency of each is printed beside it)',
};

// -- sidecar lifecycle ---------------------------------------------------------------------------

const LIFECYCLE_PLAYERS = 4;

const sidecarLifecycle: ScenarioDefinition = {
  name: 'sidecar-lifecycle',
  summary: 'VUs act as game servers through sidecar REST: create, Ready, health pings, players, counters, Shutdown',
  defaults: { duration: '30s', rate: 2, vus: 10, fleetSize: 0, session: 5, p99Ms: 100 },
  featureGates: 'PlayerTracking=true&CountsAndLists=true',
  needsNames: false,
  fixture: () => ({}),
  nodes: (s) => nodesFor(s.vus * 4),
  k6Env: (s) => ({
    VUS: String(s.vus),
    DURATION: s.duration,
    SESSION_SECONDS: String(s.session),
    RATE: String(s.rate),
    PLAYERS: String(LIFECYCLE_PLAYERS),
    P99_MS: String(s.p99Ms),
  }),
  requests: { metric: 'http_reqs', endpoints: ['sidecar', 'resource-api'] },
  latency: { metric: 'http_req_duration', endpoints: ['sidecar'] },
  allocation: false,
  outcomes: { completed: 'lifecycle_completed', failed: 'lifecycle_failed' },
  expectedSeconds: (s) => s.durationSeconds + s.session + 25,
  capture: async (baseUrl) => {
    const name = 'bench-capture';
    const created = expectStatus(
      'creating a GameServer',
      await request(baseUrl, 'POST', '/apis/agones.dev/v1/namespaces/default/gameservers', lifecycleGameServer(name, LIFECYCLE_PLAYERS)),
      201,
    );
    const sdk = `/sdk/default/${name}`;
    let ready = await request(baseUrl, 'POST', `${sdk}/ready`, {});
    for (let attempt = 0; attempt < 100 && ready.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await request(baseUrl, 'POST', `${sdk}/ready`, {});
    }
    expectStatus('Ready', ready, 200);
    const health = expectStatus('health', await request(baseUrl, 'POST', `${sdk}/health`, {}), 200);
    const allocate = expectStatus('allocate', await request(baseUrl, 'POST', `${sdk}/allocate`, {}), 200);
    const connect = expectStatus('player connect', await request(baseUrl, 'POST', `${sdk}/alpha/player/connect`, { playerID: 'player-1' }), 200);
    const counter = expectStatus('counter', await request(baseUrl, 'PATCH', `${sdk}/v1beta1/counters/${LIFECYCLE_COUNTER}`, { countDiff: 1 }), 200);
    const gs = expectStatus('GET gameserver', await request(baseUrl, 'GET', `${sdk}/gameserver`), 200);
    const disconnect = expectStatus('player disconnect', await request(baseUrl, 'POST', `${sdk}/alpha/player/disconnect`, { playerID: 'player-1' }), 200);
    const shutdown = expectStatus('shutdown', await request(baseUrl, 'POST', `${sdk}/shutdown`, {}), 200);
    return {
      routes: { 'POST /apis/agones.dev/v1/namespaces/default/gameservers': canned(created) },
      sidecar: {
        'POST /ready': canned(ready),
        'POST /health': canned(health),
        'POST /allocate': canned(allocate),
        'POST /alpha/player/connect': canned(connect),
        'POST /alpha/player/disconnect': canned(disconnect),
        // The baseline keeps the count, as the script checks it.
        'PATCH /v1beta1/counters/{name}': { status: counter.status, body: counter.body.replace(/"count":"\d+"/, '"count":"0"') },
        'GET /gameserver': canned(gs),
        'POST /shutdown': canned(shutdown),
      },
    };
  },
  ratioMeaning: 'sidecar and create requests completed per second, fleetsim / baseline',
};

export const SCENARIOS: Record<ScenarioName, ScenarioDefinition> = {
  'allocation-throughput': allocationThroughput,
  'allocation-grpc': allocationGrpc,
  'watch-fanout': watchFanout,
  'sidecar-lifecycle': sidecarLifecycle,
  'agones-scenario': agonesScenario,
};

export function scriptPath(name: ScenarioName): string {
  return join(SCENARIOS_DIR, `${name}.ts`);
}
