import type { Observable, Subscription } from 'rxjs';
import type { AllocationOutcome } from '../allocation/allocation-service.js';
import { EVENT_KIND, type KubernetesEvent } from '../kinds/event/event.js';
import { FLEET_LABEL } from '../kinds/fleet/fleet.js';
import type { GameServerStateChanged } from '../kinds/gameserver/events.js';
import type { GameServerStatusPort } from '../kinds/gameserver-types.js';
import { type GameServerSelector, toSelectors } from '../kinds/gameserverallocation/gameserverallocation.js';
import { formatLabelSelector } from '../kinds/label-selector.js';
import type { StoredEvent } from '../log/event-log.js';
import type { LogLevel, LogLine, LogValue, Logger } from '../log/logger.js';
import type { GameServerChange } from '../runtime/store.js';

/**
 * The server's log of what the cluster does, as it happens: one line per meaningful change, read
 * from the committed change feeds rather than told by each controller. GameServers reaching
 * Ready, Allocated, Reserved or Shutdown (info; Unhealthy and Error warn; the steps before Ready
 * debug), allocations with the GameServer's address and the selector that found it (or why none
 * did), and the Kubernetes Events the controllers record: a process started or backing off, an
 * autoscaler's decision with the figures it decided from, a failed webhook (Warning Events warn).
 */

/** What the activity log follows (a Cluster satisfies it). */
export interface ActivitySource {
  readonly gameServerChanges$: Observable<GameServerChange>;
  readonly resourceApplied$: Observable<StoredEvent>;
  /** Resolves once everything applied so far is durable. */
  settled(): Promise<void>;
}

/** States worth a line at info: a GameServer can take players, has them, or is done. */
const INFO_STATES = new Set(['Ready', 'Allocated', 'Reserved', 'Shutdown']);
const FAILED_STATES = new Set(['Unhealthy', 'Error']);
/** A GameServer deleted from these states was expected to go: its deletion is a detail. */
const ENDED_STATES = new Set(['Shutdown', 'Unhealthy', 'Error']);
/** Normal Events that restate a change logged already (a set deleting a GameServer it had shut down). */
const RESTATING_REASONS = new Set(['SuccessfulDelete']);

export class ActivityLog {
  private readonly subscriptions: Subscription[] = [];
  /** Kubernetes Events applied and not yet durable: told once they are. */
  private recorded: StoredEvent[] = [];

  constructor(
    private readonly source: ActivitySource,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.subscriptions.push(
      this.source.gameServerChanges$.subscribe((change) => this.gameServerChanged(change)),
      this.source.resourceApplied$.subscribe((event) => this.applied(event)),
    );
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
  }

  /** An allocation's outcome (the allocation service's observer): made into a line after this turn. */
  allocation(outcome: AllocationOutcome): void {
    this.log.later('info', describeAllocation, outcome);
  }

  private gameServerChanged(change: GameServerChange): void {
    const level = stateChangeLevel(change);
    if (level !== undefined) this.log.later(level, describeGameServerChange, change);
  }

  private applied(event: StoredEvent): void {
    if (event.kind !== EVENT_KIND || event.type !== 'ResourceCreated') return;
    if (!this.log.enabled(eventLevel(event))) return;
    // A line never tells what a crash could take back: it waits for the commit.
    if (this.recorded.push(event) > 1) return;
    void this.source.settled().then(() => {
      const recorded = this.recorded;
      this.recorded = [];
      for (const stored of recorded) this.log.later(eventLevel(stored), describeKubernetesEvent, stored);
    });
  }
}

function stateChangeLevel({ previous, object, event }: GameServerChange): LogLevel | undefined {
  if (!object) return previous && ENDED_STATES.has(previous.status.state) ? 'debug' : 'info';
  if (!previous) return 'debug';
  const state = object.status.state;
  if (previous.status.state === state) return undefined;
  if (FAILED_STATES.has(state)) return 'warn';
  // An allocation has a line of its own, with the request's selector.
  if (event.type === 'GameServerAllocated') return 'debug';
  return INFO_STATES.has(state) ? 'info' : 'debug';
}

function describeGameServerChange({ previous, object, event }: GameServerChange): LogLine {
  const gs = (object ?? previous)!;
  const name = `GameServer ${gs.metadata.namespace}/${gs.metadata.name}`;
  const fleet = gs.metadata.labels[FLEET_LABEL];
  if (!object) return { msg: `${name} deleted`, fields: { fleet, state: gs.status.state } };
  if (!previous) return { msg: `${name} created`, fields: { fleet, state: gs.status.state } };
  const { state, nodeName, address, ports } = gs.status;
  const fields: Fields = { fleet, node: nodeName || undefined };
  if (INFO_STATES.has(state) && state !== 'Shutdown') addEndpoint(fields, address, ports);
  if (event.type === 'GameServerStateChanged') fields.message = (event.payload as GameServerStateChanged).message || undefined;
  // ASCII: one character outside it makes every line of the batch a two-byte string, twice the bytes to build and encode.
  return { msg: `${name}: ${previous.status.state} -> ${state}`, fields };
}

type Fields = Record<string, LogValue | undefined>;

/** `address=host:port` of the first port, and `ports=name:port,…` when there are more. */
function addEndpoint(fields: Fields, address: string | undefined, ports: readonly GameServerStatusPort[] | undefined): void {
  const first = ports?.[0];
  if (address) fields.address = first ? `${address}:${first.port}` : address;
  if (ports && ports.length > 1) fields.ports = ports.map((p) => `${p.name}:${p.port}`).join(',');
}

function selectorText(selector: GameServerSelector): string {
  const labels = formatLabelSelector(selector);
  return selector.gameServerState === 'Allocated' ? `${labels} (Allocated)` : labels;
}

function describeAllocation(outcome: AllocationOutcome): LogLine {
  const { request, answer, status } = outcome;
  const namespace = request.metadata?.namespace ?? 'default';
  if (status === 'Allocated' && answer) {
    const selector = outcome.selector === undefined ? undefined : toSelectors(request)[outcome.selector];
    const fields: Fields = { fleet: outcome.gameServer?.metadata.labels[FLEET_LABEL] };
    addEndpoint(fields, answer.address, answer.ports);
    fields.node = answer.nodeName || undefined;
    fields.selector = selector && selectorText(selector);
    if (answer.source && answer.source !== 'local') fields.cluster = answer.source;
    return { msg: `Allocated GameServer ${namespace}/${answer.gameServerName}`, fields };
  }
  const selectors = toSelectors(request).map(selectorText).join(' | ');
  const why =
    status === 'UnAllocated'
      ? 'no GameServer in the state asked for matches a selector'
      : status === 'Contention'
        ? 'the GameServers it picked were taken by other allocations meanwhile (contention)'
        : `it failed: ${outcome.error ?? status}`;
  return { msg: `Allocation in ${namespace} found no GameServer: ${why}`, fields: { selectors, result: status } };
}

function kubernetesEventOf(stored: StoredEvent): KubernetesEvent {
  return (stored.payload as { object: KubernetesEvent }).object;
}

function eventLevel(stored: StoredEvent): LogLevel {
  const event = kubernetesEventOf(stored);
  if (event.type === 'Warning') return 'warn';
  return RESTATING_REASONS.has(event.reason) ? 'debug' : 'info';
}

/** A recorded Kubernetes Event; one an autoscaler recorded carries the figures it decided from. */
function describeKubernetesEvent(stored: StoredEvent): LogLine {
  const { involvedObject: about, reason, message } = kubernetesEventOf(stored);
  const cause = stored.cause;
  const figures =
    cause?.type === 'autoscaler' ? { fleet: cause.fleet, policy: cause.policy, current: cause.current, desired: cause.desired, ...cause.inputs } : undefined;
  return { msg: `${about.kind} ${about.namespace ? `${about.namespace}/` : ''}${about.name}: ${message}`, fields: { reason, ...figures } };
}
