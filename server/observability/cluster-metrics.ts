import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import client from 'prom-client';
import type { Subscription } from 'rxjs';
import type { AllocationOutcome } from '../allocation/allocation-service.js';
import type { Cluster } from '../cluster.js';
import { FLEET_KIND, FLEET_LABEL } from '../kinds/fleet/fleet.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import type { Resource } from '../kinds/resource.js';
import { type HistogramTally, TalliedCounter, TalliedGauge, TalliedHistogram } from './metric-tallies.js';
import { stateEnteredAt } from '../kinds/gameserver/events.js';
import { type ControllerRequest, controllerRequestOf, isControllerWrite } from './controller-requests.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import type { FleetAutoscalerSpec, FleetAutoscalerStatus } from '../kinds/fleetautoscaler/fleetautoscaler.js';

/**
 * Prometheus metrics with Agones's names, labels and types (its metrics guide), from the cluster
 * as it is: gauges are read from the read model when scraped, counters and histograms follow the
 * committed changes and the allocations as they happen. The exposition is prom-client's. Where
 * Agones records a label value, fleetsim uses the same words (`type="ready"`, `empty="true"`…).
 */

/** Agones's buckets for the allocation latency and its client's work queues, in seconds. */
const ALLOCATION_BUCKETS = [0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3];
/** Agones's buckets for the tries an allocation took until it succeeded. */
const ALLOCATION_RETRY_BUCKETS = [1, 2, 3, 4, 5];
/** Agones's buckets for the time a GameServer spends in a state, in seconds. */
const STATE_DURATION_BUCKETS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** Agones's buckets for GameServers per node (just above each whole number). */
const NODE_COUNT_BUCKETS = [...[...Array(17).keys()], 32, 40, 50, 60, 70, 80, 90, 100, 110, 120].map((n) => n + 0.00001);
/** The API server's request-duration buckets. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** The API server's request labels, in the order a request's label values are given. */
export const REQUEST_LABELS = ['component', 'dry_run', 'group', 'resource', 'scope', 'subresource', 'verb', 'version'] as const;
export type RequestLabels = readonly [string, string, string, string, string, string, string, string];

interface FleetStatusFields {
  replicas?: number;
  readyReplicas?: number;
  reservedReplicas?: number;
  allocatedReplicas?: number;
  counters?: Record<string, AggregatedCount>;
  lists?: Record<string, AggregatedCount>;
}
interface AggregatedCount {
  allocatedCount?: number | bigint;
  allocatedCapacity?: number | bigint;
  count?: number | bigint;
  capacity?: number | bigint;
}

/**
 * prom-client's default metrics (process_*, nodejs_*) but three, each collector prom-client's own
 * module. Left out: its GC one, which observes every garbage collection through a
 * PerformanceObserver (~5 % of allocation throughput under churn; no Agones dashboard reads it);
 * and the two that walk every open socket while the scrape holds the event loop, which with
 * 19,000 WebSocket watchers held it 20-36 ms each scrape (CPU profile), at the deliveries' p99:
 * `nodejs_active_handles` (a Node internal Agones has no counterpart of) and
 * `process_open_fds`, which `openFileDescriptors` below counts off the loop instead.
 */
const PROCESS_COLLECTORS = [
  'processCpuTotal',
  'processStartTime',
  'osMemoryHeap',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
] as const;

/** `process_open_fds` as prom-client's, the listing of /proc/self/fd read on libuv's thread pool. */
function openFileDescriptors(registry: client.Registry): void {
  if (process.platform !== 'linux') return;
  new client.Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      try {
        // Less the descriptor the listing itself held open.
        this.set((await readdir('/proc/self/fd')).length - 1);
      } catch {
        // No /proc: no figure, as prom-client.
      }
    },
  });
}

type Collector = (registry: client.Registry, config: { eventLoopMonitoringPrecision: number }) => void;
const requireFromHere = createRequire(import.meta.url);

function loadCollector(name: (typeof PROCESS_COLLECTORS)[number]): Collector {
  return requireFromHere(`prom-client/lib/metrics/${name}`) as Collector;
}

export class ClusterMetrics {
  readonly registry = new client.Registry();
  private subscription: Subscription | undefined;
  // Followed on the hot paths: tallied in plain numbers, handed to the registry when scraped.
  private readonly gameServersTotal: TalliedCounter;
  private readonly stateDuration: TalliedHistogram;
  private readonly allocations: TalliedHistogram;
  private readonly allocationRetries: TalliedHistogram;
  /** Its one series, made at the first success (Agones shows none before). */
  private retriedUntilSuccess: HistogramTally | undefined;
  /** The resource API's requests (`apiserver_request_*`), counted by its HTTP adapter (api/web/metrics-routes.ts). */
  readonly apiRequests: { total: TalliedCounter; duration: TalliedHistogram };
  private readonly queueDepth: TalliedGauge;
  private readonly queueAdds: TalliedCounter;
  private readonly queueLatency: TalliedHistogram;
  private readonly queueWork: TalliedHistogram;
  private readonly queueRetries: TalliedCounter;
  private readonly clientRequests: TalliedCounter;
  private readonly clientRequestDuration: TalliedHistogram;
  /** The controllers' writes waiting for the transaction that holds them. */
  private pendingWrites: { committed: Promise<void>; requests: Array<{ request: ControllerRequest; started: number }> } | undefined;
  /** Liveness checks by name: Agones reports each as `agones_healthcheck_status{check}`. */
  private readonly healthChecks = new Map<string, () => boolean>();

  constructor(private readonly cluster: Cluster) {
    const registers = [this.registry];
    // prom-client calls `collect` with the metric as `this`: the cluster is reached by closure.
    const perNode = () => this.gameServersPerNode();

    new client.Gauge({
      name: 'agones_gameservers_count',
      help: 'The number of gameservers per fleet and status',
      labelNames: ['type', 'fleet_name', 'namespace'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, { labels: Record<string, string>; n: number }>();
        for (const gs of cluster.gameServers.values()) {
          const labels = { type: gs.status.state, fleet_name: fleetOf(gs), namespace: gs.metadata.namespace };
          const key = `${labels.type}\0${labels.fleet_name}\0${labels.namespace}`;
          const entry = counts.get(key);
          if (entry) entry.n++;
          else counts.set(key, { labels, n: 1 });
        }
        for (const { labels, n } of counts.values()) this.set(labels, n);
      },
    });
    this.gameServersTotal = new TalliedCounter({
      name: 'agones_gameservers_total',
      help: 'The total of gameservers per fleet and status',
      labelNames: ['type', 'fleet_name', 'namespace'],
      registers,
    });
    this.stateDuration = new TalliedHistogram({
      name: 'agones_gameserver_state_duration',
      help: 'The time gameserver exists in the current state in seconds',
      labelNames: ['type', 'fleet_name', 'namespace'],
      buckets: STATE_DURATION_BUCKETS,
      registers,
    });
    new client.Gauge({
      name: 'agones_fleets_replicas_count',
      help: 'The number of replicas per fleet (total, desired, ready, reserved, allocated)',
      labelNames: ['name', 'type', 'namespace'],
      registers,
      collect() {
        this.reset();
        for (const fleet of cluster.readModel.list(FLEET_KIND)) {
          const status = (fleet.status ?? {}) as FleetStatusFields;
          const labels = (type: string) => ({ name: fleet.metadata.name, type, namespace: fleet.metadata.namespace });
          this.set(labels('total'), status.replicas ?? 0);
          this.set(labels('allocated'), status.allocatedReplicas ?? 0);
          this.set(labels('ready'), status.readyReplicas ?? 0);
          this.set(labels('desired'), (fleet.spec as { replicas?: number }).replicas ?? 0);
          this.set(labels('reserved'), status.reservedReplicas ?? 0);
        }
      },
    });
    new client.Gauge({
      name: 'agones_fleet_rollout_percent',
      help: 'The current fleet rollout percentage',
      labelNames: ['name', 'type', 'namespace'],
      registers,
      collect() {
        this.reset();
        for (const fleet of cluster.readModel.list(FLEET_KIND)) {
          const { name, namespace } = fleet.metadata;
          const sets = cluster.readModel.list('GameServerSet', namespace).filter((s) => s.metadata.labels[FLEET_LABEL] === name);
          // The active set is the newest one (a rolling update's target).
          const active = sets.sort((a, b) => (a.metadata.creationTimestamp < b.metadata.creationTimestamp ? 1 : -1))[0];
          this.set({ name, type: 'current_replicas', namespace }, (active?.status as { replicas?: number } | undefined)?.replicas ?? 0);
          this.set({ name, type: 'desired_replicas', namespace }, (fleet.spec as { replicas?: number }).replicas ?? 0);
        }
      },
    });
    for (const [metric, field, help] of [
      ['agones_fleet_counters', 'counters', 'Aggregated Counters counts and capacity across GameServers in the Fleet'],
      ['agones_fleet_lists', 'lists', 'Aggregated Lists counts and capacity across GameServers in the Fleet'],
    ] as const) {
      const key = field === 'counters' ? 'counter' : 'list';
      new client.Gauge({
        name: metric,
        help,
        labelNames: ['name', 'namespace', 'type', key],
        registers,
        collect() {
          this.reset();
          for (const fleet of cluster.readModel.list(FLEET_KIND)) {
            const aggregated = ((fleet.status ?? {}) as FleetStatusFields)[field] ?? {};
            for (const [item, values] of Object.entries(aggregated)) {
              const labels = (type: string) => ({ name: fleet.metadata.name, namespace: fleet.metadata.namespace, type, [key]: item });
              this.set(labels('allocated_count'), Number(values.allocatedCount ?? 0));
              this.set(labels('allocated_capacity'), Number(values.allocatedCapacity ?? 0));
              this.set(labels('total_count'), Number(values.count ?? 0));
              this.set(labels('total_capacity'), Number(values.capacity ?? 0));
            }
          }
        },
      });
    }
    this.autoscalerGauges(registers);
    new client.Gauge({
      name: 'agones_nodes_count',
      help: 'The count of nodes in the cluster',
      labelNames: ['empty'],
      registers,
      collect() {
        const counts = perNode();
        const empty = [...counts.values()].filter((n) => n === 0).length;
        this.set({ empty: 'true' }, empty);
        this.set({ empty: 'false' }, counts.size - empty);
      },
    });
    new client.Histogram({
      name: 'agones_gameservers_node_count',
      help: 'The count of gameservers per node in the cluster',
      buckets: NODE_COUNT_BUCKETS,
      registers,
      collect() {
        // A distribution of the nodes as they are now, as Agones records it on each resync.
        this.reset();
        for (const n of perNode().values()) this.observe(n);
      },
    });
    for (const [metric, help, value] of [
      ['agones_gameserver_player_connected_total', 'The total number of players connected to gameservers', (gs: GameServer) => gs.status.players?.count],
      ['agones_gameserver_player_capacity_total', 'The available player capacity for gameservers', (gs: GameServer) => gs.status.players?.capacity],
    ] as const) {
      new client.Gauge({
        name: metric,
        help,
        labelNames: ['fleet_name', 'name', 'namespace'],
        registers,
        collect() {
          this.reset();
          if (!cluster.gates.PlayerTracking) return;
          for (const gs of cluster.gameServers.values()) {
            const n = value(gs);
            if (n !== undefined) this.set({ fleet_name: fleetOf(gs), name: gs.metadata.name, namespace: gs.metadata.namespace }, Number(n));
          }
        },
      });
    }
    // Agones's two allocation views share their tags; the retries are recorded, for each local
    // allocation that succeeds, with only the status tag set.
    const allocation = { labelNames: ['fleet_name', 'cluster_name', 'is_multicluster', 'status', 'scheduling_strategy'], registers };
    this.allocations = new TalliedHistogram({
      name: 'agones_gameserver_allocations_duration_seconds',
      help: 'The distribution of gameserver allocation requests latencies.',
      buckets: ALLOCATION_BUCKETS,
      ...allocation,
    });
    this.allocationRetries = new TalliedHistogram({
      name: 'agones_gameserver_allocations_retry_total',
      help: 'The count of gameserver allocation retry until it succeeds',
      buckets: ALLOCATION_RETRY_BUCKETS,
      ...allocation,
    });
    const checks = this.healthChecks;
    new client.Gauge({
      name: 'agones_healthcheck_status',
      help: 'Current check status (0 indicates success, 1 indicates failure)',
      labelNames: ['check'],
      registers,
      collect() {
        this.reset();
        for (const [check, healthy] of checks) this.set({ check }, healthy() ? 0 : 1);
      },
    });
    // Agones's controller records client-go's work-queue metrics under these names (its view names, prefixed agones_).
    const queue = { labelNames: ['queue_name'], registers };
    this.queueDepth = new TalliedGauge({ name: 'agones_k8s_client_workqueue_depth', help: 'Current depth of the work queue.', ...queue });
    this.queueAdds = new TalliedCounter({ name: 'agones_k8s_client_workqueue_items_total', help: 'Total number of items added to the work queue.', ...queue });
    this.queueLatency = new TalliedHistogram({
      name: 'agones_k8s_client_workqueue_latency_seconds',
      help: 'How long an item stays in the work queue.',
      buckets: ALLOCATION_BUCKETS,
      ...queue,
    });
    this.queueWork = new TalliedHistogram({
      name: 'agones_k8s_client_workqueue_work_duration_seconds',
      help: 'How long processing an item from the work queue takes.',
      buckets: ALLOCATION_BUCKETS,
      ...queue,
    });
    this.queueRetries = new TalliedCounter({ name: 'agones_k8s_client_workqueue_retries_total', help: 'Total number of items retried to the work queue.', ...queue });
    // The controllers' writes, as the API requests they would be (see controller-requests.ts).
    this.clientRequests = new TalliedCounter({
      name: 'agones_k8s_client_http_request_total',
      help: 'The total of HTTP requests.',
      labelNames: ['status_code', 'verb'],
      registers,
    });
    this.clientRequestDuration = new TalliedHistogram({
      name: 'agones_k8s_client_http_request_duration_seconds',
      help: 'The duration of HTTP requests.',
      labelNames: ['endpoint', 'verb'],
      buckets: ALLOCATION_BUCKETS,
      registers,
    });
    const requests = new TalliedCounter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...REQUEST_LABELS, 'code'],
      registers,
    });
    const requestDuration = new TalliedHistogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: REQUEST_LABELS,
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.apiRequests = { total: requests, duration: requestDuration };
  }

  /** Whether it follows the cluster now (between `start` and `close`). */
  get started(): boolean {
    return this.subscription !== undefined;
  }

  /**
   * Starts following state changes, the controllers' writes and requests, and the process's own
   * figures: call it as the server starts, so counters and histograms count from there, as
   * Agones's do (an allocation made before the first scrape is counted). The owner hands
   * `observeAllocation` and `workQueue` to the allocator and the controllers.
   */
  start(): void {
    if (this.subscription) return;
    this.cluster.commitObserver = (events, cause, committed) => this.observeControllerWrite(events, cause, committed);
    for (const collector of PROCESS_COLLECTORS) loadCollector(collector)(this.registry, { eventLoopMonitoringPrecision: 10 });
    openFileDescriptors(this.registry);
    this.subscription = this.cluster.gameServerChanges$.subscribe(({ previous, object }) => {
      if (!object) return;
      const state = object.status.state;
      if (previous?.status.state === state) return;
      const fleet = fleetOf(object);
      const namespace = object.metadata.namespace;
      this.gameServersTotal.series(state, fleet, namespace).value++;
      // The read model stamps each version with when its state was entered: the time in the last one.
      const left = stateEnteredAt(object);
      const entered = previous && stateEnteredAt(previous);
      if (entered !== undefined && left !== undefined) this.stateDuration.series(previous!.status.state, fleet, namespace).observe((left - entered) / 1000);
    });
  }

  /**
   * A commit of a controller's: each event counted as its request, timed until the commit is
   * durable. Commits of one transaction share its promise: one callback times them all.
   */
  private observeControllerWrite(events: readonly NewEvent[], cause: Cause | undefined, committed: Promise<void>): void {
    if (!isControllerWrite(cause)) return;
    const started = performance.now();
    let writes = this.pendingWrites;
    if (writes?.committed !== committed) {
      const batch = { committed, requests: [] as Array<{ request: ControllerRequest; started: number }> };
      writes = this.pendingWrites = batch;
      committed.then(
        () => {
          if (this.pendingWrites === batch) this.pendingWrites = undefined;
          const now = performance.now();
          for (const { request, started: at } of batch.requests) {
            const series = this.clientRequestDuration.series(request.endpoint, request.verb);
            for (let i = 0; i < request.count; i++) series.observe((now - at) / 1000);
          }
        },
        () => undefined,
      );
    }
    for (const event of events) {
      const request = controllerRequestOf(event);
      if (!request) continue;
      this.clientRequests.series(request.statusCode, request.verb).value += request.count;
      writes.requests.push({ request, started });
    }
  }

  /** An allocation's outcome (AllocationService's observer); on the allocation path, so kept cheap. */
  observeAllocation(outcome: AllocationOutcome): void {
    const fleet = outcome.gameServer ? fleetOf(outcome.gameServer) : '';
    this.allocations.series(fleet, '', outcome.multicluster ? 'true' : 'false', outcome.status, outcome.strategy).observe(outcome.seconds);
    if (outcome.attempts !== undefined && outcome.status === 'Allocated') (this.retriedUntilSuccess ??= this.allocationRetries.series('', '', '', 'Success', '')).observe(outcome.attempts);
  }

  /**
   * An observer for one controller's work queue, under the name Agones gives that queue
   * (`agones.dev.FleetController`…): what it counts goes to the `agones_k8s_client_workqueue_*` series.
   * It has the shape of the controllers' `WorkQueueObserver`, the port they declare beside themselves.
   */
  workQueue(name: string) {
    const depth = this.queueDepth.series(name);
    const adds = this.queueAdds.series(name);
    const latency = this.queueLatency.series(name);
    const work = this.queueWork.series(name);
    const retries = this.queueRetries.series(name);
    return {
      added: () => void adds.value++,
      depth: (waiting: number) => void (depth.value = waiting),
      started: (waitedMs: number) => latency.observe(waitedMs / 1000),
      finished: (workedMs: number) => work.observe(workedMs / 1000),
      retried: () => void retries.value++,
    };
  }

  /** A liveness check, reported at each scrape under `check` as Agones reports its own (0 healthy, 1 failing). */
  addHealthCheck(check: string, healthy: () => boolean): void {
    this.healthChecks.set(check, healthy);
  }

  /** One scrape: the exposition text. */
  async scrape(): Promise<string> {
    return this.registry.metrics();
  }

  close(): void {
    this.subscription?.unsubscribe();
    if (this.subscription) this.cluster.commitObserver = undefined;
    this.registry.clear();
  }

  private autoscalerGauges(registers: client.Registry[]): void {
    const cluster = this.cluster;
    const autoscalers = () => cluster.readModel.list('FleetAutoscaler');
    const specOf = (fas: Resource) => (fas.spec ?? {}) as FleetAutoscalerSpec;
    const labelsOf = (fas: Resource) => ({ name: fas.metadata.name, fleet_name: specOf(fas).fleetName ?? '', namespace: fas.metadata.namespace });
    const status = (fas: Resource) => (fas.status ?? {}) as Partial<FleetAutoscalerStatus>;
    const gauge = (name: string, help: string, value: (fas: Resource) => number) =>
      new client.Gauge({
        name,
        help,
        labelNames: ['name', 'fleet_name', 'namespace'],
        registers,
        collect() {
          this.reset();
          for (const fas of autoscalers()) this.set(labelsOf(fas), value(fas));
        },
      });
    gauge('agones_fleet_autoscalers_able_to_scale', 'The fleet autoscaler can access the fleet to scale', (fas) => Number(status(fas).ableToScale ?? false));
    gauge('agones_fleet_autoscalers_limited', 'The fleet autoscaler is outside the limits set by MinReplicas and MaxReplicas.', (fas) =>
      Number(status(fas).scalingLimited ?? false),
    );
    gauge('agones_fleet_autoscalers_current_replicas_count', 'The current replicas count as seen by autoscalers', (fas) => status(fas).currentReplicas ?? 0);
    gauge('agones_fleet_autoscalers_desired_replicas_count', 'The desired replicas count as seen by autoscalers', (fas) => status(fas).desiredReplicas ?? 0);
    const buffer = (fas: Resource) => (specOf(fas).policy?.type === 'Buffer' ? specOf(fas).policy?.buffer : undefined);
    new client.Gauge({
      name: 'agones_fleet_autoscalers_buffer_limits',
      help: 'The limits of buffer based fleet autoscalers',
      labelNames: ['name', 'type', 'fleet_name', 'namespace'],
      registers,
      collect() {
        this.reset();
        for (const fas of autoscalers()) {
          const b = buffer(fas);
          if (!b) continue;
          this.set({ ...labelsOf(fas), type: 'max' }, b.maxReplicas ?? 0);
          this.set({ ...labelsOf(fas), type: 'min' }, b.minReplicas ?? 0);
        }
      },
    });
    new client.Gauge({
      name: 'agones_fleet_autoscalers_buffer_size',
      help: 'The buffer size value of autoscalers',
      labelNames: ['name', 'type', 'fleet_name', 'namespace'],
      registers,
      collect() {
        this.reset();
        for (const fas of autoscalers()) {
          const size = buffer(fas)?.bufferSize;
          if (size === undefined) continue;
          // A percentage is recorded as its number, typed `percentage`; a count as `count`.
          if (typeof size === 'string' && size.endsWith('%')) this.set({ ...labelsOf(fas), type: 'percentage' }, Number(size.slice(0, -1)));
          else this.set({ ...labelsOf(fas), type: 'count' }, Number(size));
        }
      },
    });
  }

  /** GameServers scheduled on each node (every node, including empty ones), from the node counter. */
  private gameServersPerNode(): Map<string, number> {
    const perNode = new Map<string, number>();
    for (const node of this.cluster.readModel.list('Node')) perNode.set(node.metadata.name, this.cluster.nodes.gameServersOn(node.metadata.name));
    return perNode;
  }
}

function fleetOf(gs: GameServer): string {
  return gs.metadata.labels[FLEET_LABEL] ?? 'none';
}
