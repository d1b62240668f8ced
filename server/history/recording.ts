import { EventLog, type StoredEvent } from '../log/event-log.js';
import { GAMESERVER_KIND } from '../kinds/agones.js';
import type { GameServerObserved } from '../kinds/gameserver/events.js';
import { type Resource, evolveResource } from '../kinds/resource.js';
import { FLEET_KIND } from '../kinds/fleet/fleet.js';
import { FLEETAUTOSCALER_KIND } from '../kinds/fleetautoscaler/fleetautoscaler.js';
import { NODE_KIND } from '../sim/nodes.js';
import { RECORDING_KIND, RECORDING_STOPPED, type RecordingStarted, recordingOf } from './recording-log.js';

/**
 * A recording read back for what-if runs (`fleetsim simulate --from-recording`): what the
 * cluster was at the start (its fleets, autoscalers and nodes), what people and machines changed
 * afterwards (a fleet scaled by hand, an autoscaler edited, a node lost), the demand it served
 * (each allocation: when, from which fleet, how long the GameServer stayed Allocated and what it
 * did then), how long its GameServers took to start, and the recording's own figures to compare
 * a simulation with. Everything is read from the log by its time; a fleet's figures are its
 * status as the cluster reported it.
 */

/** One allocation the cluster made. */
export interface RecordedAllocation {
  /** `namespace/name` of the fleet (its GameServer's agones.dev/fleet label). */
  fleet: string;
  /** Milliseconds after the recording's start; 0 for one already Allocated when it began. */
  atMs: number;
  /** How long its GameServer stayed Allocated; undefined when it still was at the recording's end. */
  holdMs: number | undefined;
  /** What the GameServer did when its session ended: went (Shutdown, deleted, lost), or back to Ready. */
  end: 'shutdown' | 'ready';
  /** Allocated before the recording began. */
  initial: boolean;
}

/** A change people or machines made to the cluster's configuration, at its time. */
export type RecordedChange =
  | { atMs: number; apply: Resource }
  | { atMs: number; delete: { kind: string; namespace: string; name: string } }
  | { atMs: number; addNode: { name: string; pods: number } }
  | { atMs: number; deleteNode: string };

export interface RecordedFigures {
  /** Allocations made while recording (not those already Allocated at its start). */
  allocations: number;
  initialAllocations: number;
  /** The most GameServers the fleets reported at once (the sum of their status.replicas). */
  peakReplicas: number;
  /** GameServer-hours (status.replicas), of them Ready and Allocated, and node-hours, over the recording. */
  gameServerHours: number;
  readyHours: number;
  allocatedHours: number;
  nodeHours: number;
  peakNodes: number;
}

export interface RecordingHistory {
  info: RecordingStarted;
  /** The first observation (the first lists) and the last event, epoch ms. */
  startMs: number;
  endMs: number;
  /** Fleets, FleetAutoscalers and Nodes as the recording began. */
  initial: Resource[];
  initialNodes: Array<{ name: string; pods: number }>;
  /** Changes of Fleets (their spec), FleetAutoscalers and Nodes after the start, in order. */
  changes: RecordedChange[];
  allocations: RecordedAllocation[];
  /**
   * How long GameServers took from Scheduled (their pod on a node) to Ready (ms), as seen: the
   * image pulled and the game started. The wait for a node is the cluster's capacity, which a
   * simulation models itself.
   */
  startupMs: number[];
  figures: RecordedFigures;
  /** What the recording holds that a what-if run leaves out, in words. */
  notes: string[];
}

const HOUR = 3_600_000;

interface Figures {
  replicas: number;
  ready: number;
  allocated: number;
}

function fleetFigures(fleet: Resource | undefined): Figures {
  const status = (fleet?.status ?? {}) as { replicas?: number; readyReplicas?: number; allocatedReplicas?: number };
  return { replicas: status.replicas ?? 0, ready: status.readyReplicas ?? 0, allocated: status.allocatedReplicas ?? 0 };
}

/** Pods a Node takes, from its allocatable pods (Kubernetes's default 110 when it says none). */
function podsOf(node: Resource): number {
  const pods = Number((node.status as { allocatable?: { pods?: unknown } } | undefined)?.allocatable?.pods);
  return Number.isInteger(pods) && pods > 0 ? pods : 110;
}

const keyOf = (event: StoredEvent) => `${event.namespace}/${event.name}`;

/** The spec of a Fleet without its replicas: what a person changes beside the scale. */
function specWithoutReplicas(fleet: Resource): string {
  const { replicas: _replicas, ...rest } = (fleet.spec ?? {}) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/** Reads a recording. Throws when the log is not one. */
export function readRecording(path: string): RecordingHistory {
  const log = new EventLog(path, { readonly: true });
  try {
    const info = recordingOf(log);
    if (!info) throw new Error(`${path} is not a recording (fleetsim record writes one)`);
    return new RecordingReader(info).read(log.read());
  } finally {
    log.close();
  }
}

/** Folds a recording's events, in order, into its history. */
class RecordingReader {
  private startMs: number | undefined;
  private lastTime = 0;
  private readonly objects = new Map<string, Resource>();
  private readonly initial: Resource[] = [];
  private readonly initialNodes: Array<{ name: string; pods: number }> = [];
  private readonly changes: RecordedChange[] = [];
  private readonly allocations: RecordedAllocation[] = [];
  private readonly startupMs: number[] = [];
  /** Per GameServer: its state, fleet, open allocation, when it was seen Scheduled. */
  private readonly gameServers = new Map<string, { state: string; fleet?: string; allocation?: RecordedAllocation & { at: number }; scheduledAt?: number }>();
  private readonly fleetStatus = new Map<string, Figures>();
  private nodes = 0;
  private readonly integral = { replicas: 0, ready: 0, allocated: 0, nodes: 0 };
  private peakReplicas = 0;
  private peakNodes = 0;
  private unowned = 0;

  constructor(private readonly info: RecordingStarted) {}

  read(events: Iterable<StoredEvent>): RecordingHistory {
    for (const event of events) {
      if (event.kind === RECORDING_KIND) {
        if (event.type === RECORDING_STOPPED) this.advance(event.time);
        continue;
      }
      // The first lists' events share the first batch's time: they are the cluster as it began.
      this.startMs ??= event.time;
      this.advance(event.time);
      const atStart = event.time === this.startMs;
      if (event.kind === GAMESERVER_KIND) this.gameServer(event, atStart);
      else this.resource(event, atStart);
      this.measure();
    }
    const startMs = this.startMs ?? this.lastTime;
    const endMs = this.lastTime;
    for (const gs of this.gameServers.values()) if (gs.allocation) this.allocations.push(withoutAt(gs.allocation));
    this.allocations.sort((a, b) => a.atMs - b.atMs);
    const notes: string[] = [];
    if (this.unowned > 0) notes.push(`${this.unowned} allocations of GameServers no fleet owns are left out`);
    const during = this.allocations.filter((a) => !a.initial).length;
    return {
      info: this.info,
      startMs,
      endMs,
      initial: this.initial,
      initialNodes: this.initialNodes,
      changes: this.changes,
      allocations: this.allocations,
      startupMs: this.startupMs,
      figures: {
        allocations: during,
        initialAllocations: this.allocations.length - during,
        peakReplicas: this.peakReplicas,
        gameServerHours: this.integral.replicas / HOUR,
        readyHours: this.integral.ready / HOUR,
        allocatedHours: this.integral.allocated / HOUR,
        nodeHours: this.integral.nodes / HOUR,
        peakNodes: this.peakNodes,
      },
      notes,
    };
  }

  /** Integrates the counts up to `time` (they hold from the last event to it). */
  private advance(time: number): void {
    if (this.startMs !== undefined && time > this.lastTime && this.lastTime >= this.startMs) {
      const ms = time - this.lastTime;
      let sums = { replicas: 0, ready: 0, allocated: 0 };
      for (const f of this.fleetStatus.values()) sums = { replicas: sums.replicas + f.replicas, ready: sums.ready + f.ready, allocated: sums.allocated + f.allocated };
      this.integral.replicas += sums.replicas * ms;
      this.integral.ready += sums.ready * ms;
      this.integral.allocated += sums.allocated * ms;
      this.integral.nodes += this.nodes * ms;
    }
    this.lastTime = Math.max(this.lastTime, time);
  }

  private measure(): void {
    let replicas = 0;
    for (const f of this.fleetStatus.values()) replicas += f.replicas;
    this.peakReplicas = Math.max(this.peakReplicas, replicas);
    this.peakNodes = Math.max(this.peakNodes, this.nodes);
  }

  private resource(event: StoredEvent, atStart: boolean): void {
    const key = `${event.kind}/${keyOf(event)}`;
    const before = this.objects.get(key);
    const after = evolveResource(before, event);
    if (after) this.objects.set(key, after);
    else this.objects.delete(key);
    const atMs = event.time - this.startMs!;
    switch (event.kind) {
      case FLEET_KIND:
        if (after) this.fleetStatus.set(keyOf(event), fleetFigures(after));
        else this.fleetStatus.delete(keyOf(event));
        return this.configuration(event, before, after, atStart, atMs);
      case FLEETAUTOSCALER_KIND:
        return this.configuration(event, before, after, atStart, atMs);
      case NODE_KIND:
        this.nodes += (after ? 1 : 0) - (before ? 1 : 0);
        if (after && !before) {
          if (atStart) this.initialNodes.push({ name: event.name, pods: podsOf(after) });
          else this.changes.push({ atMs, addNode: { name: event.name, pods: podsOf(after) } });
        } else if (!after && before) this.changes.push({ atMs, deleteNode: event.name });
        return;
      default:
        return;
    }
  }

  /**
   * A Fleet's or FleetAutoscaler's creation, change of spec, or deletion. A fleet's replicas
   * are its autoscaler's while one targets it: a what-if run's own autoscaler decides them.
   */
  private configuration(event: StoredEvent, before: Resource | undefined, after: Resource | undefined, atStart: boolean, atMs: number): void {
    if (!after) {
      if (before) this.changes.push({ atMs, delete: { kind: event.kind, namespace: event.namespace, name: event.name } });
      return;
    }
    if (!before) {
      if (atStart) this.initial.push(after);
      else this.changes.push({ atMs, apply: after });
      return;
    }
    if (JSON.stringify(before.spec) === JSON.stringify(after.spec)) return;
    if (event.kind === FLEET_KIND && this.autoscaled(event.namespace, event.name)) {
      if (specWithoutReplicas(before) === specWithoutReplicas(after)) return;
      const { replicas: _replicas, ...spec } = after.spec as Record<string, unknown>;
      this.changes.push({ atMs, apply: { ...after, spec } });
      return;
    }
    this.changes.push({ atMs, apply: after });
  }

  private autoscaled(namespace: string, fleet: string): boolean {
    for (const [key, object] of this.objects) {
      if (key.startsWith(`${FLEETAUTOSCALER_KIND}/${namespace}/`) && (object.spec as { fleetName?: string } | undefined)?.fleetName === fleet) return true;
    }
    return false;
  }

  private gameServer(event: StoredEvent, atStart: boolean): void {
    const key = keyOf(event);
    const known = this.gameServers.get(key);
    if (event.type === 'GameServerDeleted') {
      if (known?.allocation) this.close(known.allocation, event.time, 'shutdown');
      this.gameServers.delete(key);
      return;
    }
    if (event.type !== 'GameServerObserved') return;
    const { object, allocation } = event.payload as GameServerObserved;
    const fleetName = object.metadata.labels?.['agones.dev/fleet'];
    const fleet = fleetName ? `${object.metadata.namespace}/${fleetName}` : undefined;
    const state = object.status.state;
    const gs = known ?? { state: '', fleet };
    gs.fleet = fleet;
    if (gs.allocation && state !== 'Allocated') {
      this.close(gs.allocation, event.time, state === 'Ready' || state === 'RequestReady' ? 'ready' : 'shutdown');
      gs.allocation = undefined;
    }
    const opens = allocation !== undefined || (atStart && state === 'Allocated' && !known);
    if (opens && !gs.allocation) {
      if (fleet) gs.allocation = { fleet, atMs: event.time - this.startMs!, holdMs: undefined, end: 'shutdown', initial: !allocation, at: event.time };
      else this.unowned++;
    }
    if (state === 'Scheduled' && gs.state !== 'Scheduled') gs.scheduledAt = event.time;
    if ((state === 'RequestReady' || state === 'Ready') && gs.scheduledAt !== undefined) {
      this.startupMs.push(event.time - gs.scheduledAt);
      gs.scheduledAt = undefined;
    }
    gs.state = state;
    this.gameServers.set(key, gs);
  }

  private close(allocation: RecordedAllocation & { at: number }, time: number, end: 'shutdown' | 'ready'): void {
    this.allocations.push(withoutAt({ ...allocation, holdMs: time - allocation.at, end }));
  }
}

function withoutAt(allocation: RecordedAllocation & { at: number }): RecordedAllocation {
  const { at: _at, ...rest } = allocation;
  return rest;
}
