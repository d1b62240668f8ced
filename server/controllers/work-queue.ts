import type { Clock, TimerHandle } from '../clock.js';

/** Retry delays after a failed sync, as Agones's controllers rate-limit their queues. */
export interface RetryPolicy {
  /** Failures retried after `fastDelayMs`; later ones wait `slowDelayMs`. */
  fastRetries: number;
  fastDelayMs: number;
  slowDelayMs: number;
}

/** Fleet, GameServerSet and FleetAutoscaler controllers: 5 × 200 ms, then 3 s. */
export const CONTROLLER_RETRY: RetryPolicy = { fastRetries: 5, fastDelayMs: 200, slowDelayMs: 3000 };

export interface WorkQueueOptions<K> {
  /** Retry of a key whose handler threw or rejected; `false` drops it. */
  retry?: RetryPolicy | false;
  /** Told of every failure (the key is retried according to `retry` regardless). */
  onError?: (key: K, error: unknown) => void;
}

/**
 * The event that queued a key (its sequence number), handed to the handler so what the sync
 * commits can name it as its cause. `own` marks a change of the reconciled object itself, which
 * explains a sync better than a change of one of its dependents and so takes precedence.
 */
export interface Trigger {
  seq: number;
  own: boolean;
}

export type WorkHandler<K> = (key: K, trigger: Trigger | undefined) => void | Promise<void>;

/**
 * Told of a queue's work, as client-go's work-queue metrics count it (Agones's
 * `agones_k8s_client_workqueue_*`). A queue without one does none of this bookkeeping.
 */
export interface WorkQueueObserver {
  /** A key was queued that was not waiting already (one added while its handler runs counts). */
  added(): void;
  /** Keys now waiting to be processed (those added while their handler runs included). */
  depth(waiting: number): void;
  /** A key's handler starts, the key having waited `waitedMs` on the queue's clock since it was added. */
  started(waitedMs: number): void;
  /** A key's handler ended (its promise settled) after `workedMs` of real time. */
  finished(workedMs: number): void;
  /** A key whose handler failed was queued again after its retry delay. */
  retried(): void;
}

/**
 * A keyed work queue on the cluster's clock, the way Kubernetes controllers queue work:
 * a key waiting to be processed is held once however often it is added; a key added while its
 * handler runs is processed again once that run ends (never twice at the same time); different
 * keys are processed independently. Draining happens on a zero-delay timer of the injected
 * clock, so on a virtual clock nothing runs until time is advanced.
 */
export class WorkQueue<K = string> {
  private readonly waiting = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly dirty = new Set<K>();
  private readonly delayed = new Map<K, { handle: TimerHandle; due: number }>();
  private readonly failures = new Map<K, number>();
  /** The trigger of each key until its next run starts (for a key added while it runs: the run after). */
  private readonly triggers = new Map<K, Trigger>();
  private drainHandle: TimerHandle | undefined;
  private stopped = false;
  private readonly retry: RetryPolicy | false;
  /** Metrics' observer (none: no bookkeeping); `addedAt` holds when each waiting key was added. */
  observer: WorkQueueObserver | undefined;
  private readonly addedAt = new Map<K, number>();

  constructor(
    private readonly clock: Clock,
    private readonly handler: WorkHandler<K>,
    private readonly options: WorkQueueOptions<K> = {},
  ) {
    this.retry = options.retry ?? CONTROLLER_RETRY;
  }

  /**
   * Queues a key for the next drain (no-op when it is already waiting). `seq` is the event that
   * asked for it, `own` whether that event changed the keyed object itself; the first such event
   * is kept, unless a later one is the object's own and the first was not.
   */
  add(key: K, seq?: number, own = false): void {
    if (this.stopped) return;
    if (seq !== undefined) {
      const known = this.triggers.get(key);
      if (!known || (own && !known.own)) this.triggers.set(key, { seq, own });
    }
    if (this.processing.has(key)) {
      if (this.observer && !this.dirty.has(key)) this.observeAdd(key);
      this.dirty.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
    if (this.observer && !this.addedAt.has(key)) this.observeAdd(key);
    this.waiting.add(key);
    if (this.drainHandle === undefined) this.drainHandle = this.clock.setTimeout(() => this.drain(), 0);
  }

  /** Queues a key once `ms` have passed on the clock; of several delayed adds the earliest wins. */
  addAfter(key: K, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const due = this.clock.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.due <= due) return;
    if (existing) this.clock.clearTimeout(existing.handle);
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { handle, due });
  }

  /** Keys waiting (not counting delayed ones or those being processed). */
  get length(): number {
    return this.waiting.size;
  }

  /** True when nothing waits, runs or is scheduled for later. */
  get idle(): boolean {
    return this.waiting.size === 0 && this.processing.size === 0 && this.delayed.size === 0;
  }

  /** Stops processing: waiting and delayed keys are dropped, running handlers finish. */
  shutDown(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.drainHandle);
    this.drainHandle = undefined;
    for (const { handle } of this.delayed.values()) this.clock.clearTimeout(handle);
    this.delayed.clear();
    this.waiting.clear();
    this.dirty.clear();
    this.triggers.clear();
    this.addedAt.clear();
    this.observer?.depth(0);
  }

  /** A key counted as added (client-go counts an add once until the key is processed); it is about to wait. */
  private observeAdd(key: K): void {
    this.addedAt.set(key, this.clock.now());
    this.observer!.added();
    this.observer!.depth(this.waiting.size + this.dirty.size + 1);
  }

  private drain(): void {
    this.drainHandle = undefined;
    const keys = [...this.waiting];
    this.waiting.clear();
    this.observer?.depth(this.dirty.size);
    for (const key of keys) this.process(key);
  }

  private process(key: K): void {
    this.processing.add(key);
    const trigger = this.triggers.get(key);
    if (trigger) this.triggers.delete(key);
    const observer = this.observer;
    let begun = 0;
    if (observer) {
      const added = this.addedAt.get(key);
      this.addedAt.delete(key);
      observer.started(added === undefined ? 0 : this.clock.now() - added);
      begun = performance.now();
    }
    let result: void | Promise<void>;
    try {
      result = this.handler(key, trigger);
    } catch (error) {
      this.finish(key, error, true, begun);
      return;
    }
    if (result instanceof Promise) {
      this.clock.track?.(result);
      result.then(
        () => this.finish(key, undefined, false, begun),
        (error: unknown) => this.finish(key, error, true, begun),
      );
    } else {
      this.finish(key, undefined, false, begun);
    }
  }

  private finish(key: K, error: unknown, failed: boolean, begun = 0): void {
    if (begun > 0) this.observer?.finished(performance.now() - begun);
    this.processing.delete(key);
    const again = this.dirty.delete(key);
    if (this.stopped) return;
    if (!failed) {
      this.failures.delete(key);
      if (again) this.add(key);
      return;
    }
    this.options.onError?.(key, error);
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    if (again) this.add(key);
    else if (this.retry) {
      this.observer?.retried();
      this.addAfter(key, count <= this.retry.fastRetries ? this.retry.fastDelayMs : this.retry.slowDelayMs);
    }
  }
}
