import { type Cause, causeAfter } from '../log/cause.js';
import type { EventHeader, EventLog, StoredEvent } from '../log/event-log.js';
import { type GameServer } from '../kinds/gameserver-types.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import { type GameServerObserved, type GameServerStateChanged, evolveGameServer, gameServersOfBatch } from '../kinds/gameserver/events.js';
import { KIND_DEFINITIONS } from '../kinds/definitions.js';
import { EVENT_KIND } from '../kinds/event/event.js';
import { type Resource, evolveResource } from '../kinds/resource.js';
import { jsonEqual } from '../kinds/common.js';
import { type HistorySummary, type HistoryWindow, formatSummary, resolveBound, summarize } from './explain-window.js';
import { nextSlice } from './slices.js';

/**
 * `fleetsim explain`: an object's history read from the log, and for each change the chain of
 * causes back to the request, the timer or the start that began it, in words. Every commit
 * records its cause (server/log/cause.ts); a cause that followed from an earlier event names it,
 * so the chain is walked event by event. Logs written before causes were kept explain nothing
 * beyond the change itself.
 */

/** One link of a chain: a cause in words, or the earlier event it followed from (with its seq). */
export interface Because {
  text: string;
  seq?: number;
  time?: string;
  cause?: Cause;
}

export interface ExplainedChange extends Omit<EventHeader, 'time'> {
  time: string;
  /** The change in words (`Ready → Allocated`, `replicas 10 → 5`). */
  summary: string;
  /** Nearest cause first. */
  because: Because[];
}

export interface ObjectHistory {
  object: { kind: string; namespace: string; name: string };
  /** The changes shown (all, or those of the window asked for), oldest first. */
  changes: ExplainedChange[];
  /** All the object's changes in the log: how many, the first's and the last's time (absent when it has none). */
  total?: { changes: number; first: string; last: string };
  /** In place of `changes`, when more were left than the window's `summarizeOver`. */
  summary?: HistorySummary;
}

/** Links followed at most: a guard, should a log ever name a cause that loops. */
const MAX_CHAIN = 40;

/** A kind by any name kubectl takes: `fleet`, `fleets`, `flt`, `gs`, `gameserver.agones.dev`… */
export function kindByName(name: string): { kind: string; namespaced: boolean } | undefined {
  const wanted = name.toLowerCase();
  for (const definition of KIND_DEFINITIONS) {
    const names = [definition.plural, definition.singular, definition.kind.toLowerCase(), ...definition.shortNames];
    const qualified = definition.group ? names.map((n) => `${n}.${definition.group}`) : [];
    if (names.includes(wanted) || qualified.includes(wanted)) return { kind: definition.kind, namespaced: definition.namespaced };
  }
  return undefined;
}

/**
 * Explains from one log, through its index by object (server/log/object-index.ts): an object's
 * history reads its own events, and a change a cause names is told from the few events before it
 * (back to the last that set the whole object), not from that object's whole history. It reads a
 * few milliseconds at a time, letting the event loop turn between slices. Make one per question
 * on a log that is still growing.
 */
export class LogExplainer {
  private readonly histories = new Map<string, Versions>();
  /** One change's before and after, by `seq/subject`. */
  private readonly around = new Map<string, Versions>();

  constructor(private readonly log: EventLog) {}

  /** One event and the chain of its causes; undefined when the log has no such event. */
  async explainEvent(seq: number): Promise<ExplainedChange | undefined> {
    const event = await this.event(seq);
    if (!event) return undefined;
    // An event under no name (a set's batch of GameServers) says what it is by itself.
    return this.explained(event, event.name === '' ? new Map() : await this.versionAround(event, event.name));
  }

  /**
   * The changes of one object, in order, each with the chain of its causes: every one, or those in
   * `window` (a stretch of time, the last few), or a summary of them when there are more than it
   * lists (explain-window.ts). Only the changes shown have their causes followed.
   */
  async explainObject(kind: string, namespace: string, name: string, window: HistoryWindow = {}): Promise<ObjectHistory> {
    const key = `${kind}/${namespace}/${name}`;
    let versions = this.histories.get(key);
    if (!versions) {
      versions = await this.fold(this.log.history(kind, namespace, name), kind, name);
      this.histories.set(key, versions);
    }
    const history: ObjectHistory = { object: { kind, namespace, name }, changes: [] };
    const all = [...versions.values()].map((v) => v.event);
    if (all.length === 0) return history;
    history.total = { changes: all.length, first: new Date(all[0]!.time).toISOString(), last: new Date(all[all.length - 1]!.time).toISOString() };
    const end = this.log.bounds()?.last.time ?? all[all.length - 1]!.time;
    const since = window.since && resolveBound(window.since, end);
    const until = window.until && resolveBound(window.until, end);
    let shown = all.filter((e) => (since === undefined || e.time >= since) && (until === undefined || e.time <= until));
    if (window.tail !== undefined) shown = shown.slice(-window.tail);
    else if (window.summarizeOver !== undefined && shown.length > window.summarizeOver) {
      history.summary = summarize(shown.map((e) => ({ seq: e.seq, time: new Date(e.time).toISOString(), summary: describeChange(e, versions), cause: e.cause })));
      return history;
    }
    for (const event of shown) history.changes.push(await this.explained(event, versions));
    return history;
  }

  private async explained(event: StoredEvent, versions: Versions): Promise<ExplainedChange> {
    return {
      seq: event.seq,
      time: new Date(event.time).toISOString(),
      type: event.type,
      kind: event.kind,
      namespace: event.namespace,
      name: event.name,
      summary: describeChange(event, versions),
      because: await this.chain(event),
    };
  }

  /**
   * The causes behind `event`, nearest first: each cause, then the event it followed, then that
   * one's cause… down to a request, a timer or the start.
   */
  private async chain(event: StoredEvent): Promise<Because[]> {
    const links: Because[] = [];
    let cause = event.cause;
    let before = event.seq;
    while (cause && links.length < MAX_CHAIN) {
      links.push({ text: describeCause(cause), cause });
      const after = causeAfter(cause);
      if (cause.type === 'autoscaler' && cause.trigger.type === 'timer') links.push({ text: describeCause(cause.trigger) });
      // A cause names an earlier event; anything else would be a loop.
      if (after === undefined || after >= before) break;
      const earlier = await this.event(after);
      if (!earlier) break;
      // A batch of new GameServers is written under no name: the cause names the one meant.
      const subject = earlier.name === '' && 'object' in cause && cause.object ? cause.object.name : earlier.name;
      const versions = await this.versionAround(earlier, subject);
      links.push({
        text: `${objectName(earlier.kind, earlier.namespace, subject)}: ${describeChange(earlier, versions)}`,
        seq: earlier.seq,
        time: new Date(earlier.time).toISOString(),
      });
      cause = earlier.cause;
      before = earlier.seq;
    }
    if (!event.cause) links.push({ text: 'no cause recorded (a log written before causes were kept)' });
    return links;
  }

  private async event(seq: number): Promise<StoredEvent | undefined> {
    await nextSlice();
    return this.log.eventAt(seq);
  }

  /**
   * The object `subject` as it was before and after `event`, one of its events: read back from the
   * event to the last one before it that set the whole object (its creation, a replacement, a
   * deletion), so a change costs the events since, however long the object's history.
   */
  private async versionAround(event: StoredEvent, subject: string): Promise<Versions> {
    const key = `${event.seq}/${subject}`;
    const known = this.histories.get(`${event.kind}/${event.namespace}/${subject}`) ?? this.around.get(key);
    if (known) return known;
    const log = this.log;
    const back = function* () {
      for (const earlier of log.history(event.kind, event.namespace, subject, event.seq)) {
        yield earlier;
        if (earlier.seq !== event.seq && SETS_WHOLE_OBJECT.has(earlier.type)) return;
      }
    };
    const versions = await this.fold(back(), event.kind, subject);
    this.around.set(key, versions);
    return versions;
  }

  /** Events of one object, newest first, folded oldest first: each with the object before and after it. */
  private async fold(newestFirst: Iterable<StoredEvent>, kind: string, name: string): Promise<Versions> {
    const events: StoredEvent[] = [];
    for (const event of newestFirst) {
      events.push(event);
      await nextSlice();
    }
    const versions: Versions = new Map();
    let object: unknown;
    for (const event of events.reverse()) {
      const before = object;
      if (kind !== GAMESERVER_KIND) object = evolveResource(object as Resource | undefined, event);
      // A set creates its GameServers in batches, written under no name: the one holding this one creates it.
      else if (event.name === '') object = gameServersOfBatch(event).find((g) => g.metadata.name === name);
      else object = evolveGameServer(object as GameServer | undefined, event);
      versions.set(event.seq, { event, before, after: object });
      await nextSlice();
    }
    return versions;
  }
}

/** Events after which the object is what the event says, whatever it was before (evolveResource, evolveGameServer). */
const SETS_WHOLE_OBJECT = new Set([
  'ResourceCreated',
  'ResourceUpdated',
  'ResourceDeleted',
  'GameServerCreated',
  'GameServerReloaded',
  'GameServersCreated',
  'GameServerDeleted',
]);

type Versions = Map<number, { event: StoredEvent; before: unknown; after: unknown }>;

function objectName(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** A change in words, from the object before and after it. */
export function describeChange(event: StoredEvent, versions: Versions): string {
  const version = versions.get(event.seq);
  const before = version?.before as Record<string, unknown> | undefined;
  const after = version?.after as Record<string, unknown> | undefined;
  if (event.kind === GAMESERVER_KIND) return describeGameServerChange(event, before as GameServer | undefined, after as GameServer | undefined);
  switch (event.type) {
    case 'ResourceCreated':
      // A Kubernetes Event says what it records: a scale-up's reason and message, say.
      if (event.kind === EVENT_KIND) return `recorded ${eventText(after)}`;
      return `created${replicasText(after) === undefined ? '' : ` with replicas ${replicasText(after)}`}`;
    case 'ResourceDeleted':
      return 'deleted';
    case 'ResourceStatusSet':
      return `status set: ${shortJson((event.payload as { status?: unknown }).status)}`;
    case 'ResourceUpdated': {
      const parts: string[] = [];
      const from = replicasText(before);
      const to = replicasText(after);
      if (from !== to) parts.push(`replicas ${from ?? 0} → ${to ?? 0}`);
      const spec = (o: Record<string, unknown> | undefined) => {
        const { replicas: _replicas, ...rest } = (o?.spec ?? {}) as Record<string, unknown>;
        return rest;
      };
      if (!jsonEqual(spec(before), spec(after))) parts.push(templateChanged(before, after) ? 'template changed' : `spec changed (${leafChanges(spec(before), spec(after))})`);
      const meta = (o: Record<string, unknown> | undefined) => (o?.metadata ?? {}) as Record<string, unknown>;
      if (meta(after).deletionTimestamp !== undefined && meta(before).deletionTimestamp === undefined) parts.push('terminating');
      if (!jsonEqual(meta(before).labels, meta(after).labels) || !jsonEqual(meta(before).annotations, meta(after).annotations)) parts.push('metadata changed');
      // An object recorded from a cluster carries its status: say what moved.
      if (!jsonEqual(before?.status, after?.status)) parts.push(`status: ${leafChanges(before?.status, after?.status)}`);
      return parts.length > 0 ? parts.join(', ') : 'updated (no field changed)';
    }
    default:
      return event.type;
  }
}

function describeGameServerChange(event: StoredEvent, before: GameServer | undefined, after: GameServer | undefined): string {
  const from = before?.status.state;
  const to = after?.status.state;
  const moved = from && to && from !== to ? `${from} → ${to}` : undefined;
  switch (event.type) {
    case 'GameServerCreated':
    case 'GameServersCreated':
      return `created (${to ?? 'unknown state'})`;
    case 'GameServerReloaded':
      return 'replaced from its manifest';
    case 'GameServerDeleted':
      return 'deleted';
    case 'GameServerTerminating':
      return 'terminating: its process was sent SIGTERM';
    case 'GameServerAllocated': {
      const { source } = event.payload as { source?: string };
      return `allocated${moved ? ` (${moved})` : ''}${source && source !== 'local' ? ` by ${source}` : ''}`;
    }
    case 'GameServerStateChanged': {
      const { message } = event.payload as GameServerStateChanged;
      return `${moved ?? `→ ${to}`}${message ? ` (${message})` : ''}`;
    }
    case 'GameServerSpecUpdated':
      return `updated${moved ? ` (${moved})` : ''}`;
    case 'GameServerObserved': {
      if (!before) return `observed (${to ?? 'unknown state'})`;
      const what = [
        ...((event.payload as GameServerObserved).allocation ? ['allocated'] : []),
        ...(after?.metadata.deletionTimestamp !== undefined && before.metadata.deletionTimestamp === undefined ? ['terminating'] : []),
      ];
      return `observed${moved ? ` (${moved})` : ''}${what.length ? `: ${what.join(', ')}` : ''}`;
    }
    case 'GameServerMetadataPatched':
      return `metadata set: ${shortJson(event.payload)}`;
    case 'GameServerCounterSet':
    case 'GameServerListSet':
    case 'GameServerPlayersSet':
      return `${event.type.replace(/^GameServer/, '').replace(/Set$/, '').toLowerCase()} set: ${shortJson(event.payload)}`;
    default:
      return event.type;
  }
}

/** The leaves that differ between two values, as `path a → b` (the first four, then how many more). */
function leafChanges(before: unknown, after: unknown): string {
  const changes: string[] = [];
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const walk = (a: unknown, b: unknown, path: string) => {
    if (jsonEqual(a, b)) return;
    // A map that appears or goes is walked as from (or to) an empty one: its leaves are the news.
    if ((isMap(a) || a == null) && (isMap(b) || b == null)) {
      const from = isMap(a) ? a : {};
      const to = isMap(b) ? b : {};
      for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) walk(from[key], to[key], path ? `${path}.${key}` : key);
      return;
    }
    changes.push(`${path || '(all)'} ${shortJson(a ?? null)} → ${shortJson(b ?? null)}`);
  };
  walk(before, after, '');
  return changes.length > 4 ? `${changes.slice(0, 4).join(', ')} and ${changes.length - 4} more` : changes.join(', ');
}

function eventText(object: Record<string, unknown> | undefined): string {
  const { type, reason, message } = (object ?? {}) as { type?: string; reason?: string; message?: string };
  return `${type ?? 'Normal'} ${reason ?? ''}: ${message ?? ''}`;
}

function replicasText(object: Record<string, unknown> | undefined): number | undefined {
  const replicas = (object?.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof replicas === 'number' ? replicas : undefined;
}

function templateChanged(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): boolean {
  const template = (o: Record<string, unknown> | undefined) => (o?.spec as { template?: unknown } | undefined)?.template;
  return template(before) !== undefined && !jsonEqual(template(before), template(after));
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? '';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function figures(inputs: Record<string, number | string | boolean> | undefined): string {
  if (!inputs) return '';
  const parts = Object.entries(inputs).map(([key, value]) => `${key} ${String(value)}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** A cause in words. */
export function describeCause(cause: Cause): string {
  switch (cause.type) {
    case 'request':
      return `request ${cause.method} ${cause.path} from ${cause.client} (request id ${cause.requestId})`;
    case 'sync': {
      const { kind, namespace, name } = cause.object;
      return `the ${kind} controller reconciled ${namespace ? `${namespace}/` : ''}${name}${figures(cause.inputs)}`;
    }
    case 'timer': {
      const on = cause.object ? ` of ${cause.object.kind} ${cause.object.namespace}/${cause.object.name}` : '';
      return `timer ${cause.timer}${on}${figures(cause.inputs)}`;
    }
    case 'autoscaler': {
      const { namespace, name } = cause.autoscaler;
      return `FleetAutoscaler ${namespace}/${name} (${cause.policy}) decided fleet ${cause.fleet} should have ${cause.desired}, had ${cause.current}${figures(cause.inputs)}`;
    }
    case 'process':
      return `the process of ${cause.object.kind} ${cause.object.namespace}/${cause.object.name}: ${cause.detail}`;
    case 'startup':
      return `start-up: ${cause.detail}`;
    case 'observed':
      return `seen on cluster ${cause.cluster} (context ${cause.context}) by a ${cause.via} at ${cause.observedAt}, resourceVersion ${cause.resourceVersion}${cause.said ? `: ${cause.said}` : ''}`;
  }
}

/**
 * A history for people: each change on a line, its causes below it, nearest first; or its summary.
 * A window that left changes out says so first.
 */
export function formatHistory(history: ObjectHistory): string {
  const { kind, namespace, name } = history.object;
  const object = objectName(kind, namespace, name);
  if (!history.total) return `No events of ${object} in the log.`;
  if (history.summary) return formatSummary(object, history.summary);
  const { changes, first, last } = history.total;
  const all = `${changes.toLocaleString('en')} changes, from ${first} to ${last}`;
  if (history.changes.length === 0) return `None of the ${all} of ${object} is in that stretch.`;
  const lines: string[] = history.changes.length < changes ? [`${object}: ${history.changes.length.toLocaleString('en')} of its ${all}`] : [];
  const listed = new Set(history.changes.map((change) => change.seq));
  for (const change of history.changes) {
    lines.push(`#${change.seq} ${change.time}  ${change.summary}`);
    for (const link of change.because) {
      // A chain that reaches a change listed above stops there: its causes are printed already.
      const above = link.seq !== undefined && listed.has(link.seq);
      lines.push(`    ← ${link.seq === undefined ? '' : `#${link.seq} `}${link.text}${above ? ' (see above)' : ''}`);
      if (above) break;
    }
  }
  return lines.join('\n');
}
