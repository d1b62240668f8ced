import type { StoredEvent } from '../log/event-log.js';
import type { GameServerStateChanged } from '../kinds/gameserver.js';
import { rfc3339 } from '../kinds/meta.js';
import type { Resource } from '../kinds/resource.js';

/** How many GameServer Events are kept; Kubernetes expires events too (after an hour). */
export const RECENT_EVENTS = 5000;

/**
 * Kubernetes Events for GameServer lifecycle steps (reason = the state, Agones's messages),
 * derived from the log's state changes into a bounded window, so they cost nothing per
 * GameServer and a replay shows the same ones.
 */
export class RecentGameServerEvents {
  private readonly ring: Resource[] = [];
  private next = 0;

  apply(event: StoredEvent, uid: string): void {
    const p = event.payload as GameServerStateChanged;
    const time = rfc3339(event.time);
    const object: Resource = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${event.name}.${event.seq.toString(16)}`,
        namespace: event.namespace,
        uid: `event-${event.seq}`,
        resourceVersion: String(event.seq),
        generation: 1,
        creationTimestamp: time,
        labels: {},
        annotations: {},
      },
      involvedObject: { kind: 'GameServer', apiVersion: 'agones.dev/v1', namespace: event.namespace, name: event.name, uid },
      reason: p.reason || p.state,
      message: p.message,
      type: p.eventType,
      source: { component: sourceOf(p.cause) },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    };
    if (this.ring.length < RECENT_EVENTS) this.ring.push(object);
    else this.ring[this.next] = object;
    this.next = (this.next + 1) % RECENT_EVENTS;
  }

  values(): Resource[] {
    return this.ring.length < RECENT_EVENTS ? [...this.ring] : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  get(namespace: string, name: string): Resource | undefined {
    return this.ring.find((e) => e.metadata.namespace === namespace && e.metadata.name === name);
  }
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
