import type { Observable } from 'rxjs';
import type { Clock } from '../clock.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import type { ObjectChange, ObjectStore, StoreEntry } from '../runtime/object-store.js';

/** What the lifecycle runner and the health loop need of the store: read, hear, commit. */
export interface LifecycleStore {
  readonly clock: Clock;
  readonly gameServers: ObjectStore<GameServer>;
  /** GameServer changes as they are applied, so timers follow every change at once. */
  readonly gameServerApplied$: Observable<ObjectChange<GameServer>>;
  /** `entry`: the store's entry of the GameServer the events change (see `Store.commit`). */
  commit(events: readonly NewEvent[], cause?: Cause, entry?: StoreEntry<GameServer>): Promise<void>;
}
