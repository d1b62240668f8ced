import type { StoredEvent } from '../log/event-log.js';
import { GAMESERVER_KIND, type GameServer, evolveGameServer } from '../kinds/gameserver.js';
import { ObjectStore } from './object-store.js';

/**
 * Every projection of the log, in one place: the live cluster and `fleetsim replay` fold
 * events through the same reducers, so a replay rebuilds exactly the live state.
 */
export class ReadModel {
  readonly gameServers = new ObjectStore<GameServer>(GAMESERVER_KIND, evolveGameServer);
  /** Sequence number of the last event applied. */
  lastSeq = 0;

  apply(event: StoredEvent): void {
    this.lastSeq = event.seq;
    if (event.kind === GAMESERVER_KIND) this.gameServers.apply(event);
  }
}
