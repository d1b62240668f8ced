import type { Observable } from 'rxjs';
import type { Clock, SeededRandom, TimerHandle } from '../clock.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent, StoredEvent } from '../log/event-log.js';
import { EVENT_KIND, type EventFields, buildKubernetesEvent, involvedObjectOf } from '../kinds/event/event.js';
import type { ObjectMeta } from '../kinds/meta.js';
import { resourceEvent } from '../kinds/resource.js';
import { EVENTS_EXPIRED, type ReadModel } from '../runtime/read-model.js';

/**
 * Recording Kubernetes Events (built by server/kinds/event/event.ts) as Agones's controllers do:
 * stored as objects of kind Event, created with the generic ResourceCreated event, so
 * `kubectl get events` and `kubectl describe` show them. Every controller records through this
 * module.
 */

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
    const event = buildKubernetesEvent(involved, fields, this.component, {
      name,
      uid: this.host.rng.uid(),
      resourceVersion: '0',
      time: now,
    });
    return resourceEvent('ResourceCreated', EVENT_KIND, involved.namespace, name, { object: event });
  }
}

/** What expiry needs from the cluster (a Cluster satisfies it). */
export interface EventExpiryHost {
  clock: Clock;
  readModel: ReadModel;
  resourceApplied$: Observable<StoredEvent>;
  /** GameServer changes: a lifecycle step or an allocation is an Event too (derived, in the read model). */
  gameServerApplied$: Observable<unknown>;
  commit(events: readonly NewEvent[], cause?: Cause): Promise<void>;
}

/**
 * Expires Events as the API server's --event-ttl does. The read model drops them (stored ones and
 * those derived from GameServer changes) by the time of each event it applies; on a cluster where
 * nothing else is written, this appends one EventsExpired event when the oldest is due, so they
 * go at their time all the same.
 */
export class EventExpiry {
  private timer: TimerHandle | undefined;
  private subscriptions: Array<{ unsubscribe(): void }> = [];

  constructor(private readonly host: EventExpiryHost) {}

  start(): void {
    // Events only get later: a timer already set is never too late.
    this.subscriptions = [
      this.host.resourceApplied$.subscribe((event) => {
        if (event.kind === EVENT_KIND && event.type !== EVENTS_EXPIRED && this.timer === undefined) this.schedule();
      }),
      this.host.gameServerApplied$.subscribe(() => {
        if (this.timer === undefined) this.schedule();
      }),
    ];
    this.schedule();
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
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
        const cause = { type: 'timer', timer: 'event.ttl' } as const;
        void this.host.commit([{ type: EVENTS_EXPIRED, kind: EVENT_KIND, namespace: '', name: '', payload: {} }], cause).catch(() => undefined);
      } catch {
        return; // The log is closed: the cluster is stopping.
      }
    }
    this.schedule();
  }
}
