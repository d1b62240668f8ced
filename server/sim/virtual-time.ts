import type { VirtualClock } from '../clock.js';

/** Lets the event loop run what is queued (commits, their notifications, the work they cause). */
export const flush = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Events appended and not committed yet: the log's group commit runs at the loop's next turn (EventLog). */
export interface PendingCommits {
  readonly hasPending: boolean;
}

/**
 * Rounds of timers one instant may fire before time moves on anyway: a controller that requeues
 * itself at once (a set waiting on more than maxPodPending pending pods) would never let it end.
 */
export const MAX_ROUNDS_PER_INSTANT = 100;
/** Turns of the loop with commits still queued that one instant may take (each commit may cause another). */
const MAX_TURNS_PER_INSTANT = 10 * MAX_ROUNDS_PER_INSTANT;
/**
 * Real time that work in flight (a FleetAutoscaler's webhook call) may hold an instant. Past it,
 * time moves on without it: the work may be waiting on a later virtual timer (its own timeout).
 */
export const IN_FLIGHT_GRACE_MS = 2_000;

/** Why time moved on from an instant before its work was done. */
export type Unsettled = 'requeued' | 'in flight';

/**
 * Runs what is due at the current virtual instant before time moves on, as a discrete-event
 * simulation does: the timers due, the commits they cause until they are durable, the work those
 * trigger (zero-delay timers: work queues draining), and the work tracked on the clock until it
 * ends. Returns undefined once nothing is left at this instant, or why it stopped short (see
 * MAX_ROUNDS_PER_INSTANT and IN_FLIGHT_GRACE_MS).
 */
export async function settle(clock: VirtualClock, commits?: PendingCommits): Promise<Unsettled | undefined> {
  let stopped: Unsettled | undefined;
  let rounds = 0;
  let turns = 0;
  for (;;) {
    await flush();
    if (commits?.hasPending) {
      if (++turns > MAX_TURNS_PER_INSTANT) return 'requeued';
      continue;
    }
    const due = clock.nextDue();
    if (due !== undefined && due <= clock.now()) {
      if (++rounds > MAX_ROUNDS_PER_INSTANT) return 'requeued';
      clock.advance(0);
      continue;
    }
    const working = clock.inFlight;
    if (working.length === 0) return stopped;
    if (!(await endsWithin(working, IN_FLIGHT_GRACE_MS))) {
      clock.letGo();
      stopped = 'in flight';
    }
  }
}

/** Whether all of `work` ends within `ms` of real time. */
function endsWithin(work: Promise<unknown>[], ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void Promise.allSettled(work).then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface Advance {
  /** Timers fired on the way. */
  timersFired: number;
  /** Instants time moved on from before their work was done, in time order. */
  unsettled: Array<{ at: number; why: Unsettled }>;
}

export interface AdvanceOptions {
  /**
   * 0 (the default): every instant a timer is due settles before time moves on, as on the real
   * clock. Longer: timers still fire at their instants, but the work they cause settles only at
   * the end of each step of this length (what-if runs of days, `simulate`'s `step`).
   */
  stepMs?: number;
  /** Stops between instants (the server is closing); time stays where it got to. */
  signal?: AbortSignal;
}

/**
 * Moves the virtual clock to `targetMs` the way the real clock gets there: each instant a timer is
 * due, in time order, fires what is due and settles (see `settle`) — so the controllers' work and
 * the timers it sets within the window happen in it too — and time ends at `targetMs`.
 */
export async function advanceTo(clock: VirtualClock, commits: PendingCommits, targetMs: number, options: AdvanceOptions = {}): Promise<Advance> {
  const { stepMs = 0, signal } = options;
  const firedBefore = clock.fired;
  const unsettled: Advance['unsettled'] = [];
  // Whether the last instant was left with work requeued at it: the next is the first later one.
  let cutShort = false;
  const settleHere = async () => {
    const why = await settle(clock, commits);
    if (why) unsettled.push({ at: clock.now(), why });
    cutShort = why === 'requeued';
  };
  // Work asked for since time last moved (a request's commit, a work queue's zero-delay drain) comes first.
  const dueNow = clock.nextDue();
  if (commits.hasPending || clock.inFlight.length > 0 || (dueNow !== undefined && dueNow <= clock.now())) await settleHere();
  while (!signal?.aborted) {
    const due = cutShort ? clock.nextDueAfter(clock.now()) : clock.nextDue();
    if (due === undefined || due > targetMs) break;
    clock.advanceTo(Math.min(targetMs, Math.max(due, clock.now() + stepMs)));
    await settleHere();
  }
  if (!signal?.aborted) clock.advanceTo(targetMs);
  return { timersFired: clock.fired - firedBefore, unsettled };
}
