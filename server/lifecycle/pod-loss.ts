import type { GameServer } from '../kinds/gameserver-types.js';
import type { Cause } from '../log/cause.js';
import type { ObjectStore } from '../runtime/object-store.js';
import type { Machines, Pods } from './parts.js';

/** What a pod's loss touches: the GameServers, their machines, and what the kubelet knows of the pods. */
export interface PodLossStore extends Machines, Pods {
  readonly gameServers: ObjectStore<GameServer>;
}

/**
 * As Agones's health controller: the GameServer whose pod a client deleted (or evicted) turns
 * Unhealthy, unless it is Unhealthy or in Error already; once that is committed, the pod is gone.
 */
export async function losePod(store: PodLossStore, key: string, why: string, cause: Cause): Promise<void> {
  const gs = store.gameServers.getByKey(key);
  if (gs && gs.status.state !== 'Unhealthy' && gs.status.state !== 'Error') {
    await store.actors.sendByKey(key, { type: 'controller.unhealthy', message: `Issue with Gameserver pod: ${why}` }, cause);
  }
  store.pods.markDeleted(key);
}
