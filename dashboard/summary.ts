/**
 * The dashboard's view of a cluster: GameServers counted by fleet, set, node and state, with the
 * fleets', sets' and autoscalers' own figures. One function makes it from resource-API objects,
 * used by the page for the live cluster (objects from its watches) and by the server for a past
 * one (a read model replayed from the log), so both views count alike. No imports: it runs in
 * the browser and in Node.
 */

/** The object fields the summary reads, as the resource API serves them. */
interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}

export interface GameServerInput {
  metadata: Meta;
  status?: { state?: string; nodeName?: string };
}

export interface ReplicatedInput {
  metadata: Meta;
  spec?: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; allocatedReplicas?: number; reservedReplicas?: number };
}

export interface NodeInput {
  metadata: Meta;
  status?: { allocatable?: { pods?: string | number } };
}

export interface AutoscalerInput {
  metadata: Meta;
  spec?: { fleetName?: string; policy?: { type?: string } };
  status?: { currentReplicas?: number; desiredReplicas?: number; lastScaleTime?: string | null; ableToScale?: boolean; scalingLimited?: boolean };
}

export interface ClusterInput {
  gameServers: Iterable<GameServerInput>;
  fleets: Iterable<ReplicatedInput>;
  gameServerSets: Iterable<ReplicatedInput>;
  nodes: Iterable<NodeInput>;
  autoscalers: Iterable<AutoscalerInput>;
}

/** GameServers by state (only states some GameServer is in). */
export type StateCounts = Record<string, number>;

export interface Tally {
  total: number;
  states: StateCounts;
}

export interface ReplicatedRow extends Tally {
  namespace: string;
  name: string;
  /** spec.replicas: what was asked. */
  desired: number;
  /** status.replicas, readyReplicas, allocatedReplicas, reservedReplicas as the object reports them. */
  replicas: number;
  ready: number;
  allocated: number;
  reserved: number;
}

export interface SetRow extends ReplicatedRow {
  /** The fleet that owns the set, if any. */
  fleet: string | undefined;
}

export interface NodeRow extends Tally {
  name: string;
  /** Pods the node takes (status.allocatable.pods). */
  capacity: number;
}

export interface AutoscalerRow {
  namespace: string;
  name: string;
  fleet: string;
  policy: string;
  current: number;
  desired: number;
  lastScaleTime: string | undefined;
  ableToScale: boolean;
  scalingLimited: boolean;
}

export interface ClusterSummary {
  gameServers: Tally;
  fleets: ReplicatedRow[];
  sets: SetRow[];
  /** GameServers no set owns. */
  standalone: Tally;
  nodes: NodeRow[];
  /** GameServers not on a node yet. */
  unscheduled: Tally;
  autoscalers: AutoscalerRow[];
}

const SET_LABEL = 'agones.dev/gameserverset';
const FLEET_LABEL = 'agones.dev/fleet';

const tally = (): Tally => ({ total: 0, states: {} });

function count(into: Tally, state: string): void {
  into.total++;
  into.states[state] = (into.states[state] ?? 0) + 1;
}

const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

const byName = <T extends { namespace?: string; name: string }>(a: T, b: T) =>
  keyOf(a.namespace, a.name) < keyOf(b.namespace, b.name) ? -1 : keyOf(a.namespace, a.name) > keyOf(b.namespace, b.name) ? 1 : 0;

function replicated(object: ReplicatedInput): ReplicatedRow {
  const status = object.status ?? {};
  return {
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    desired: object.spec?.replicas ?? 0,
    replicas: status.replicas ?? 0,
    ready: status.readyReplicas ?? 0,
    allocated: status.allocatedReplicas ?? 0,
    reserved: status.reservedReplicas ?? 0,
    ...tally(),
  };
}

/** Counts the GameServers once, by set, fleet, node and state; O(GameServers + other objects). */
export function summarize(input: ClusterInput): ClusterSummary {
  const fleets = new Map<string, ReplicatedRow>();
  for (const fleet of input.fleets) fleets.set(keyOf(fleet.metadata.namespace, fleet.metadata.name), replicated(fleet));
  const sets = new Map<string, SetRow>();
  for (const set of input.gameServerSets) {
    sets.set(keyOf(set.metadata.namespace, set.metadata.name), { ...replicated(set), fleet: set.metadata.labels?.[FLEET_LABEL] });
  }
  const nodes = new Map<string, NodeRow>();
  for (const node of input.nodes) {
    const pods = Number(node.status?.allocatable?.pods ?? 0);
    nodes.set(node.metadata.name, { name: node.metadata.name, capacity: Number.isFinite(pods) ? pods : 0, ...tally() });
  }
  const all = tally();
  const standalone = tally();
  const unscheduled = tally();
  for (const gs of input.gameServers) {
    const state = gs.status?.state || 'Unknown';
    const namespace = gs.metadata.namespace;
    const labels = gs.metadata.labels ?? {};
    count(all, state);
    const setName = labels[SET_LABEL];
    const set = setName === undefined ? undefined : sets.get(keyOf(namespace, setName));
    if (set) count(set, state);
    else count(standalone, state);
    const fleetName = labels[FLEET_LABEL];
    const fleet = fleetName === undefined ? undefined : fleets.get(keyOf(namespace, fleetName));
    if (fleet) count(fleet, state);
    const nodeName = gs.status?.nodeName;
    if (!nodeName) count(unscheduled, state);
    else {
      let node = nodes.get(nodeName);
      if (!node) nodes.set(nodeName, (node = { name: nodeName, capacity: 0, ...tally() }));
      count(node, state);
    }
  }
  const autoscalers: AutoscalerRow[] = [];
  for (const fas of input.autoscalers) {
    const status = fas.status ?? {};
    autoscalers.push({
      namespace: fas.metadata.namespace ?? '',
      name: fas.metadata.name,
      fleet: fas.spec?.fleetName ?? '',
      policy: fas.spec?.policy?.type ?? '',
      current: status.currentReplicas ?? 0,
      desired: status.desiredReplicas ?? 0,
      lastScaleTime: status.lastScaleTime ?? undefined,
      ableToScale: status.ableToScale ?? false,
      scalingLimited: status.scalingLimited ?? false,
    });
  }
  return {
    gameServers: all,
    fleets: [...fleets.values()].sort(byName),
    sets: [...sets.values()].sort(byName),
    standalone,
    nodes: [...nodes.values()].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true })),
    unscheduled,
    autoscalers: autoscalers.sort(byName),
  };
}
