import client from 'prom-client';
import { FLEET_KIND, FLEET_LABEL } from '../kinds/fleet/fleet.js';
import type { FleetAutoscalerSpec, FleetAutoscalerStatus } from '../kinds/fleetautoscaler/fleetautoscaler.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { Resource } from '../kinds/resource.js';
import type { MetricsCluster } from './port.js';

/*
 * Agones's gauges, read from the read model when scraped (nothing is kept between scrapes):
 * GameServers per state, fleets' replicas, rollouts, counters and lists, autoscalers, nodes and
 * the GameServers on them, players.
 */

/** Agones's buckets for GameServers per node (just above each whole number). */
const NODE_COUNT_BUCKETS = [...[...Array(17).keys()], 32, 40, 50, 60, 70, 80, 90, 100, 110, 120].map((n) => n + 0.00001);

interface FleetStatusFields {
  replicas?: number;
  readyReplicas?: number;
  reservedReplicas?: number;
  allocatedReplicas?: number;
  counters?: Record<string, AggregatedCount>;
  lists?: Record<string, AggregatedCount>;
}
interface AggregatedCount {
  allocatedCount?: number | bigint;
  allocatedCapacity?: number | bigint;
  count?: number | bigint;
  capacity?: number | bigint;
}

/** The `fleet_name` label of a GameServer's series, as Agones gives it (`none` outside a fleet). */
export function fleetOf(gs: GameServer): string {
  return gs.metadata.labels[FLEET_LABEL] ?? 'none';
}

/** Registers the gauges in `registers`; prom-client calls each one's `collect` with the metric as `this`, so the cluster is reached by closure. */
export function registerScrapedGauges(cluster: MetricsCluster, registers: client.Registry[]): void {
  new client.Gauge({
    name: 'agones_gameservers_count',
    help: 'The number of gameservers per fleet and status',
    labelNames: ['type', 'fleet_name', 'namespace'],
    registers,
    collect() {
      this.reset();
      const counts = new Map<string, { labels: Record<string, string>; n: number }>();
      for (const gs of cluster.gameServers.values()) {
        const labels = { type: gs.status.state, fleet_name: fleetOf(gs), namespace: gs.metadata.namespace };
        const key = `${labels.type}\0${labels.fleet_name}\0${labels.namespace}`;
        const entry = counts.get(key);
        if (entry) entry.n++;
        else counts.set(key, { labels, n: 1 });
      }
      for (const { labels, n } of counts.values()) this.set(labels, n);
    },
  });
  new client.Gauge({
    name: 'agones_fleets_replicas_count',
    help: 'The number of replicas per fleet (total, desired, ready, reserved, allocated)',
    labelNames: ['name', 'type', 'namespace'],
    registers,
    collect() {
      this.reset();
      for (const fleet of cluster.readModel.list(FLEET_KIND)) {
        const status = (fleet.status ?? {}) as FleetStatusFields;
        const labels = (type: string) => ({ name: fleet.metadata.name, type, namespace: fleet.metadata.namespace });
        this.set(labels('total'), status.replicas ?? 0);
        this.set(labels('allocated'), status.allocatedReplicas ?? 0);
        this.set(labels('ready'), status.readyReplicas ?? 0);
        this.set(labels('desired'), (fleet.spec as { replicas?: number }).replicas ?? 0);
        this.set(labels('reserved'), status.reservedReplicas ?? 0);
      }
    },
  });
  new client.Gauge({
    name: 'agones_fleet_rollout_percent',
    help: 'The current fleet rollout percentage',
    labelNames: ['name', 'type', 'namespace'],
    registers,
    collect() {
      this.reset();
      for (const fleet of cluster.readModel.list(FLEET_KIND)) {
        const { name, namespace } = fleet.metadata;
        const sets = cluster.readModel.list('GameServerSet', namespace).filter((s) => s.metadata.labels[FLEET_LABEL] === name);
        // The active set is the newest one (a rolling update's target).
        const active = sets.sort((a, b) => (a.metadata.creationTimestamp < b.metadata.creationTimestamp ? 1 : -1))[0];
        this.set({ name, type: 'current_replicas', namespace }, (active?.status as { replicas?: number } | undefined)?.replicas ?? 0);
        this.set({ name, type: 'desired_replicas', namespace }, (fleet.spec as { replicas?: number }).replicas ?? 0);
      }
    },
  });
  for (const [metric, field, help] of [
    ['agones_fleet_counters', 'counters', 'Aggregated Counters counts and capacity across GameServers in the Fleet'],
    ['agones_fleet_lists', 'lists', 'Aggregated Lists counts and capacity across GameServers in the Fleet'],
  ] as const) {
    const key = field === 'counters' ? 'counter' : 'list';
    new client.Gauge({
      name: metric,
      help,
      labelNames: ['name', 'namespace', 'type', key],
      registers,
      collect() {
        this.reset();
        for (const fleet of cluster.readModel.list(FLEET_KIND)) {
          const aggregated = ((fleet.status ?? {}) as FleetStatusFields)[field] ?? {};
          for (const [item, values] of Object.entries(aggregated)) {
            const labels = (type: string) => ({ name: fleet.metadata.name, namespace: fleet.metadata.namespace, type, [key]: item });
            this.set(labels('allocated_count'), Number(values.allocatedCount ?? 0));
            this.set(labels('allocated_capacity'), Number(values.allocatedCapacity ?? 0));
            this.set(labels('total_count'), Number(values.count ?? 0));
            this.set(labels('total_capacity'), Number(values.capacity ?? 0));
          }
        }
      },
    });
  }
  autoscalerGauges(cluster, registers);
  new client.Gauge({
    name: 'agones_nodes_count',
    help: 'The count of nodes in the cluster',
    labelNames: ['empty'],
    registers,
    collect() {
      const counts = gameServersPerNode(cluster);
      const empty = [...counts.values()].filter((n) => n === 0).length;
      this.set({ empty: 'true' }, empty);
      this.set({ empty: 'false' }, counts.size - empty);
    },
  });
  new client.Histogram({
    name: 'agones_gameservers_node_count',
    help: 'The count of gameservers per node in the cluster',
    buckets: NODE_COUNT_BUCKETS,
    registers,
    collect() {
      // A distribution of the nodes as they are now, as Agones records it on each resync.
      this.reset();
      for (const n of gameServersPerNode(cluster).values()) this.observe(n);
    },
  });
  for (const [metric, help, value] of [
    ['agones_gameserver_player_connected_total', 'The total number of players connected to gameservers', (gs: GameServer) => gs.status.players?.count],
    ['agones_gameserver_player_capacity_total', 'The available player capacity for gameservers', (gs: GameServer) => gs.status.players?.capacity],
  ] as const) {
    new client.Gauge({
      name: metric,
      help,
      labelNames: ['fleet_name', 'name', 'namespace'],
      registers,
      collect() {
        this.reset();
        if (!cluster.gates.PlayerTracking) return;
        for (const gs of cluster.gameServers.values()) {
          const n = value(gs);
          if (n !== undefined) this.set({ fleet_name: fleetOf(gs), name: gs.metadata.name, namespace: gs.metadata.namespace }, Number(n));
        }
      },
    });
  }
}

function autoscalerGauges(cluster: MetricsCluster, registers: client.Registry[]): void {
  const autoscalers = () => cluster.readModel.list('FleetAutoscaler');
  const specOf = (fas: Resource) => (fas.spec ?? {}) as FleetAutoscalerSpec;
  const labelsOf = (fas: Resource) => ({ name: fas.metadata.name, fleet_name: specOf(fas).fleetName ?? '', namespace: fas.metadata.namespace });
  const status = (fas: Resource) => (fas.status ?? {}) as Partial<FleetAutoscalerStatus>;
  const gauge = (name: string, help: string, value: (fas: Resource) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['name', 'fleet_name', 'namespace'],
      registers,
      collect() {
        this.reset();
        for (const fas of autoscalers()) this.set(labelsOf(fas), value(fas));
      },
    });
  gauge('agones_fleet_autoscalers_able_to_scale', 'The fleet autoscaler can access the fleet to scale', (fas) => Number(status(fas).ableToScale ?? false));
  gauge('agones_fleet_autoscalers_limited', 'The fleet autoscaler is outside the limits set by MinReplicas and MaxReplicas.', (fas) =>
    Number(status(fas).scalingLimited ?? false),
  );
  gauge('agones_fleet_autoscalers_current_replicas_count', 'The current replicas count as seen by autoscalers', (fas) => status(fas).currentReplicas ?? 0);
  gauge('agones_fleet_autoscalers_desired_replicas_count', 'The desired replicas count as seen by autoscalers', (fas) => status(fas).desiredReplicas ?? 0);
  const buffer = (fas: Resource) => (specOf(fas).policy?.type === 'Buffer' ? specOf(fas).policy?.buffer : undefined);
  new client.Gauge({
    name: 'agones_fleet_autoscalers_buffer_limits',
    help: 'The limits of buffer based fleet autoscalers',
    labelNames: ['name', 'type', 'fleet_name', 'namespace'],
    registers,
    collect() {
      this.reset();
      for (const fas of autoscalers()) {
        const b = buffer(fas);
        if (!b) continue;
        this.set({ ...labelsOf(fas), type: 'max' }, b.maxReplicas ?? 0);
        this.set({ ...labelsOf(fas), type: 'min' }, b.minReplicas ?? 0);
      }
    },
  });
  new client.Gauge({
    name: 'agones_fleet_autoscalers_buffer_size',
    help: 'The buffer size value of autoscalers',
    labelNames: ['name', 'type', 'fleet_name', 'namespace'],
    registers,
    collect() {
      this.reset();
      for (const fas of autoscalers()) {
        const size = buffer(fas)?.bufferSize;
        if (size === undefined) continue;
        // A percentage is recorded as its number, typed `percentage`; a count as `count`.
        if (typeof size === 'string' && size.endsWith('%')) this.set({ ...labelsOf(fas), type: 'percentage' }, Number(size.slice(0, -1)));
        else this.set({ ...labelsOf(fas), type: 'count' }, Number(size));
      }
    },
  });
}

/** GameServers scheduled on each node (every node, including empty ones), from the node counter. */
function gameServersPerNode(cluster: MetricsCluster): Map<string, number> {
  const perNode = new Map<string, number>();
  for (const node of cluster.readModel.list('Node')) perNode.set(node.metadata.name, cluster.nodes.gameServersOn(node.metadata.name));
  return perNode;
}
