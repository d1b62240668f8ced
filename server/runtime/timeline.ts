import type { StoredEvent } from '../log/event-log.js';
import { ReadModel } from './read-model.js';
import type { Store } from './store.js';

/** The read model as it was right after one event of the log, and that event's time. */
export interface PastState {
  model: ReadModel;
  /** Sequence number of the last event applied (0: the empty cluster before the first). */
  seq: number;
  /** Time of that event (epoch ms); undefined before the first. */
  time: number | undefined;
}

export interface TimelineOptions {
  /** Events between two checkpoints at first; the spacing doubles whenever the checkpoints exceed `maxCheckpoints`. */
  spacing?: number;
  maxCheckpoints?: number;
  /** Events read and applied per turn of the event loop, so a long replay never stalls the server. */
  pageSize?: number;
}

/**
 * Time travel, read from the log: the cluster as it was after any committed event, rebuilt by
 * the same reducers the live read model uses. Replays start from the nearest earlier checkpoint (a
 * clone of a replayed model kept in memory) instead of from the first event, so a request costs
 * at most `spacing` events however long the log. Checkpoints are a cache of replays, never a
 * second store of truth: the log is append-only, so a checkpoint never goes stale.
 */
export class Timeline {
  private readonly checkpoints: PastState[] = [];
  private spacing: number;
  private readonly maxCheckpoints: number;
  private readonly pageSize: number;
  /** Replays run one at a time: they share the checkpoints. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    options: TimelineOptions = {},
  ) {
    this.spacing = options.spacing ?? 5000;
    this.maxCheckpoints = options.maxCheckpoints ?? 32;
    this.pageSize = options.pageSize ?? 2000;
  }

  /** Checkpoints held now (for tests and the benchmark). */
  get checkpointSeqs(): number[] {
    return this.checkpoints.map((c) => c.seq);
  }

  /** The cluster right after event `seq`; a `seq` past the last committed event gives the last committed state. */
  at(seq: number): Promise<PastState> {
    const next = this.queue.then(() => this.replay(seq));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async replay(seq: number): Promise<PastState> {
    const base = this.checkpointBefore(seq);
    const state: PastState = base
      ? { model: base.model.clone(), seq: base.seq, time: base.time }
      : { model: new ReadModel(this.store.gates, { eventTtlMs: this.store.readModel.eventTtlMs }), seq: 0, time: undefined };
    while (state.seq < seq) {
      const page: StoredEvent[] = [...this.store.log.read({ fromSeq: state.seq + 1, toSeq: Math.min(seq, state.seq + this.pageSize) })];
      if (page.length === 0) break; // past the last committed event
      for (const event of page) {
        state.model.apply(event);
        state.seq = event.seq;
        state.time = event.time;
        if (state.seq % this.spacing === 0) this.keep(state);
      }
      if (state.seq < seq) await new Promise((resolve) => setImmediate(resolve));
    }
    return state;
  }

  private checkpointBefore(seq: number): PastState | undefined {
    let found: PastState | undefined;
    for (const checkpoint of this.checkpoints) {
      if (checkpoint.seq > seq) break;
      found = checkpoint;
    }
    return found;
  }

  /** Keeps a copy of `state` as a checkpoint; when there are too many, every other one goes and the spacing doubles. */
  private keep(state: PastState): void {
    const at = this.checkpoints.findIndex((c) => c.seq >= state.seq);
    if (at >= 0 && this.checkpoints[at]!.seq === state.seq) return;
    const checkpoint = { model: state.model.clone(), seq: state.seq, time: state.time };
    if (at < 0) this.checkpoints.push(checkpoint);
    else this.checkpoints.splice(at, 0, checkpoint);
    if (this.checkpoints.length <= this.maxCheckpoints) return;
    this.spacing *= 2;
    const kept = this.checkpoints.filter((c) => c.seq % this.spacing === 0);
    this.checkpoints.splice(0, this.checkpoints.length, ...kept);
  }
}
