import type { Change, WatchEventType } from './read-model.js';

/**
 * The last `capacity` committed changes, for watches that resume from a resourceVersion
 * (Kubernetes's watch cache window). Kept as columns in a ring rather than as the Change objects:
 * a change stays here for a hundred thousand more, so each object outlived the young generation
 * and was promoted, a fifth of what an allocation left to the old generation's collector. A
 * resumed watch gets its changes made again.
 */
export class WatchWindow {
  private readonly kind: string[] = [];
  private readonly namespace: string[] = [];
  private readonly name: string[] = [];
  private readonly seq: number[] = [];
  private readonly type: WatchEventType[] = [];
  private readonly last: unknown[] = [];
  private readonly derived: boolean[] = [];
  /** Where the next change goes once the ring is full (the oldest). */
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(change: Change): void {
    // Filled by appending, so the columns grow with use (a sidecar's window stays small).
    const i = this.seq.length < this.capacity ? this.seq.length : this.next;
    this.kind[i] = change.kind;
    this.namespace[i] = change.namespace;
    this.name[i] = change.name;
    this.seq[i] = change.seq;
    this.type[i] = change.type;
    this.last[i] = change.last;
    this.derived[i] = change.derived === true;
    if (this.seq.length === this.capacity) this.next = (i + 1) % this.capacity;
  }

  /** Sequence number of the oldest change kept; undefined when none is. */
  get oldestSeq(): number | undefined {
    return this.seq.length === 0 ? undefined : this.seq[this.seq.length < this.capacity ? 0 : this.next];
  }

  /** The changes of one kind after `fromSeq`, oldest first. */
  *since(fromSeq: number, kind: string): Generator<Change> {
    const size = this.seq.length;
    const first = size < this.capacity ? 0 : this.next;
    for (let n = 0; n < size; n++) {
      const i = (first + n) % size;
      if (this.seq[i]! <= fromSeq || this.kind[i] !== kind) continue;
      const change: Change = { kind, namespace: this.namespace[i]!, name: this.name[i]!, seq: this.seq[i]!, type: this.type[i]! };
      if (this.last[i] !== undefined) change.last = this.last[i];
      if (this.derived[i]) change.derived = true;
      yield change;
    }
  }
}
