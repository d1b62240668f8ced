import { type SetView, applyDeploymentStrategy } from '../../machines/rolling-update.js';
import { GAMESERVERSET_DEFINITION } from '../kinds/gameserverset/definition.js';
import { FLEET_KIND, FLEET_LABEL, type FleetSpec, gameServerSetOfFleet } from '../kinds/fleet/fleet.js';
import { GAMESERVERSET_KIND, type GameServerSetSpec, gameServerSetSpecOf } from '../kinds/gameserverset/gameserverset.js';
import { objectKey } from '../kinds/meta.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { jsonEqual } from '../kinds/common.js';
import type { NewEvent } from '../log/event-log.js';
import { ResourceService } from '../resources/service.js';
import type { FleetControllerPort } from './ports.js';
import type { SetStatus } from '../runtime/set-status.js';
import { EventRecorder } from './k8s-events.js';
import { KeyedController } from './keyed-controller.js';
import type { Trigger } from './work-queue.js';

const NO_STATUS: SetView['status'] = { replicas: 0, readyReplicas: 0, reservedReplicas: 0, allocatedReplicas: 0, shutdownReplicas: 0 };

function setView(set: Resource): SetView {
  const status = (set.status ?? {}) as Partial<SetStatus>;
  return {
    name: set.metadata.name,
    replicas: gameServerSetSpecOf(set).replicas ?? 0,
    status: {
      replicas: status.replicas ?? 0,
      readyReplicas: status.readyReplicas ?? 0,
      reservedReplicas: status.reservedReplicas ?? 0,
      allocatedReplicas: status.allocatedReplicas ?? 0,
      shutdownReplicas: status.shutdownReplicas ?? 0,
    },
  };
}

/** The stored object (no derived status) with a new spec: a full-object update. */
function withSpec(set: Resource, spec: GameServerSetSpec): Resource {
  const { status: _status, ...rest } = set;
  return { ...rest, metadata: { ...set.metadata, generation: set.metadata.generation + 1 }, spec } as Resource;
}

/**
 * The Fleet controller (Agones's pkg/fleets, reference §5.3): keeps one active GameServerSet
 * whose template is the fleet's, sizes it and the older sets by the fleet's strategy
 * (RollingUpdate or Recreate), deletes emptied old sets, and records Kubernetes Events. It never
 * touches GameServers: the GameServerSet controller does.
 */
export class FleetController extends KeyedController<FleetControllerPort> {
  private readonly recorder: EventRecorder;
  private readonly service: ResourceService;
  /** Fleet key → its sets' keys (by the `agones.dev/fleet` label), kept as events are applied. */
  private readonly setsOfFleet = new Map<string, Set<string>>();
  /** Set key → fleet key; kept past a set's deletion until the deletion has been reacted to. */
  private readonly fleetOfSet = new Map<string, string>();
  /**
   * Fleet key → its Ready count when it was last synced. Agones's rolling update reads the Fleet's
   * stored status, which each sync writes at its end: a sync sees the Ready count of the sync
   * before it, not the servers that turned Ready since (this decides how many old servers go).
   */
  private readonly readyAtLastSync = new Map<string, number>();

  /** `service` builds GameServerSets with the GameServerSet kind's defaults and validation. */
  constructor(cluster: FleetControllerPort, service: ResourceService) {
    super(cluster);
    this.service = service;
    this.recorder = new EventRecorder(cluster, 'fleet-controller');
  }

  start(): void {
    this.renewQueue();
    this.setsOfFleet.clear();
    this.fleetOfSet.clear();
    this.readyAtLastSync.clear();
    for (const [key] of this.setStore()?.entries() ?? []) this.indexSet(key);
    this.subscriptions.push(
      this.cluster.resourceApplied$.subscribe((event) => {
        if (event.kind === GAMESERVERSET_KIND) this.indexSet(objectKey(event.namespace, event.name));
      }),
      this.cluster.changesOf(FLEET_KIND).subscribe((change) => {
        const key = objectKey(change.namespace, change.name);
        if (change.type !== 'DELETED') this.queue.add(key, change.seq, !change.derived);
        else this.readyAtLastSync.delete(key);
      }),
      this.cluster.changesOf(GAMESERVERSET_KIND).subscribe((change) => {
        const key = objectKey(change.namespace, change.name);
        const fleet = this.fleetOfSet.get(key);
        if (fleet) this.queue.add(fleet, change.seq);
        if (change.type === 'DELETED' && !this.setStore()?.getByKey(key)) this.fleetOfSet.delete(key);
      }),
    );
    for (const [key] of this.cluster.readModel.store(FLEET_KIND)?.entries() ?? []) this.queue.add(key);
  }

  private setStore() {
    return this.cluster.readModel.store(GAMESERVERSET_KIND);
  }

  private indexSet(key: string): void {
    const set = this.setStore()?.getByKey(key);
    const before = this.fleetOfSet.get(key);
    const fleetName = set?.metadata.labels[FLEET_LABEL];
    const after = set && fleetName ? objectKey(set.metadata.namespace, fleetName) : undefined;
    if (before === after) return;
    if (before) {
      const keys = this.setsOfFleet.get(before);
      keys?.delete(key);
      if (keys?.size === 0) this.setsOfFleet.delete(before);
    }
    if (after) {
      this.fleetOfSet.set(key, after);
      let keys = this.setsOfFleet.get(after);
      if (!keys) {
        keys = new Set();
        this.setsOfFleet.set(after, keys);
      }
      keys.add(key);
    } else if (set) {
      this.fleetOfSet.delete(key);
    }
    // A deleted set keeps its fleet entry until its deletion has been seen (see start()).
  }

  /** The fleet's sets (label and controller owner match), with their derived status, oldest first. */
  private ownedSets(fleet: Resource): Resource[] {
    const out: Resource[] = [];
    const store = this.setStore();
    for (const key of this.setsOfFleet.get(objectKey(fleet.metadata.namespace, fleet.metadata.name)) ?? []) {
      const set = store?.getByKey(key);
      if (!set) continue;
      if (!set.metadata.ownerReferences?.some((r) => r.kind === FLEET_KIND && r.uid === fleet.metadata.uid)) continue;
      out.push(this.cluster.readModel.present(set));
    }
    return out;
  }

  protected async sync(key: string, trigger: Trigger | undefined): Promise<void> {
    const stored = this.cluster.readModel.store(FLEET_KIND)?.getByKey(key);
    if (!stored || stored.metadata.deletionTimestamp !== undefined) return;
    const fleet = this.cluster.readModel.present(stored);
    const spec = (fleet.spec ?? {}) as FleetSpec;
    const status = (fleet.status ?? {}) as Partial<SetStatus>;
    const fleetReplicas = Math.max(0, spec.replicas ?? 0);
    const scheduling = spec.scheduling ?? 'Packed';

    const sets = this.ownedSets(fleet);
    let active: Resource | undefined;
    for (const set of sets) if (jsonEqual(gameServerSetSpecOf(set).template, spec.template)) active = set;
    const rest = sets.filter((set) => set !== active);
    const ready = status.readyReplicas ?? 0;
    const readyBefore = this.readyAtLastSync.get(key) ?? ready;

    const decision = applyDeploymentStrategy(
      { replicas: fleetReplicas, readyReplicas: readyBefore, ...(spec.strategy && { strategy: spec.strategy }) },
      active ? setView(active) : { name: '', replicas: 0, status: NO_STATUS },
      rest.map(setView),
      { rollingUpdateFix: this.cluster.gates.RollingUpdateFix },
    );

    const events: NewEvent[] = [];
    const event = (reason: string, message: string) => events.push(this.recorder.event(fleet, { type: 'Normal', reason, message }));

    // Inactive sets: resized by the strategy, then deleted once empty.
    const working = new Map(rest.map((set) => [set.metadata.name, this.setStore()?.getByKey(objectKey(set.metadata.namespace, set.metadata.name)) ?? set]));
    for (const step of decision.restScales) {
      const current = working.get(step.name);
      if (!current) continue;
      const next = withSpec(current, { ...gameServerSetSpecOf(current), replicas: step.to });
      working.set(step.name, next);
      events.push(resourceEvent('ResourceUpdated', GAMESERVERSET_KIND, next.metadata.namespace, step.name, { object: next }));
      event('ScalingGameServerSet', `Scaling inactive GameServerSet ${step.name} from ${step.from} to ${step.to}`);
    }
    for (const set of rest) {
      const view = setView(set);
      if (view.status.replicas !== 0 || view.status.shutdownReplicas !== 0) continue;
      events.push(...this.service.deletionEvents(working.get(set.metadata.name) ?? set));
      event('DeletingGameServerSet', `Deleting inactive GameServerSet ${set.metadata.name}`);
    }

    // The active set: created when the template has none, else resized and kept in step.
    const replicas = decision.activeReplicas;
    if (replicas >= 0) {
      if (!active) {
        const created = this.service.prepareCreate(GAMESERVERSET_DEFINITION, fleet.metadata.namespace, gameServerSetOfFleet(fleet, spec, replicas));
        events.push(created.event);
        event('CreatingGameServerSet', `Created GameServerSet ${created.object.metadata.name}`);
      } else {
        const current = this.setStore()?.getByKey(objectKey(active.metadata.namespace, active.metadata.name)) ?? active;
        const setSpec = gameServerSetSpecOf(current);
        let nextSpec: GameServerSetSpec | undefined;
        if (replicas !== (setSpec.replicas ?? 0) || scheduling !== (setSpec.scheduling ?? 'Packed')) {
          nextSpec = { ...setSpec, replicas, scheduling };
          event('ScalingGameServerSet', `Scaling active GameServerSet ${current.metadata.name} from ${setSpec.replicas ?? 0} to ${replicas}`);
        }
        if (this.cluster.gates.CountsAndLists && !jsonEqual(spec.priorities, setSpec.priorities)) {
          const { priorities: _previous, ...others } = nextSpec ?? setSpec;
          nextSpec = spec.priorities ? { ...others, priorities: spec.priorities } : others;
          event('UpdatingGameServerSet', `Updated GameServerSet ${current.metadata.name} Priorities`);
        }
        if (nextSpec) {
          const next = withSpec(current, nextSpec);
          events.push(resourceEvent('ResourceUpdated', GAMESERVERSET_KIND, next.metadata.namespace, next.metadata.name, { object: next }));
        }
      }
    }
    // A negative size (more Allocated on old sets than the fleet wants) is what Agones's API
    // refuses: the active set is left as it is until that changes.

    // During a rollout, the Ready count the strategy used explains how far the old sets shrank.
    const inputs: Record<string, number> = rest.length > 0 ? { replicas: fleetReplicas, readyReplicas: readyBefore } : { replicas: fleetReplicas };
    const cause = this.syncCause(FLEET_KIND, fleet.metadata.namespace, fleet.metadata.name, trigger, inputs);
    await this.cluster.commit(events, cause);
    this.readyAtLastSync.set(key, ready);
    // Agones's status write brings the fleet back to its queue, to a sync that sees the new count
    // (which only a rollout reads).
    if (readyBefore !== ready && rest.length > 0) this.queue.add(key);
  }
}
