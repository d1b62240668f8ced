import { ALLOCATION_INDEX } from '../allocation/allocation-index.js';
import { NODE_COUNTER } from '../runtime/node-counter.js';
import type { Projection, ProjectionDefinition } from '../runtime/projection.js';
import type { Store } from '../runtime/store.js';
import { FLEET_DELETION_INDEX } from './fleet-deletion-index.js';
import { GAMESERVERSET_INDEX } from './gameserverset-controller.js';

/**
 * Every projection registered with the store, in the order each hears a change: what keeps a
 * view of a GameServer turning Ready. The store registers the node counter itself, first, as the
 * others read it; each other one is registered the first time its reader asks for it (a cluster
 * with no allocator keeps no allocation index) and shared from then on.
 *
 * - `node-counter` (runtime/node-counter.ts): Ready, Allocated and all GameServers per node; read
 *   by every index below, the scheduler (GameServerController) and the metrics.
 * - `allocation-index` (allocation/allocation-index.ts): Ready (and Allocated) candidates by
 *   label and node, in Packed order; the allocator's.
 * - `gameserverset-index` (controllers/gameserverset-controller.ts): each set's members and counts.
 * - `fleet-deletion-index` (controllers/fleet-deletion-index.ts): each fleet's members by node,
 *   with counter and list totals; a Counter or List autoscaler's, from its first scale-down.
 *
 * What then reacts to the change subscribes to the store's change feeds and reads these: as it
 * is applied, the lifecycle timers (lifecycle/gameserver-actors.ts), the health loop
 * (lifecycle/health-monitor.ts), the scheduler and its queue (gameserver-controller.ts), Event
 * expiry (k8s-events.ts); once it is durable, the set controller's queue, the processes
 * (gameserver-processes.ts, sim/processes.ts), the metrics' tallies, the agones-batch model's
 * lagging watch, and the watches of the API and the sidecars.
 */
export const PROJECTIONS: ReadonlyArray<ProjectionDefinition<Projection, Store>> = [
  { name: NODE_COUNTER, create: (store) => store.nodes },
  ALLOCATION_INDEX,
  GAMESERVERSET_INDEX,
  FLEET_DELETION_INDEX,
];

/** Registers every projection of the list that is not registered yet (a replay's store, a test). */
export function registerProjections(store: Store): Projection[] {
  return PROJECTIONS.map((definition) => store.use(definition));
}
