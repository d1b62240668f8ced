/**
 * The FleetAutoscaler's formulas (Agones's pkg/fleetautoscalers, reference §7.5–§7.7): from a
 * fleet as the read model shows it and a policy, the replicas the fleet should have and whether
 * a limit capped them; for Schedule and Chain policies, which policy applies at a given time.
 * Pure: no clock (the time is passed in), no I/O (a webhook's answer is passed in); the
 * controller reads, calls these, and commits.
 */

import type { Int64 } from '../server/int64.js';
import type {
  AutoscalerPolicy,
  BufferPolicy,
  BufferSize,
  CapacityPolicy,
  ChainEntry,
  SchedulePolicy,
  WebhookConfiguration,
} from '../server/kinds/fleetautoscaler/fleetautoscaler.js';
import { type Parsed, nextCronTime, parseCron, parseGoDuration, parseRfc3339, timezoneError } from '../server/kinds/fleetautoscaler/schedule.js';

export type CapacityKind = 'Counter' | 'List';

/** What the webhook answered (`FleetAutoscaleResponse`, uid already checked). */
export interface WebhookAnswer {
  scale: boolean;
  replicas: number;
}

/** A Fleet's aggregated counter or list (`status.counters[key]`, `status.lists[key]`). */
export interface AggregatedCapacity {
  count: Int64;
  capacity: Int64;
  allocatedCount: Int64;
  allocatedCapacity?: Int64;
}

/** The parts of a Fleet the formulas read (a Fleet from the read model fits). */
export interface AutoscaledFleet {
  spec?: {
    replicas?: number;
    template?: {
      spec?: {
        counters?: Readonly<Record<string, { count?: Int64; capacity?: Int64 }>>;
        lists?: Readonly<Record<string, { capacity?: number; values?: readonly string[] }>>;
      };
    };
  };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    reservedReplicas?: number;
    allocatedReplicas?: number;
    counters?: Readonly<Record<string, AggregatedCapacity>>;
    lists?: Readonly<Record<string, AggregatedCapacity>>;
  };
}

/** The parts of a GameServer a Counter/List scale-down reads (a GameServer fits). */
export interface GameServerCapacity {
  status: {
    counters?: Readonly<Record<string, { count: Int64; capacity: Int64 }>>;
    lists?: Readonly<Record<string, { capacity: number; values: readonly string[] }>>;
  };
}

/** A key's count and capacity summed over a run's servers that have the key. */
export interface CapacityTotals {
  count: number;
  capacity: number;
  /** Every server with the key has 0 <= count <= capacity: removing any of them lowers no total below another's. */
  bounded: boolean;
}

/**
 * A stretch of the deletion order (a node's servers, under Packed) whose servers are put in
 * order among themselves only when a walk has to stop inside it.
 */
export interface DeletionRun {
  readonly size: number;
  totals(kind: CapacityKind, key: string): CapacityTotals;
  ordered(): Iterable<GameServerCapacity>;
}

/**
 * The fleet's GameServers in the order its sets would delete them (all states, all sets). A
 * function is called only when a scale-down needs the order, which spares the sort otherwise;
 * `runs` gives the order run by run, with each run's totals, so a walk can pass a run whole.
 */
export type DeletionOrder = Iterable<GameServerCapacity> | (() => Iterable<GameServerCapacity>) | { runs: () => Iterable<DeletionRun> };

export interface ScaleDecision {
  replicas: number;
  /** The policy's limits capped the result (status `scalingLimited`). */
  limited: boolean;
}

/** A policy could not be applied; the message is Agones's where Agones has one. */
export class AutoscalerError extends Error {
  override readonly name = 'AutoscalerError';
}

type ParsedBuffer = { kind: 'int'; value: number } | { kind: 'percent'; value: number };

/** Reads an int-or-string buffer size the way Agones's intstr helpers do (integer percentages only). */
export function parseBufferSize(raw: BufferSize): ParsedBuffer {
  if (typeof raw === 'bigint') return { kind: 'int', value: Number(raw) };
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) throw new AutoscalerError(`invalid value for IntOrString: ${raw} is not an integer`);
    return { kind: 'int', value: raw };
  }
  const match = /^([+-]?\d+)%$/.exec(raw);
  if (!match) {
    const reason = raw.endsWith('%') ? `invalid value "${raw}"` : 'invalid type: string is not a percentage';
    throw new AutoscalerError(`invalid value for IntOrString: ${reason}`);
  }
  const value = Number(match[1]);
  // 100% would divide by zero below; validation keeps percentages within 1..99.
  if (value < 1 || value > 99) throw new AutoscalerError('bufferSize should be between 1% and 99%');
  return { kind: 'percent', value };
}

/**
 * The total a `p%` buffer needs so that `used` is `(100 − p)%` of it, rounded up: with 8
 * allocated and 30%, allocated must be 70% of the fleet, so the fleet is ceil(800 / 70) = 12.
 */
function totalForPercentBuffer(used: number, percent: number): number {
  return Math.ceil((used * 100) / (100 - percent));
}

/**
 * Buffer policy (§7.5): allocated replicas plus the buffer (a number, or a percentage of the
 * total, rounded up), then clamped to [minReplicas, maxReplicas]. Ready and Reserved servers
 * do not count as used.
 */
export function bufferPolicy(fleet: AutoscaledFleet, policy: BufferPolicy): ScaleDecision {
  const allocated = fleet.status?.allocatedReplicas ?? 0;
  const size = parseBufferSize(policy.bufferSize);
  let replicas = size.kind === 'int' ? allocated + size.value : totalForPercentBuffer(allocated, size.value);
  let limited = false;
  const min = policy.minReplicas ?? 0;
  if (replicas < min) {
    replicas = min;
    limited = true;
  }
  if (replicas > policy.maxReplicas) {
    replicas = policy.maxReplicas;
    limited = true;
  }
  return { replicas, limited };
}

/**
 * Webhook policy (§7.7): `scale: true` takes the answer's replicas as they are (no clamp, 0
 * allowed); `scale: false` keeps the fleet's current total (`status.replicas`, not the spec).
 */
export function webhookPolicy(fleet: AutoscaledFleet, answer: WebhookAnswer): ScaleDecision {
  return { replicas: answer.scale ? answer.replicas : (fleet.status?.replicas ?? 0), limited: false };
}

/** Go's integer division truncates toward zero. */
function goDiv(a: number, b: number): number {
  return Math.trunc(a / b);
}

/** One GameServer's count and capacity under the key, or undefined when it lacks the key. */
function gameServerValues(gs: GameServerCapacity, kind: CapacityKind, key: string): { count: number; capacity: number } | undefined {
  if (kind === 'Counter') {
    const counter = gs.status.counters?.[key];
    return counter ? { count: Number(counter.count), capacity: Number(counter.capacity) } : undefined;
  }
  const list = gs.status.lists?.[key];
  return list ? { count: list.values.length, capacity: list.capacity } : undefined;
}

/** An order given server by server, as one run that must be walked. */
function oneRun(servers: Iterable<GameServerCapacity>): DeletionRun {
  return { size: Number.NaN, totals: () => ({ count: 0, capacity: 0, bounded: false }), ordered: () => servers };
}

function resolveRuns(order: DeletionOrder | undefined): Iterable<DeletionRun> {
  if (order === undefined) return [];
  if (typeof order === 'function') return [oneRun(order())];
  if ('runs' in order) return order.runs();
  return [oneRun(order)];
}

function* resolveOrder(order: DeletionOrder | undefined): Iterable<GameServerCapacity> {
  for (const run of resolveRuns(order)) yield* run.ordered();
}

interface CapacityState {
  kind: CapacityKind;
  key: string;
  replicas: number;
  /** Per-replica count and capacity, from the fleet's template. */
  count: number;
  capacity: number;
  aggCount: number;
  aggCapacity: number;
  minCapacity: number;
  maxCapacity: number;
  buffer: number;
  order: DeletionOrder | undefined;
}

/** Below the minimum: add template-sized replicas until the aggregate capacity reaches it. */
function scaleUpLimited(s: CapacityState): ScaleDecision {
  // Agones tests for exactly 0; a negative capacity (impossible by schema) would never terminate.
  if (s.capacity <= 0) throw new AutoscalerError('cannot scale up as Capacity is equal to 0');
  let { replicas, aggCapacity } = s;
  while (aggCapacity < s.minCapacity) {
    aggCapacity += s.capacity;
    replicas++;
  }
  return { replicas, limited: true };
}

/** Above the maximum: remove servers in deletion order until the aggregate capacity fits. */
function scaleDownLimited(s: CapacityState): ScaleDecision {
  let { replicas, aggCapacity } = s;
  for (const gs of resolveOrder(s.order)) {
    if (aggCapacity <= s.maxCapacity) break;
    const values = gameServerValues(gs, s.kind, s.key);
    if (values) aggCapacity -= values.capacity;
    replicas--;
  }
  return { replicas: Math.max(1, replicas), limited: true };
}

function scaleUp(s: CapacityState, available: number): ScaleDecision {
  const perReplica = s.capacity - s.count;
  if (perReplica <= 0) {
    throw new AutoscalerError('cannot scale up as adding additional replicas does not increase available Capacity');
  }
  let add = Math.ceil((s.buffer - available) / perReplica);
  const after = s.aggCapacity + add * s.capacity;
  const limited = after < s.minCapacity || after > s.maxCapacity;
  if (limited) add = goDiv(s.maxCapacity - s.aggCapacity, s.capacity);
  return { replicas: s.replicas + add, limited };
}

/**
 * Walks the deletion order removing one server at a time, and stops at the last count that
 * still keeps the buffer (and the minimum capacity).
 */
function scaleDown(s: CapacityState): ScaleDecision {
  if (s.aggCapacity === s.minCapacity) return { replicas: s.replicas, limited: true };
  let { replicas, aggCount, aggCapacity } = s;
  for (const run of resolveRuns(s.order)) {
    // Available capacity and capacity only fall as bounded servers go: a run that leaves both
    // above their limits stops nowhere inside it, so it is passed whole, unsorted.
    const totals = run.totals(s.kind, s.key);
    const capacityAfter = aggCapacity - totals.capacity;
    if (totals.bounded && capacityAfter - (aggCount - totals.count) > s.buffer && capacityAfter > s.minCapacity) {
      replicas -= run.size;
      aggCount -= totals.count;
      aggCapacity = capacityAfter;
      continue;
    }
    for (const gs of run.ordered()) {
      replicas--;
      const values = gameServerValues(gs, s.kind, s.key);
      if (!values) continue; // counted as removed, no capacity change
      aggCount -= values.count;
      aggCapacity -= values.capacity;
      const available = aggCapacity - aggCount;
      if (available < s.buffer) return { replicas: replicas + 1, limited: false };
      if (aggCapacity < s.minCapacity) return { replicas: replicas + 1, limited: true };
      if (available === s.buffer) return { replicas, limited: false };
      if (aggCapacity === s.minCapacity) return { replicas, limited: true };
    }
  }
  // Counter and List policies never scale a fleet to zero.
  return { replicas: Math.max(1, replicas), limited: false };
}

/**
 * Counter and List policies (§7.6): keeps `bufferSize` of the key's capacity available across
 * the fleet (a number, or a percentage of the total over what allocated servers use), adding
 * template-sized replicas or removing servers in deletion order, within [minCapacity,
 * maxCapacity] of aggregate capacity. Never below one replica.
 */
export function counterOrListPolicy(
  fleet: AutoscaledFleet,
  policy: CapacityPolicy,
  kind: CapacityKind,
  gameServersInDeletionOrder?: DeletionOrder,
): ScaleDecision {
  const key = policy.key;
  const templateSpec = fleet.spec?.template?.spec;
  let count: number;
  let capacity: number;
  if (kind === 'Counter') {
    const counter = templateSpec?.counters?.[key];
    if (!counter) throw new AutoscalerError(`cannot apply CounterPolicy as Counter key ${key} does not exist in the Fleet Spec`);
    count = Number(counter.count ?? 0);
    capacity = Number(counter.capacity ?? 0);
  } else {
    const list = templateSpec?.lists?.[key];
    if (!list) throw new AutoscalerError(`cannot apply ListPolicy as List key ${key} does not exist in the Fleet Spec`);
    count = list.values?.length ?? 0;
    capacity = list.capacity ?? 0;
  }
  const aggregate = kind === 'Counter' ? fleet.status?.counters?.[key] : fleet.status?.lists?.[key];
  if (!aggregate) throw new AutoscalerError(`cannot apply ${kind}Policy as ${kind} key ${key} does not exist in the Fleet Status`);

  // The formulas work in doubles: exact up to 2^53, and their result (replicas) is an int32.
  const minCapacity = Number(policy.minCapacity ?? 0);
  const maxCapacity = Number(policy.maxCapacity);
  const replicas = fleet.status?.replicas ?? 0;
  const [aggCount, aggCapacity, aggAllocatedCount] = [Number(aggregate.count), Number(aggregate.capacity), Number(aggregate.allocatedCount)];

  // Whether the fleet's capacity is outside the limits already, and which way it must move.
  const direction = aggCapacity < minCapacity ? 1 : aggCapacity > maxCapacity ? -1 : 0;
  const limited = direction !== 0;

  const size = parseBufferSize(policy.bufferSize);
  let buffer: number;
  if (size.kind === 'int') {
    buffer = size.value;
  } else {
    // Nothing allocated gives a desired capacity of 0: one replica is enough when it meets the minimum.
    if (aggAllocatedCount <= 0 && capacity >= minCapacity) return { replicas: 1, limited: true };
    buffer = totalForPercentBuffer(aggAllocatedCount, size.value) - aggAllocatedCount;
  }

  const state: CapacityState = {
    kind,
    key,
    replicas,
    count,
    capacity,
    aggCount,
    aggCapacity,
    minCapacity,
    maxCapacity,
    buffer,
    order: gameServersInDeletionOrder,
  };
  const limitedByDirection = (): ScaleDecision =>
    direction === 1 ? scaleUpLimited(state) : direction === -1 ? scaleDownLimited(state) : { replicas, limited: false };

  const available = aggCapacity - aggCount;
  if (available === buffer) return limited ? limitedByDirection() : { replicas, limited: false };
  if (available < buffer) return limited ? limitedByDirection() : scaleUp(state, available);
  return limited && direction === 1 ? scaleUpLimited(state) : scaleDown(state);
}

/** Agones's "2540400h" (about 290 years): the period of a schedule whose duration is empty. */
const UNENDING_PERIOD_MS = 2_540_400 * 3_600_000;
/** A period counts as started 90 s before its cron time, so a clock change cannot skip it (Agones). */
const EARLY_START_MS = 90_000;

function scheduleSetting<T>(parsed: Parsed<T>, field: string): T {
  // Validation rejects these; a stored object that slipped past still gets a clear error.
  if ('error' in parsed) throw new AutoscalerError(`invalid ${field}: ${parsed.error}`);
  return parsed.value;
}

/**
 * Agones's isScheduleActive: never before `between.start` or after `between.end`; within them,
 * always when there is no `startCron`; otherwise within the period that began at the cron's
 * latest start (on the clocks of `timezone`) and lasts `duration`. That start is found as the
 * cron's next start after `now − duration`, and the period counts from 90 s before it.
 */
export function isScheduleActive(schedule: SchedulePolicy, nowMs: number): boolean {
  const start = schedule.between?.start ? parseRfc3339(schedule.between.start) : undefined;
  if (start !== undefined && nowMs < start) return false;
  const end = schedule.between?.end ? parseRfc3339(schedule.between.end) : undefined;
  if (end !== undefined && nowMs > end) return false;

  const period = schedule.activePeriod ?? {};
  if (!period.startCron) return true;
  const timezone = period.timezone ?? '';
  const zoneError = timezoneError(timezone);
  if (zoneError) throw new AutoscalerError(`invalid timezone: ${zoneError}`);
  const cron = scheduleSetting(parseCron(period.startCron), 'startCron');
  const durationMs = period.duration ? scheduleSetting(parseGoDuration(period.duration), 'duration') : UNENDING_PERIOD_MS;

  const periodStart = nextCronTime(cron, nowMs - durationMs, timezone);
  const periodEnd = periodStart + durationMs;
  return nowMs > periodStart - EARLY_START_MS && nowMs < periodEnd;
}

export const SUPPORTED_POLICY_TYPES = ['Buffer', 'Webhook', 'Counter', 'List', 'Schedule', 'Chain'] as const;

export interface ComputeOptions {
  /** The CountsAndLists feature gate. */
  countsAndLists: boolean;
  /** The ScheduledAutoscaler feature gate (Schedule and Chain policies). */
  scheduledAutoscaler: boolean;
  /** When schedules are judged (ms since the epoch, the cluster clock's). */
  now: number;
  gameServersInDeletionOrder?: DeletionOrder;
  /**
   * What the webhooks reached so far answered, by the place of their policy (see
   * `WebhookNeeded`); an Error where the call failed.
   */
  webhookAnswers?: ReadonlyMap<string, WebhookAnswer | Error>;
}

/** Which policy decided: what the status and the explanation name. */
export interface RulingPolicy {
  /** The policy whose formula gave the replicas: Buffer, Webhook, Counter or List. */
  policy: AutoscalerPolicy;
  /** The webhook's answer, when that policy is a Webhook. */
  webhookAnswer?: WebhookAnswer;
  /** That policy is a Schedule's, and the schedule is active. */
  scheduled: boolean;
  /** For a Chain policy: the entry that applied. */
  chainEntry?: { id: string; type: string };
  /** For a Chain policy: the entries tried before it, and why each did not apply. */
  passedOver: Array<{ id: string; reason: string }>;
}

/** The policy applies: scale to `replicas`. */
export interface PolicyApplied extends ScaleDecision {
  outcome: 'applied';
  ruling: RulingPolicy;
}

/** Agones's InactiveScheduleError: nothing applies now, which is not a failure; `replicas` is the fleet's current total. */
export interface ScheduleInactive {
  outcome: 'inactive-schedule';
  replicas: number;
}

/**
 * The computation reached a Webhook policy whose answer it does not have: the caller asks the
 * webhook, adds the answer (or the error) under `place` and computes again. A webhook is thus
 * called only when the policy walk actually reaches it.
 */
export interface WebhookNeeded {
  outcome: 'webhook-needed';
  /** Where the policy sits in the spec (`spec.policy.chain[1]`); a key for its answer and its client. */
  place: string;
  webhook: WebhookConfiguration;
}

export type PolicyOutcome = PolicyApplied | ScheduleInactive | WebhookNeeded;

/** No entry of a chain applied, the last one failing; Agones records it as a ChainPolicy Warning too. */
export class ChainPolicyError extends AutoscalerError {}

function applied(decision: ScaleDecision, policy: AutoscalerPolicy, webhookAnswer?: WebhookAnswer): PolicyApplied {
  return { outcome: 'applied', ...decision, ruling: { policy, ...(webhookAnswer && { webhookAnswer }), scheduled: false, passedOver: [] } };
}

function requireScheduledAutoscaler(policyName: string, options: ComputeOptions): void {
  if (!options.scheduledAutoscaler) throw new AutoscalerError(`cannot apply ${policyName} unless feature flag ScheduledAutoscaler is enabled`);
}

function applySchedule(schedule: SchedulePolicy | undefined, fleet: AutoscaledFleet, options: ComputeOptions, place: string): PolicyOutcome {
  requireScheduledAutoscaler('SchedulePolicy', options);
  if (!schedule) throw new AutoscalerError('schedule policy config params are missing');
  if (!isScheduleActive(schedule, options.now)) return { outcome: 'inactive-schedule', replicas: fleet.status?.replicas ?? 0 };
  const outcome = applyPolicy(schedule.policy ?? {}, fleet, options, `${place}.policy`);
  return outcome.outcome === 'applied' ? { ...outcome, ruling: { ...outcome.ruling, scheduled: true } } : outcome;
}

/**
 * Agones's applyChainPolicy: the entries in order, the first that applies rules. An entry whose
 * schedule is inactive or that fails hands over to the next; when none applies, the last entry
 * says what happened (inactive, or its error).
 */
function applyChain(chain: readonly ChainEntry[] | undefined, fleet: AutoscaledFleet, options: ComputeOptions, place: string): PolicyOutcome {
  requireScheduledAutoscaler('ChainPolicy', options);
  if (!chain || chain.length === 0) throw new AutoscalerError('chain policy config params are missing');
  const passedOver: RulingPolicy['passedOver'] = [];
  let lastError: unknown;
  for (const [index, entry] of chain.entries()) {
    const id = entry.id ?? '';
    let outcome: PolicyOutcome;
    try {
      outcome = applyPolicy(entry, fleet, options, `${place}[${index}]`);
    } catch (error) {
      lastError = error;
      passedOver.push({ id, reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    if (outcome.outcome === 'webhook-needed') return outcome;
    if (outcome.outcome === 'inactive-schedule') {
      lastError = undefined;
      passedOver.push({ id, reason: 'inactive schedule' });
      continue;
    }
    return { ...outcome, ruling: { ...outcome.ruling, chainEntry: { id, type: entry.type ?? '' }, passedOver } };
  }
  if (lastError === undefined) return { outcome: 'inactive-schedule', replicas: fleet.status?.replicas ?? 0 };
  throw new ChainPolicyError(lastError instanceof Error ? lastError.message : String(lastError));
}

/** One policy at `place` in the spec: dispatches on `type` and checks the matching settings are there. */
function applyPolicy(policy: AutoscalerPolicy, fleet: AutoscaledFleet, options: ComputeOptions, place: string): PolicyOutcome {
  switch (policy.type) {
    case 'Buffer':
      if (!policy.buffer) throw new AutoscalerError('buffer policy config params are missing');
      return applied(bufferPolicy(fleet, policy.buffer), policy);
    case 'Counter':
    case 'List': {
      if (!options.countsAndLists) throw new AutoscalerError('cannot apply CounterPolicy unless feature flag CountsAndLists is enabled');
      const settings = policy.type === 'Counter' ? policy.counter : policy.list;
      if (!settings) throw new AutoscalerError(`${policy.type.toLowerCase()} policy config params are missing`);
      return applied(counterOrListPolicy(fleet, settings, policy.type, options.gameServersInDeletionOrder), policy);
    }
    case 'Webhook': {
      if (!policy.webhook) throw new AutoscalerError('webhook policy config params are missing');
      const answer = options.webhookAnswers?.get(place);
      if (answer === undefined) return { outcome: 'webhook-needed', place, webhook: policy.webhook };
      if (answer instanceof Error) throw answer;
      return applied(webhookPolicy(fleet, answer), policy, answer);
    }
    case 'Schedule':
      return applySchedule(policy.schedule, fleet, options, `${place}.schedule`);
    case 'Chain':
      return applyChain(policy.chain, fleet, options, `${place}.chain`);
    case 'Wasm':
      throw new AutoscalerError(`policy type Wasm is not supported by fleetsim; use one of: ${SUPPORTED_POLICY_TYPES.join(', ')}`);
    default:
      throw new AutoscalerError(`wrong policy type, should be one of: ${SUPPORTED_POLICY_TYPES.join(', ')}`);
  }
}

/**
 * Agones's computeDesiredFleetSize: the replicas a FleetAutoscaler's policy wants for the fleet
 * now, or that an inactive schedule leaves it be, or which webhook must be asked first. Throws an
 * AutoscalerError when the policy cannot be applied.
 */
export function computeDesiredReplicas(policy: AutoscalerPolicy, fleet: AutoscaledFleet, options: ComputeOptions): PolicyOutcome {
  return applyPolicy(policy, fleet, options, 'spec.policy');
}

/** What `status.lastAppliedPolicy` says of an applied policy: its type, or for a chain `Chain:<id>:<type>`. */
export function lastAppliedPolicy(policy: AutoscalerPolicy, ruling: RulingPolicy): string {
  return ruling.chainEntry ? `Chain:${ruling.chainEntry.id}:${ruling.chainEntry.type}` : (policy.type ?? '');
}

/**
 * Whether a chain's ruling entry differs from the one `status.lastAppliedPolicy` names, as Agones
 * compares them (by the id and type fields of `Chain:<id>:<type>`): Agones records a ChainPolicy
 * Event only then.
 */
export function chainEntryChanged(previous: string, current: string): boolean {
  if (!previous.includes('Chain')) return true;
  const before = previous.split(':');
  const now = current.split(':');
  return before.length > 2 && (before[1] !== now[1] || before[2] !== now[2]);
}
