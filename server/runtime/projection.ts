import type { GameServer } from '../kinds/gameserver-types.js';
import type { StoredEvent } from '../log/event-log.js';
import type { ObjectChange } from './object-store.js';
import type { ReadModel } from './read-model.js';

/**
 * A view kept of the store's changes (an index, a count), registered with the store under its
 * name. The store hands it every change as it is applied, in registration order and before any
 * subscriber of the change feeds hears of it, so a decision made in reaction to a change reads
 * projections that already hold it. Like the read model, a projection is a fold of the log: built
 * again from the read model of a replay, it must hold what the live one holds.
 */
export interface Projection {
  readonly name: string;
  /** One GameServer change, as it is applied (before it is durable: deciders read it at once). */
  gameServerApplied?(change: ObjectChange<GameServer>): void;
  /** One event of any other kind, as it is applied. */
  eventApplied?(event: StoredEvent): void;
  /** Forgets what it kept and folds in the read model's current state (at registration). */
  rebuild(model: ReadModel): void;
  /**
   * What it keeps, as plain data in an order of its own (not the order changes came in): a
   * projection rebuilt from a replay of the log gives an equal snapshot.
   */
  snapshot(): unknown;
  close?(): void;
}

/** How to make a projection of a store, and the name it is registered (and shared) under. */
export interface ProjectionDefinition<P extends Projection, S> {
  readonly name: string;
  create(store: S): P;
}
