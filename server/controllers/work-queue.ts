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
      this.dirty.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
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
  }

  private drain(): void {
    this.drainHandle = undefined;
    const keys = [...this.waiting];
    this.waiting.clear();
    for (const key of keys) this.process(key);
  }

  private process(key: K): void {
    this.processing.add(key);
    const trigger = this.triggers.get(key);
    if (trigger) this.triggers.delete(key);
    let result: void | Promise<void>;
    try {
      result = this.handler(key, trigger);
    } catch (error) {
      this.finish(key, error, true);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        () => this.finish(key, undefined, false),
        (error: unknown) => this.finish(key, error, true),
      );
    } else {
      this.finish(key, undefined, false);
    }
  }

  private finish(key: K, error: unknown, failed: boolean): void {
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
      this.addAfter(key, count <= this.retry.fastRetries ? this.retry.fastDelayMs : this.retry.slowDelayMs);
    }
  }
}
