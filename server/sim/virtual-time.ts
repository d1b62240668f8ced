import type { VirtualClock } from '../clock.js';

/** Lets the event loop run what is queued (commits, their notifications, the work they cause). */
export const flush = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs what is due at the current virtual instant (timers, the commits they cause, the work
 * those trigger) before time moves on, as a discrete-event simulation does — up to a bound, as
 * a controller that requeues itself at once (a set waiting on pending pods) would never let it.
 */
export async function settle(clock: VirtualClock): Promise<void> {
  await flush();
  for (let i = 0; i < 100; i++) {
    const due = clock.nextDue();
    if (due === undefined || due > clock.now()) return;
    clock.advance(0);
    await flush();
  }
}
