import type { Observable } from 'rxjs';
import type { Clock, SeededRandom, TimerHandle } from '../clock.js';
import type { NewEvent, StoredEvent } from '../log/event-log.js';
import { type ObjectMeta, rfc3339 } from '../kinds/meta.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { EVENTS_EXPIRED, type ReadModel } from '../runtime/read-model.js';

/**
 * Kubernetes Events (core/v1 `Event`) as Agones's controllers record them: stored as objects of
 * kind Event, created with the generic ResourceCreated event, so `kubectl get events` and
 * `kubectl describe` show them. Every controller records through this module.
 */

export const EVENT_KIND = 'Event';

export type EventType = 'Normal' | 'Warning';

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export interface KubernetesEvent extends Resource {
  apiVersion: 'v1';
  kind: 'Event';
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: EventType;
  source: { component: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

export interface EventFields {
  type: EventType;
  reason: string;
  message: string;
}

export function involvedObjectOf(object: { apiVersion: string; kind: string; metadata: ObjectMeta }): InvolvedObject {
  const { namespace, name, uid } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, namespace, name, uid };
}

/** Builds the Event object (pure): `name` and `uid` are given by the caller. */
export function buildKubernetesEvent(
  involved: InvolvedObject,
  fields: EventFields,
  component: string,
  identity: { name: string; uid: string; now: number },
): KubernetesEvent {
  const time = rfc3339(identity.now);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: identity.name,
      namespace: involved.namespace,
      uid: identity.uid,
      resourceVersion: '0',
      generation: 1,
      creationTimestamp: time,
      labels: {},
      annotations: {},
    },
    involvedObject: { ...involved },
    reason: fields.reason,
    message: fields.message,
    type: fields.type,
    source: { component },
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

/** What a recorder needs from the cluster (a Cluster satisfies it). */
export interface EventRecorderHost {
  clock: Clock;
  rng: SeededRandom;
  readModel: ReadModel;
}

/**
 * Builds Event creations for one component. Names follow Kubernetes's `<involved>.<hex time>`
 * (nanoseconds of the clock, plus a counter so events of the same instant differ) and are
 * checked against the stored Events. Events are returned, not committed: a controller commits
 * them with the change they describe, in the same turn.
 */
export class EventRecorder {
  private sequence = 0;

  constructor(
    private readonly host: EventRecorderHost,
    readonly component: string,
  ) {}

  event(object: { apiVersion: string; kind: string; metadata: ObjectMeta }, fields: EventFields): NewEvent {
    const involved = involvedObjectOf(object);
    const now = this.host.clock.now();
    const store = this.host.readModel.store(EVENT_KIND);
    let name: string;
    do {
      const nanos = BigInt(now) * 1_000_000n + BigInt(this.sequence % 1_000_000);
      this.sequence++;
      name = `${involved.name}.${nanos.toString(16)}`;
    } while (store?.get(involved.namespace, name) !== undefined);
    const event = buildKubernetesEvent(involved, fields, this.component, { name, uid: this.host.rng.uid(), now });
    return resourceEvent('ResourceCreated', EVENT_KIND, involved.namespace, name, { object: event });
  }
}

/** What expiry needs from the cluster (a Cluster satisfies it). */
export interface EventExpiryHost {
  clock: Clock;
  readModel: ReadModel;
  resourceApplied$: Observable<StoredEvent>;
  commit(events: readonly NewEvent[]): Promise<void>;
}

/**
 * Expires Events as the API server's --event-ttl does. The read model drops them by the time of
 * each event it applies; on a cluster where nothing else is written, this appends one
 * EventsExpired event when the oldest is due, so they go at their time all the same.
 */
export class EventExpiry {
  private timer: TimerHandle | undefined;
  private subscription: { unsubscribe(): void } | undefined;

  constructor(private readonly host: EventExpiryHost) {}

  start(): void {
    this.subscription = this.host.resourceApplied$.subscribe((event) => {
      // Events only get later: a timer already set is never too late.
      if (event.kind === EVENT_KIND && event.type !== EVENTS_EXPIRED && this.timer === undefined) this.schedule();
    });
    this.schedule();
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    const due = this.host.readModel.nextEventExpiry();
    if (due === undefined) return;
    this.timer = this.host.clock.setTimeout(() => this.fire(), Math.max(0, due - this.host.clock.now()));
  }

  private fire(): void {
    this.timer = undefined;
    const due = this.host.readModel.nextEventExpiry();
    // Something written meanwhile may have expired them already.
    if (due !== undefined && due <= this.host.clock.now()) {
      try {
        void this.host.commit([{ type: EVENTS_EXPIRED, kind: EVENT_KIND, namespace: '', name: '', payload: {} }]).catch(() => undefined);
      } catch {
        return; // The log is closed: the cluster is stopping.
      }
    }
    this.schedule();
  }
}
