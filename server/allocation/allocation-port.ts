import type { Observable } from 'rxjs';
import type { GameServerCommand } from '../../machines/gameserver.js';
import type { Clock, SeededRandom } from '../clock.js';
import type { FeatureGates } from '../features.js';
import type { GameServer } from '../kinds/gameserver/gameserver.js';
import type { Resource } from '../kinds/resource.js';
import type { Cause } from '../log/cause.js';
import type { ObjectChange, ObjectStore } from '../runtime/object-store.js';
import type { Projection, ProjectionDefinition } from '../runtime/projection.js';
import type { Store } from '../runtime/store.js';

/**
 * What allocation takes from the cluster: the GameServers and their changes, the allocation index
 * it registers, each GameServer's machine to commit through, the policies and Secrets of
 * multi-cluster allocation, and the clock, gates and seeded draws.
 */
export interface AllocationPort {
  readonly clock: Clock;
  readonly gates: FeatureGates;
  readonly rng: SeededRandom;
  /** The cluster's seed: the agones-batch model draws from streams of its own. */
  readonly seed: number;
  readonly gameServers: ObjectStore<GameServer>;
  readonly gameServerChanges$: Observable<ObjectChange<GameServer>>;
  readonly actors: { sendByKey(key: string, command: GameServerCommand, cause?: Cause): Promise<void> | undefined };
  readonly readModel: {
    get(kind: string, namespace: string, name: string): Resource | undefined;
    list(kind: string, namespace?: string): Resource[];
  };
  use<P extends Projection>(definition: ProjectionDefinition<P, Store>): P;
  /** Runs `read` once everything applied so far is durable: an answer resting on it may then be given. */
  readCommitted<T>(read: () => T): Promise<T>;
}
