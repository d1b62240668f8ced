import type { StoredEvent } from '../log/event-log.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import type { GameServerAllocated, GameServerStateChanged } from '../kinds/gameserver/events.js';
import { type EventType, type InvolvedObject, buildKubernetesEvent } from '../kinds/event/event.js';
import { GAMESERVERSET_KIND } from '../kinds/gameserverset/gameserverset.js';
import type { Resource } from '../kinds/resource.js';

/** How many derived Events are kept; Kubernetes expires events too (after an hour). */
export const RECENT_EVENTS = 5000;

/**
 * Kubernetes Events derived from the log: GameServer lifecycle steps (reason = the state,
 * Agones's messages), allocations, and a set's SuccessfulCreate for each GameServer it creates.
 * They live in a bounded window, so they cost nothing per GameServer, and a replay shows the
 * same ones.
 */
interface Recorded {
  event: StoredEvent;
  involved: InvolvedObject;
  reason: string;
  message: string;
  type: EventType;
  component: string;
  part: number;
  suffix: string;
}

export class RecentGameServerEvents {
  /** Kept as the facts only: the Event objects are built when someone lists them. */
  private readonly ring: Recorded[] = [];
  private next = 0;
  /** Events at or before this time (epoch ms) have expired: set from the log's time, never a clock. */
  horizon = -Infinity;

  apply(event: StoredEvent, gs: GameServer): void {
    const involved: InvolvedObject = {
      kind: 'GameServer',
      apiVersion: 'agones.dev/v1',
      namespace: gs.metadata.namespace,
      name: gs.metadata.name,
      uid: gs.metadata.uid,
    };
    if (event.type === 'GameServerStateChanged') {
      const p = event.payload as GameServerStateChanged;
      this.push(this.build(event, involved, p.reason || p.state, p.message, p.eventType, sourceOf(p.cause), 0));
    } else if (event.type === 'GameServerAllocated') {
      const p = event.payload as GameServerAllocated;
      const allocator = 'GameServerAllocation-Allocator';
      if (p.counterErrors?.length) this.push(this.build(event, involved, 'CounterActionError', p.counterErrors.join('; '), 'Warning', allocator, 1));
      if (p.listErrors?.length) this.push(this.build(event, involved, 'ListActionError', p.listErrors.join('; '), 'Warning', allocator, 2));
      this.push(this.build(event, involved, 'Allocated', 'Allocated', 'Normal', allocator, 3));
    } else if (event.type === 'GameServerCreated' || event.type === 'GameServersCreated') {
      const owner = gs.metadata.ownerReferences?.find((r) => r.kind === GAMESERVERSET_KIND);
      if (!owner) return;
      const set: InvolvedObject = { kind: GAMESERVERSET_KIND, apiVersion: owner.apiVersion, namespace: gs.metadata.namespace, name: owner.name, uid: owner.uid };
      this.push(this.build(event, set, 'SuccessfulCreate', `Created gameserver: ${gs.metadata.name}`, 'Normal', 'gameserverset-controller', 0, gs.metadata.name));
    }
  }

  values(): Resource[] {
    const ordered = this.ring.length < RECENT_EVENTS ? this.ring : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    const out: Resource[] = [];
    for (const recorded of ordered) if (recorded.event.time > this.horizon) out.push(toObject(recorded));
    return out;
  }

  get(namespace: string, name: string): Resource | undefined {
    return this.values().find((e) => e.metadata.namespace === namespace && e.metadata.name === name);
  }

  /** Makes this window hold what `other` holds (recorded facts never change, so they are shared). */
  copyFrom(other: RecentGameServerEvents): void {
    this.ring.length = 0;
    this.ring.push(...other.ring);
    this.next = other.next;
    this.horizon = other.horizon;
  }

  private push(recorded: Recorded): void {
    if (this.ring.length < RECENT_EVENTS) this.ring.push(recorded);
    else this.ring[this.next] = recorded;
    this.next = (this.next + 1) % RECENT_EVENTS;
  }

  private build(
    event: StoredEvent,
    involved: InvolvedObject,
    reason: string,
    message: string,
    type: EventType,
    component: string,
    part: number,
    suffix = '',
  ): Recorded {
    return { event, involved, reason, message, type, component, part, suffix };
  }
}

function toObject({ event, involved, reason, message, type, component, part, suffix }: Recorded): Resource {
  const tail = suffix ? `-${suffix}` : '';
  return buildKubernetesEvent(involved, { reason, message, type }, component, {
    name: `${involved.name}.${event.seq.toString(16)}${part ? `-${part}` : ''}${tail}`,
    uid: `event-${event.seq}-${part}${tail}`,
    resourceVersion: String(event.seq),
    time: event.time,
  });
}

function sourceOf(cause: string): string {
  switch (cause) {
    case 'sdk':
    case 'health':
    case 'timer':
      return 'gameserver-sidecar';
    case 'allocator':
      return 'GameServerAllocation-Allocator';
    default:
      return 'gameserver-controller';
  }
}
