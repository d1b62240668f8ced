import client from 'prom-client';
import type { Subscription } from 'rxjs';
import type { AllocationOutcome } from '../allocation/allocation-service.js';
import type { MetricsCluster } from './port.js';
import { fleetOf, registerScrapedGauges } from './scraped-gauges.js';
import { registerProcessMetrics } from './process-metrics.js';
import { type HistogramTally, TalliedCounter, TalliedGauge, TalliedHistogram } from './metric-tallies.js';
import { stateEnteredAt } from '../kinds/gameserver/events.js';
import { type ControllerRequest, controllerRequestOf, isControllerWrite } from './controller-requests.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';

/**
 * Prometheus metrics with Agones's names, labels and types (its metrics guide), from the cluster
 * as it is: gauges are read from the read model when scraped (./scraped-gauges.ts), counters and
 * histograms follow the committed changes, the controllers' writes and the allocations as they
 * happen. The exposition is prom-client's. Where Agones records a label value, fleetsim uses the
 * same words (`type="ready"`, `empty="true"`…).
 */

/** Agones's buckets for the allocation latency and its client's work queues, in seconds. */
const ALLOCATION_BUCKETS = [0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3];
/** Agones's buckets for the tries an allocation took until it succeeded. */
const ALLOCATION_RETRY_BUCKETS = [1, 2, 3, 4, 5];
/** Agones's buckets for the time a GameServer spends in a state, in seconds. */
const STATE_DURATION_BUCKETS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** The API server's request-duration buckets. */
const REQUEST_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** The API server's request labels, in the order a request's label values are given. */
export const REQUEST_LABELS = ['component', 'dry_run', 'group', 'resource', 'scope', 'subresource', 'verb', 'version'] as const;
export type RequestLabels = readonly [string, string, string, string, string, string, string, string];

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

  constructor(private readonly cluster: MetricsCluster) {
    const registers = [this.registry];
    registerScrapedGauges(cluster, registers);
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
    registerProcessMetrics(this.registry);
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
}
