import type { Subscription } from 'rxjs';
import { objectKey } from '../kinds/meta.js';
import type { Cluster } from '../cluster.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';

/**
 * What the set, fleet and autoscaler controllers share: a work queue of `namespace/name` keys on
 * the cluster's clock, whose handler is the controller's `sync`, and the subscriptions that feed
 * it, all stopped together.
 */
export abstract class KeyedController {
  protected queue: WorkQueue<string>;
  protected readonly subscriptions: Subscription[] = [];

  constructor(
    protected readonly cluster: Cluster,
    private readonly queueOptions: WorkQueueOptions<string> = {},
  ) {
    this.queue = this.newQueue();
  }

  /** Reconciles the object named by `key` (`namespace/name`). */
  protected abstract sync(key: string): Promise<void>;

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

  /** Nothing queued, running or scheduled. */
  get idle(): boolean {
    return this.queue.idle;
  }

  /** Asks for a sync of one object (on the next turn of the clock). */
  enqueue(namespace: string, name: string): void {
    this.queue.add(objectKey(namespace, name));
  }

  private newQueue(): WorkQueue<string> {
    return new WorkQueue(this.cluster.clock, (key) => this.sync(key), this.queueOptions);
  }
}
