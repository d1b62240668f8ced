import type { Subscription } from 'rxjs';
import { objectKey } from '../kinds/meta.js';
import type { ControllerStore } from './ports.js';
import { type Cause, syncCause } from '../log/cause.js';
import { type Trigger, WorkQueue, type WorkQueueObserver, type WorkQueueOptions } from './work-queue.js';

/**
 * What the set, fleet and autoscaler controllers share: a work queue of `namespace/name` keys on
 * the cluster's clock, whose handler is the controller's `sync`, and the subscriptions that feed
 * it, all stopped together.
 */
export abstract class KeyedController<Port extends ControllerStore = ControllerStore> {
  protected queue: WorkQueue<string>;
  protected readonly subscriptions: Subscription[] = [];
  private queueObserver: WorkQueueObserver | undefined;

  constructor(
    protected readonly cluster: Port,
    private readonly queueOptions: WorkQueueOptions<string> = {},
  ) {
    this.queue = this.newQueue();
  }

  /**
   * Reconciles the object named by `key` (`namespace/name`); `trigger` is the event that queued
   * it, if one did (see `syncCause`).
   */
  protected abstract sync(key: string, trigger: Trigger | undefined): Promise<void>;

  /** What a sync commits is caused by: this controller reconciling `object`, after `trigger`. */
  protected syncCause(kind: string, namespace: string, name: string, trigger: Trigger | undefined, inputs?: Record<string, number | string | boolean>): Cause {
    return syncCause(kind, namespace, name, trigger?.seq, inputs);
  }

  /** A fresh queue, for a controller started again: what the stopped one held is dropped. */
  protected renewQueue(): void {
    this.queue.shutDown();
    this.queue = this.newQueue();
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
    this.queue.shutDown();
  }

  /** Tells `observer` of the queue's work from now on (and of the queues of later starts). */
  observeQueue(observer: WorkQueueObserver): void {
    this.queueObserver = observer;
    this.queue.observer = observer;
  }

  /** Started and not stopped: what Agones's liveness check of a controller's work queue reports. */
  get running(): boolean {
    return this.subscriptions.length > 0;
  }

  /** Nothing queued, running or scheduled. */
  get idle(): boolean {
    return this.queue.idle;
  }

  /** Asks for a sync of one object (on the next turn of the clock). */
  enqueue(namespace: string, name: string, seq?: number): void {
    this.queue.add(objectKey(namespace, name), seq, true);
  }

  private newQueue(): WorkQueue<string> {
    const queue = new WorkQueue(this.cluster.clock, (key, trigger) => this.sync(key, trigger), this.queueOptions);
    queue.observer = this.queueObserver;
    return queue;
  }
}
