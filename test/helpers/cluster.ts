import type { Cluster } from '../../server/cluster.js';
import type { VirtualClock } from '../../server/clock.js';

/** Lets an in-process cluster on a virtual clock run what is due now: ten rounds of timers and callbacks. */
export function settler(clock: VirtualClock): () => Promise<void> {
  return async () => {
    for (let i = 0; i < 10; i++) {
      clock.advance(0);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

/** Settles, marks `gs-0` … `gs-<count-1>` in namespace default Ready through their SDK, settles again. */
export async function readyGameServers(cluster: Cluster, settle: () => Promise<void>, count: number): Promise<void> {
  await settle();
  for (let i = 0; i < count; i++) await cluster.actors.send('default', `gs-${i}`, { type: 'sdk.ready' });
  await settle();
}
