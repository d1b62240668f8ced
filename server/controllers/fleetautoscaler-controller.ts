import {
  type AutoscaledFleet,
  ChainPolicyError,
  type DeletionOrder,
  type PolicyOutcome,
  type RulingPolicy,
  type WebhookAnswer,
  type WebhookNeeded,
  chainEntryChanged,
  computeDesiredReplicas,
  lastAppliedPolicy,
} from '../../machines/autoscaler.js';
import { scaleDownOrder } from '../../machines/scale-down-order.js';
import {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  type FleetAutoscaleRequest,
  type ServiceResolver,
  WebhookClient,
  reviewStatus,
} from '../autoscaler/webhook-client.js';
import type { TimerHandle } from '../clock.js';
import { FLEET_DEFINITION } from '../kinds/fleet/definition.js';
import { FLEETAUTOSCALER_DEFINITION } from '../kinds/fleetautoscaler/definition.js';
import { FLEET_KIND, FLEET_LABEL, type FleetSpec } from '../kinds/fleet/fleet.js';
import {
  FLEETAUTOSCALER_KIND,
  type FleetAutoscalerSpec,
  type FleetAutoscalerStatus,
  syncIntervalMs,
} from '../kinds/fleetautoscaler/fleetautoscaler.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { objectKey, rfc3339 } from '../kinds/meta.js';
import type { Resource } from '../kinds/resource.js';
import { ResourceService } from '../resources/service.js';
import type { FleetAutoscalerControllerPort } from './ports.js';
import type { EventFields } from '../kinds/event/event.js';
import { EventRecorder } from './k8s-events.js';
import { FLEET_DELETION_INDEX, type FleetDeletionIndex } from './fleet-deletion-index.js';
import { KeyedController } from './keyed-controller.js';
import type { Trigger } from './work-queue.js';
import type { AutoscalerCause, Cause } from '../log/cause.js';

function specOf(fas: Resource): FleetAutoscalerSpec {
  return (fas.spec ?? {}) as FleetAutoscalerSpec;
}

function fleetSpecOf(fleet: Resource): FleetSpec {
  return (fleet.spec ?? {}) as FleetSpec;
}

function fleetStatusReplicas(fleet: Resource): number {
  const status = fleet.status as { replicas?: number } | undefined;
  return status?.replicas ?? 0;
}

/**
 * The figures a policy decided from, as an explanation names them (`buffer 3, allocated 2, max
 * 10`): for a chain first the entry that ruled and the ones passed over, for a schedule that it
 * is active, then the ruling policy's own figures.
 */
function decisionInputs(ruling: RulingPolicy, fleet: AutoscaledFleet): Record<string, number | string | boolean> {
  const { policy, webhookAnswer: answer } = ruling;
  const status = fleet.status ?? {};
  const inputs: Record<string, number | string | boolean> = {
    ...(ruling.chainEntry && { chainEntry: ruling.chainEntry.id, chainEntryType: ruling.chainEntry.type }),
    ...(ruling.passedOver.length > 0 && { passedOver: ruling.passedOver.map(({ id, reason }) => `${id}: ${reason}`).join('; ') }),
    ...(ruling.scheduled && { schedule: 'active' }),
    replicas: status.replicas ?? 0,
    ready: status.readyReplicas ?? 0,
    reserved: status.reservedReplicas ?? 0,
    allocated: status.allocatedReplicas ?? 0,
  };
  if (policy.type === 'Buffer' && policy.buffer) {
    const { bufferSize, minReplicas, maxReplicas } = policy.buffer;
    Object.assign(inputs, { bufferSize: String(bufferSize), minReplicas: minReplicas ?? 0, maxReplicas });
  }
  const capacity = policy.type === 'Counter' ? policy.counter : policy.type === 'List' ? policy.list : undefined;
  if (capacity) {
    const aggregated = (policy.type === 'Counter' ? status.counters : status.lists)?.[capacity.key];
    Object.assign(inputs, {
      key: capacity.key,
      bufferSize: String(capacity.bufferSize),
      minCapacity: Number(capacity.minCapacity ?? 0),
      maxCapacity: Number(capacity.maxCapacity),
      ...(aggregated && { count: Number(aggregated.count), capacity: Number(aggregated.capacity), allocatedCount: Number(aggregated.allocatedCount) }),
    });
  }
  if (answer) Object.assign(inputs, { webhookScale: answer.scale, webhookReplicas: answer.replicas });
  return inputs;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Agones compares the status as a Go struct, where a status never written (or a field left out)
 * is its zero value: an autoscaler that has never scaled and cannot find its fleet keeps no status.
 */
function sameStatus(a: unknown, b: FleetAutoscalerStatus): boolean {
  const s = (typeof a === 'object' && a !== null ? a : {}) as Partial<FleetAutoscalerStatus>;
  return (
    (s.currentReplicas ?? 0) === b.currentReplicas &&
    (s.desiredReplicas ?? 0) === b.desiredReplicas &&
    (s.lastScaleTime ?? null) === b.lastScaleTime &&
    (s.ableToScale ?? false) === b.ableToScale &&
    (s.scalingLimited ?? false) === b.scalingLimited &&
    (s.lastAppliedPolicy ?? '') === b.lastAppliedPolicy
  );
}

function previousScaleTime(status: unknown): string | null {
  const value = (status as { lastScaleTime?: unknown } | undefined)?.lastScaleTime;
  return typeof value === 'string' ? value : null;
}

function previousAppliedPolicy(status: unknown): string {
  const value = (status as { lastAppliedPolicy?: unknown } | undefined)?.lastAppliedPolicy;
  return typeof value === 'string' ? value : '';
}

/**
 * A sync that did not scale, its reason already recorded as an Event where users should see it;
 * thrown so that the queue retries with its back-off, as Agones hands the error to its queue.
 */
class SyncFailure extends Error {
  override readonly name = 'SyncFailure';
}

/**
 * One autoscaler's "thread" (Agones keeps one per autoscaler): its timer, its webhook client,
 * and the identity (uid, generation) it was made for. A new generation gets a new thread.
 */
interface Thread {
  key: string;
  uid: string;
  generation: number;
  intervalMs: number;
  timer: TimerHandle | undefined;
  /** One client per Webhook policy, by its place in the spec (a chain may hold several). */
  webhooks: Map<string, WebhookClient>;
  /** Cancels the webhook call in flight when the thread ends. */
  abort: AbortController;
  /** The last failure recorded as an Event, so a lasting failure is recorded once, not every retry. */
  lastFailure: string | undefined;
}

export interface FleetAutoscalerControllerOptions {
  /**
   * Where a webhook `service` reference is reached. fleetsim has no Services: without a resolver
   * the cluster DNS name `<name>.<namespace>.svc` is tried, which resolves only where such a DNS
   * exists. `fleetsim serve` maps every service to 127.0.0.1:<port> (`loopbackServiceResolver`).
   */
  resolveService?: ServiceResolver;
  /** Time limit of one webhook call, on the cluster's clock; default 15 s. */
  webhookTimeoutMs?: number;
}

/**
 * The FleetAutoscaler controller (Agones's pkg/fleetautoscalers, reference §7.4): for each
 * autoscaler, a sync at once and then every `sync.fixedInterval.seconds` on the cluster's clock.
 * A sync reads the fleet from the read model, computes the replicas with the pure formulas of
 * machines/autoscaler (calling a webhook when the policy walk reaches one, then computing again
 * with its answer), scales the fleet through the resource service when the number differs,
 * records Kubernetes Events, and writes the autoscaler's status with the policy that applied. A
 * failure leaves the fleet alone, marks the autoscaler unable to scale, and is recorded as a
 * Warning Event; other autoscalers carry on. An inactive schedule is no failure: nothing is
 * scaled, recorded or written, and the sync is retried as Agones retries it.
 */
export class FleetAutoscalerController extends KeyedController<FleetAutoscalerControllerPort> {
  private readonly service: ResourceService;
  private readonly recorder: EventRecorder;
  private readonly threads = new Map<string, Thread>();
  /** The fleets' GameServers by node, for Counter and List scale-downs (built when one first asks). */
  private fleetMembers: FleetDeletionIndex | undefined;
  private readonly webhookTimeoutMs: number;

  /** `service`: what fleets are scaled through (the Fleet kind's defaults and validation apply). */
  constructor(
    cluster: FleetAutoscalerControllerPort,
    service: ResourceService,
    private readonly options: FleetAutoscalerControllerOptions = {},
  ) {
    // Failures are recorded as Events where they happen; the queue only retries.
    super(cluster, { onError: () => undefined });
    this.service = service;
    this.recorder = new EventRecorder(cluster, 'fleetautoscaler-controller');
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  }

  start(): void {
    this.subscriptions.push(
      this.cluster.changesOf(FLEETAUTOSCALER_KIND).subscribe((change) => this.reconcileThread(objectKey(change.namespace, change.name), change.seq)),
    );
    for (const key of [...(this.store()?.entries() ?? [])].map(([k]) => k)) this.reconcileThread(key);
  }

  override stop(): void {
    super.stop();
    this.fleetMembers = undefined;
    for (const thread of [...this.threads.values()]) this.endThread(thread);
  }

  /** Keys (`namespace/name`) of the autoscalers that have a running sync loop. */
  get autoscalers(): string[] {
    return [...this.threads.keys()];
  }

  private store() {
    return this.cluster.readModel.store(FLEETAUTOSCALER_KIND);
  }

  /** Starts, restarts (new uid or generation) or ends the thread of one autoscaler to match the store. */
  private reconcileThread(key: string, seq?: number): void {
    const fas = this.store()?.getByKey(key);
    const existing = this.threads.get(key);
    if (!fas) {
      if (existing) this.endThread(existing);
      return;
    }
    if (existing && existing.uid === fas.metadata.uid && existing.generation === fas.metadata.generation) return;
    if (existing) this.endThread(existing);
    const thread: Thread = {
      key,
      uid: fas.metadata.uid,
      generation: fas.metadata.generation,
      intervalMs: syncIntervalMs(specOf(fas)),
      timer: undefined,
      webhooks: new Map(),
      abort: new AbortController(),
      lastFailure: undefined,
    };
    this.threads.set(key, thread);
    this.queue.add(key, seq, true);
    this.schedule(thread);
  }

  private schedule(thread: Thread): void {
    thread.timer = this.cluster.clock.setTimeout(() => {
      thread.timer = undefined;
      if (this.threads.get(thread.key) !== thread) return;
      this.queue.add(thread.key);
      this.schedule(thread);
    }, thread.intervalMs);
  }

  private endThread(thread: Thread): void {
    this.cluster.clock.clearTimeout(thread.timer);
    thread.timer = undefined;
    thread.abort.abort();
    if (this.threads.get(thread.key) === thread) this.threads.delete(thread.key);
  }

  /** The autoscaler as stored, if `thread` is still the one running for it. */
  private current(thread: Thread): Resource | undefined {
    const fas = this.store()?.getByKey(thread.key);
    if (!fas || this.threads.get(thread.key) !== thread) return undefined;
    if (fas.metadata.uid !== thread.uid || fas.metadata.generation !== thread.generation) return undefined;
    return fas;
  }

  protected async sync(key: string, trigger: Trigger | undefined): Promise<void> {
    let thread = this.threads.get(key);
    const stored = this.store()?.getByKey(key);
    if (!stored) return;
    if (!thread || thread.uid !== stored.metadata.uid || thread.generation !== stored.metadata.generation) {
      // A new generation not yet seen on changesOf(FleetAutoscaler): restarting queues a sync of its own.
      this.reconcileThread(key);
      thread = this.threads.get(key);
      if (!thread) return;
    }
    const fas = stored;
    const { namespace } = fas.metadata;
    const spec = specOf(fas);
    const fleetName = spec.fleetName ?? '';

    let fleet = this.cluster.readModel.get(FLEET_KIND, namespace, fleetName);
    if (!fleet) return this.fleetMissing(thread, fas, fleetName);
    if (fleet.metadata.deletionTimestamp !== undefined) return;

    const policy = spec.policy ?? {};
    // One time for the whole walk, however long the webhooks take.
    const now = this.cluster.clock.now();
    const webhookAnswers = new Map<string, WebhookAnswer | Error>();
    let outcome: PolicyOutcome;
    try {
      for (;;) {
        const fleetNow = fleet;
        outcome = computeDesiredReplicas(policy, fleetNow as AutoscaledFleet, {
          countsAndLists: this.cluster.gates.CountsAndLists,
          scheduledAutoscaler: this.cluster.gates.ScheduledAutoscaler,
          now,
          gameServersInDeletionOrder: this.deletionOrder(fleetNow),
          webhookAnswers,
        });
        if (outcome.outcome !== 'webhook-needed') break;
        webhookAnswers.set(outcome.place, await this.askWebhook(thread, outcome, fleet));
        // The fleet may have moved while the webhook thought; the autoscaler may be gone.
        if (!this.current(thread)) return;
        fleet = this.cluster.readModel.get(FLEET_KIND, namespace, fleetName);
        if (!fleet) return this.fleetMissing(thread, fas, fleetName);
        if (fleet.metadata.deletionTimestamp !== undefined) return;
      }
    } catch (error) {
      if (thread.abort.signal.aborted) return; // the autoscaler changed or went away mid-call
      const calculating: EventFields = {
        type: 'Warning',
        reason: 'FleetAutoscaler',
        message: `Error calculating desired fleet size on FleetAutoscaler ${fas.metadata.name}. Error: ${messageOf(error)}`,
      };
      // Agones records a failed chain twice: as the chain's own Event, then as any failed calculation.
      const chainFailed: EventFields[] =
        error instanceof ChainPolicyError
          ? [{ type: 'Warning', reason: 'ChainPolicy', message: `FleetAutoscaler '${fas.metadata.name}' failed to apply ChainPolicy | ID: Unknown | Type: ` }]
          : [];
      await this.fail(thread, fas, [...chainFailed, calculating]);
      throw new SyncFailure(messageOf(error));
    }
    if (outcome.outcome === 'inactive-schedule') {
      // Agones's InactiveScheduleError: no Event, no status, the fleet left as it is.
      thread.lastFailure = undefined;
      throw new SyncFailure('inactive schedule, policy not applicable');
    }
    const { ruling } = outcome;
    const applied = lastAppliedPolicy(policy, ruling);

    const from = fleetSpecOf(fleet).replicas ?? 0;
    const to = outcome.replicas;
    const scaled = to !== from;
    const cause: AutoscalerCause = {
      type: 'autoscaler',
      autoscaler: { kind: FLEETAUTOSCALER_KIND, namespace, name: fas.metadata.name },
      fleet: fleetName,
      policy: spec.policy?.type ?? '',
      current: from,
      desired: to,
      inputs: { ...decisionInputs(ruling, fleet as AutoscaledFleet), limited: outcome.limited },
      trigger: trigger
        ? { type: 'event', after: trigger.seq }
        : { type: 'timer', timer: 'autoscaler.sync', inputs: { everySeconds: thread.intervalMs / 1000 } },
    };
    if (ruling.chainEntry && chainEntryChanged(previousAppliedPolicy(fas.status), applied)) {
      const { id, type } = ruling.chainEntry;
      const message = `FleetAutoscaler '${fas.metadata.name}' successfully applied ChainPolicy | ID: ${id} | Type: ${type}`;
      await this.cluster.commit([this.recorder.event(fas, { type: 'Normal', reason: 'ChainPolicy', message })], cause);
    }
    if (scaled) {
      try {
        await this.service.patch(FLEET_DEFINITION, namespace, fleetName, { spec: { replicas: to } }, 'application/merge-patch+json', { cause });
      } catch (error) {
        await this.fail(thread, fas, [
          {
            type: 'Warning',
            reason: 'AutoScalingFleetError',
            message: `Error on scaling fleet ${fleetName} from ${from} to ${to}. Error: ${messageOf(error)}`,
          },
        ]);
        throw new SyncFailure(messageOf(error));
      }
      await this.cluster.commit(
        [this.recorder.event(fas, { type: 'Normal', reason: 'AutoScalingFleet', message: `Scaling fleet ${fleetName} from ${from} to ${to}` })],
        cause,
      );
    }
    thread.lastFailure = undefined;
    await this.writeStatus(
      thread,
      { currentReplicas: fleetStatusReplicas(fleet), desiredReplicas: to, scaled, limited: outcome.limited, fleetName, lastAppliedPolicy: applied },
      cause,
    );
  }

  /** The answer of the webhook the policy walk reached, or why there is none (an Error). */
  private async askWebhook(thread: Thread, needed: WebhookNeeded, fleet: Resource): Promise<WebhookAnswer | Error> {
    let client = thread.webhooks.get(needed.place);
    if (!client) {
      client = new WebhookClient(needed.webhook, {
        clock: this.cluster.clock,
        timeoutMs: this.webhookTimeoutMs,
        ...(this.options.resolveService && { resolveService: this.options.resolveService }),
      });
      thread.webhooks.set(needed.place, client);
    }
    const request: FleetAutoscaleRequest = {
      uid: this.cluster.rng.uid(),
      name: fleet.metadata.name,
      namespace: fleet.metadata.namespace,
      status: reviewStatus(fleet.status),
      ...(this.cluster.gates.FleetAutoscaleRequestMetaData && {
        labels: { ...fleet.metadata.labels },
        annotations: { ...fleet.metadata.annotations },
      }),
    };
    try {
      const response = await client.review(request, thread.abort.signal);
      return { scale: response.scale, replicas: response.replicas };
    } catch (error) {
      // A failed call is that policy's failure: a chain moves on to its next entry.
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  /**
   * Every GameServer of the fleet (any state, any set), in the order its sets delete them
   * (Agones's SortGameServersByStrategy with cluster-wide node counts), worked out only when a
   * Counter or List scale-down asks. Packed goes node by node from an index kept with every
   * change (built the first time); Distributed sorts the fleet.
   */
  private deletionOrder(fleet: Resource): DeletionOrder {
    const { namespace, name } = fleet.metadata;
    const spec = fleetSpecOf(fleet);
    const options = {
      ...(spec.priorities && { priorities: spec.priorities }),
      countsAndLists: this.cluster.gates.CountsAndLists,
    };
    if ((spec.scheduling ?? 'Packed') === 'Packed') return { runs: () => this.deletionIndex().packedRuns(namespace, name, options) };
    return () => {
      const members: GameServer[] = [];
      this.cluster.gameServers.forEach((gs) => {
        if (gs.metadata.namespace === namespace && gs.metadata.labels[FLEET_LABEL] === name) members.push(gs);
      });
      return scaleDownOrder(members, { ...options, scheduling: 'Distributed', nodeCounts: this.cluster.nodes.counts });
    };
  }

  private deletionIndex(): FleetDeletionIndex {
    return (this.fleetMembers ??= this.cluster.use(FLEET_DELETION_INDEX));
  }

  private async fleetMissing(thread: Thread, fas: Resource, fleetName: string): Promise<void> {
    // Agones records it and carries on: the next sync looks again.
    await this.fail(thread, fas, [{ type: 'Warning', reason: 'FailedGetFleet', message: `could not fetch fleet: ${fleetName}` }]);
  }

  /** Records why the sync failed (once while the same failure lasts) and marks the autoscaler unable to scale. */
  private async fail(thread: Thread, fas: Resource, events: EventFields[]): Promise<void> {
    if (!this.current(thread)) return;
    const failure = events.map((fields) => `${fields.reason}|${fields.message}`).join('\n');
    const cause = this.syncCause(FLEETAUTOSCALER_KIND, fas.metadata.namespace, fas.metadata.name, undefined, { failed: events.at(-1)!.message });
    if (thread.lastFailure !== failure) {
      thread.lastFailure = failure;
      await this.cluster.commit(
        events.map((fields) => this.recorder.event(fas, fields)),
        cause,
      );
    }
    const latest = this.current(thread);
    if (!latest) return;
    const status: FleetAutoscalerStatus = {
      currentReplicas: 0,
      desiredReplicas: 0,
      lastScaleTime: previousScaleTime(latest.status),
      ableToScale: false,
      scalingLimited: false,
      lastAppliedPolicy: '',
    };
    if (sameStatus(latest.status, status)) return;
    await this.service.updateStatus(FLEETAUTOSCALER_DEFINITION, latest.metadata.namespace, latest.metadata.name, status, cause);
  }

  /** Agones's updateStatus: written only when it changes, naming the policy that applied; a limited result is also a Warning Event. */
  private async writeStatus(
    thread: Thread,
    result: { currentReplicas: number; desiredReplicas: number; scaled: boolean; limited: boolean; fleetName: string; lastAppliedPolicy: string },
    cause: Cause,
  ): Promise<void> {
    const latest = this.current(thread);
    if (!latest) return;
    const status: FleetAutoscalerStatus = {
      currentReplicas: result.currentReplicas,
      desiredReplicas: result.desiredReplicas,
      lastScaleTime: result.scaled ? rfc3339(this.cluster.clock.now()) : previousScaleTime(latest.status),
      ableToScale: true,
      scalingLimited: result.limited,
      lastAppliedPolicy: result.lastAppliedPolicy,
    };
    if (sameStatus(latest.status, status)) return;
    const { namespace, name } = latest.metadata;
    await this.service.updateStatus(FLEETAUTOSCALER_DEFINITION, namespace, name, status, cause);
    if (result.limited) {
      const bound = result.currentReplicas > result.desiredReplicas ? 'maximum' : 'minimum';
      await this.cluster.commit(
        [
          this.recorder.event(latest, {
            type: 'Warning',
            reason: 'ScalingLimited',
            message: `Scaling fleet ${result.fleetName} was limited to ${bound} size of ${result.desiredReplicas}`,
          }),
        ],
        cause,
      );
    }
  }
}
