import type { StoredEvent } from '../log/event-log.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
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
 *
 * The window is a ring of columns, not of objects: an Event is kept for thousands of changes, so
 * an object per Event (and the log record it held) outlived the young generation and was
 * promoted, a quarter of what an allocation left to the old generation's collector.
 */
export class RecentGameServerEvents {
  private readonly seq = new Float64Array(RECENT_EVENTS);
  private readonly time = new Float64Array(RECENT_EVENTS);
  /** Which Event of its log event (an allocation records up to three). */
  private readonly part = new Uint8Array(RECENT_EVENTS);
  /** The involved object: its kind, apiVersion, namespace, name and uid. */
  private readonly kind = column();
  private readonly apiVersion = column();
  private readonly namespace = column();
  private readonly name = column();
  private readonly uid = column();
  private readonly reason = column();
  private readonly message = column();
  private readonly type = column<EventType>('Normal');
  private readonly component = column();
  /** Appended to the Event's name: the GameServer a SuccessfulCreate is about. */
  private readonly suffix = column();
  private size = 0;
  private next = 0;
  /** Events at or before this time (epoch ms) have expired: set from the log's time, never a clock. */
  horizon = -Infinity;

  apply(event: StoredEvent, gs: GameServer): void {
    if (event.type === 'GameServerStateChanged') {
      const p = event.payload as GameServerStateChanged;
      this.onGameServer(event, gs, p.reason || p.state, p.message, p.eventType, sourceOf(p.cause), 0);
    } else if (event.type === 'GameServerAllocated') {
      const p = event.payload as GameServerAllocated;
      const allocator = 'GameServerAllocation-Allocator';
      if (p.counterErrors?.length) this.onGameServer(event, gs, 'CounterActionError', p.counterErrors.join('; '), 'Warning', allocator, 1);
      if (p.listErrors?.length) this.onGameServer(event, gs, 'ListActionError', p.listErrors.join('; '), 'Warning', allocator, 2);
      this.onGameServer(event, gs, 'Allocated', 'Allocated', 'Normal', allocator, 3);
    } else if (event.type === 'GameServerCreated' || event.type === 'GameServersCreated') {
      const owner = gs.metadata.ownerReferences?.find((r) => r.kind === GAMESERVERSET_KIND);
      if (!owner) return;
      const { namespace, name } = gs.metadata;
      this.push(event, GAMESERVERSET_KIND, owner.apiVersion, namespace, owner.name, owner.uid, 'SuccessfulCreate', `Created gameserver: ${name}`, 'Normal', 'gameserverset-controller', 0, name);
    }
  }

  values(): Resource[] {
    const out: Resource[] = [];
    for (const i of this.live()) out.push(this.toObject(i));
    return out;
  }

  /** One Event by name: only the one found is built. */
  get(namespace: string, name: string): Resource | undefined {
    for (const i of this.live()) if (this.namespace[i] === namespace && this.eventName(i) === name) return this.toObject(i);
    return undefined;
  }

  /** When the oldest Event not yet expired was written (epoch ms), if any is kept. */
  oldestTime(): number | undefined {
    // Written in time order: when the newest has expired, all have (no walk over the window).
    if (this.size === 0 || this.time[(this.next + RECENT_EVENTS - 1) % RECENT_EVENTS]! <= this.horizon) return undefined;
    for (const i of this.live()) return this.time[i];
    return undefined;
  }

  /** The slots of the Events not yet expired, oldest first. */
  private *live(): Generator<number> {
    const first = this.size < RECENT_EVENTS ? 0 : this.next;
    for (let n = 0; n < this.size; n++) {
      const i = (first + n) % RECENT_EVENTS;
      if (this.time[i]! > this.horizon) yield i;
    }
  }

  /** Makes this window hold what `other` holds. */
  copyFrom(other: RecentGameServerEvents): void {
    this.seq.set(other.seq);
    this.time.set(other.time);
    this.part.set(other.part);
    for (const key of STRING_COLUMNS) copyColumn<string>(this[key], other[key]);
    this.size = other.size;
    this.next = other.next;
    this.horizon = other.horizon;
  }

  /** An Event about the GameServer itself. */
  private onGameServer(event: StoredEvent, gs: GameServer, reason: string, message: string, type: EventType, component: string, part: number): void {
    const { namespace, name, uid } = gs.metadata;
    this.push(event, GAMESERVER_KIND, 'agones.dev/v1', namespace, name, uid, reason, message, type, component, part, '');
  }

  private push(
    event: StoredEvent,
    kind: string,
    apiVersion: string,
    namespace: string,
    name: string,
    uid: string,
    reason: string,
    message: string,
    type: EventType,
    component: string,
    part: number,
    suffix: string,
  ): void {
    const i = this.next;
    this.seq[i] = event.seq;
    this.time[i] = event.time;
    this.part[i] = part;
    this.kind[i] = kind;
    this.apiVersion[i] = apiVersion;
    this.namespace[i] = namespace;
    this.name[i] = name;
    this.uid[i] = uid;
    this.reason[i] = reason;
    this.message[i] = message;
    this.type[i] = type;
    this.component[i] = component;
    this.suffix[i] = suffix;
    this.next = (i + 1) % RECENT_EVENTS;
    if (this.size < RECENT_EVENTS) this.size++;
  }

  /** What follows an Event's name and uid: the GameServer a SuccessfulCreate is about. */
  private tail(i: number): string {
    return this.suffix[i] ? `-${this.suffix[i]}` : '';
  }

  private eventName(i: number): string {
    const part = this.part[i]!;
    return `${this.name[i]!}.${this.seq[i]!.toString(16)}${part ? `-${part}` : ''}${this.tail(i)}`;
  }

  private toObject(i: number): Resource {
    const seq = this.seq[i]!;
    const involved: InvolvedObject = { kind: this.kind[i]!, apiVersion: this.apiVersion[i]!, namespace: this.namespace[i]!, name: this.name[i]!, uid: this.uid[i]! };
    return buildKubernetesEvent(involved, { reason: this.reason[i]!, message: this.message[i]!, type: this.type[i]! }, this.component[i]!, {
      name: this.eventName(i),
      uid: `event-${seq}-${this.part[i]!}${this.tail(i)}`,
      resourceVersion: String(seq),
      time: this.time[i]!,
    });
  }
}

const STRING_COLUMNS = ['kind', 'apiVersion', 'namespace', 'name', 'uid', 'reason', 'message', 'type', 'component', 'suffix'] as const;

/** A column of the ring, its slots made at once (the ring reuses them). */
function column<T extends string = string>(empty = '' as T): T[] {
  return new Array<T>(RECENT_EVENTS).fill(empty);
}

function copyColumn<T>(into: T[], from: readonly T[]): void {
  for (let i = 0; i < RECENT_EVENTS; i++) into[i] = from[i]!;
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
