/**
 * Time is injected (DESIGN §4): everything that waits — reservation expiry, health deadlines,
 * controller work queues — asks a Clock, so tests and benchmarks can run on virtual time.
 * The shape matches what XState's `createActor(…, { clock })` expects.
 */
export type TimerHandle = number;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

export class WallClock implements Clock {
  private readonly handles = new Map<TimerHandle, NodeJS.Timeout>();
  private nextHandle = 1;

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = this.nextHandle++;
    const timeout = setTimeout(() => {
      this.handles.delete(handle);
      fn();
    }, Math.max(0, ms));
    timeout.unref?.();
    this.handles.set(handle, timeout);
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle === undefined) return;
    const timeout = this.handles.get(handle);
    if (timeout) clearTimeout(timeout);
    this.handles.delete(handle);
  }
}

interface VirtualTimer {
  handle: TimerHandle;
  due: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. Timers fire in due order (ties in creation order),
 * so the same inputs always give the same log.
 */
export class VirtualClock implements Clock {
  private current: number;
  private nextHandle = 1;
  /** Binary min-heap on (due, handle); cancelled timers are dropped lazily. */
  private readonly heap: VirtualTimer[] = [];
  private readonly live = new Set<TimerHandle>();

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = this.nextHandle++;
    this.live.add(handle);
    this.push({ handle, due: this.current + Math.max(0, ms), fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.live.delete(handle);
  }

  /** Number of timers still waiting to fire. */
  get pending(): number {
    return this.live.size;
  }

  /** Due time of the next live timer, if any. */
  nextDue(): number | undefined {
    this.dropCancelled();
    return this.heap[0]?.due;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(targetMs: number): void {
    for (;;) {
      this.dropCancelled();
      const next = this.heap[0];
      if (!next || next.due > targetMs) break;
      this.pop();
      this.live.delete(next.handle);
      this.current = Math.max(this.current, next.due);
      next.fn();
    }
    this.current = Math.max(this.current, targetMs);
  }

  /** Fires the next due timer (jumping time to it). Returns false when none is left. */
  step(): boolean {
    const due = this.nextDue();
    if (due === undefined) return false;
    this.advanceTo(due);
    return true;
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && !this.live.has(this.heap[0]!.handle)) this.pop();
  }

  private less(a: VirtualTimer, b: VirtualTimer): boolean {
    return a.due < b.due || (a.due === b.due && a.handle < b.handle);
  }

  private push(timer: VirtualTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let smallest = i;
      if (l < heap.length && this.less(heap[l]!, heap[smallest]!)) smallest = l;
      if (r < heap.length && this.less(heap[r]!, heap[smallest]!)) smallest = r;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

/**
 * Seeded pseudo-random numbers (sfc32, 128 bits of state): the same seed and stream give the
 * same run. The state is that large because uids are drawn from it: with 32 bits, two streams
 * started from different seeds overlap after a few million draws and hand out the same uids.
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /**
   * `stream` selects an independent sequence for the same seed: the cluster passes the log's
   * last sequence number, so a restart never replays the draws (uids, names) of an earlier start.
   */
  constructor(seed: number, stream = 0) {
    // splitmix32 spreads (seed, stream) over the four words of state.
    let x = (seed ^ Math.imul(stream | 0, 0x9e3779b9) ^ Math.floor(stream / 2 ** 32)) >>> 0;
    const mix = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** A Kubernetes-style UID (8-4-4-4-12 hex), deterministic for the seed. */
  uid(): string {
    // Each draw has 32 random bits: at most 8 hex digits per draw.
    const hex = (digits: number) => Math.floor(this.next() * 16 ** digits).toString(16).padStart(digits, '0');
    const variant = (8 + this.int(4)).toString(16);
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(6)}${hex(6)}`;
  }

  /** Five lower-case alphanumerics, as Kubernetes appends to a generateName. */
  suffix(): string {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    return Array.from({ length: 5 }, () => alphabet[this.int(alphabet.length)]).join('');
  }
}
