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
  /**
   * Work begun at this instant that ends on its own (a controller's sync, perhaps awaiting a
   * webhook): a virtual clock does not move on before it ends (server/sim/virtual-time.ts).
   */
  track?(work: Promise<unknown>): void;
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

/**
 * A clock that only moves when told to. Timers fire in due order (ties in creation order),
 * so the same inputs always give the same log.
 */
export class VirtualClock implements Clock {
  private current: number;
  private nextHandle = 1;
  /**
   * Binary min-heap on (due, handle), kept as parallel arrays: a sift compares due times read
   * from one packed array instead of chasing a timer object per comparison (a day's run fires
   * millions of timers through a heap of tens of thousands). Cancelled timers are dropped lazily.
   */
  private readonly dues: number[] = [];
  private readonly handles: number[] = [];
  private readonly fns: Array<() => void> = [];
  /**
   * Handles cleared (rare: a day's run sets millions of timers and clears a few thousand), dropped
   * as they reach the top of the heap. A set of the live ones cost three lookups per timer.
   */
  private cancelled = new Set<TimerHandle>();
  /** Work tracked and not ended yet. */
  private readonly working = new Set<Promise<unknown>>();
  /** Timers fired since the clock was made. */
  fired = 0;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = this.nextHandle++;
    // Whole milliseconds, as Date.now() gives: a timer drawn from a distribution fires at the
    // next one, and everything it causes is stamped with a time Kubernetes names can carry.
    this.push(this.current + Math.max(0, Math.ceil(ms)), handle, fn);
    return handle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    // A handle already fired (or never given) is kept too, until there are more kept than pending.
    if (handle === undefined || handle >= this.nextHandle) return;
    this.cancelled.add(handle);
    if (this.cancelled.size > 64 && this.cancelled.size > this.handles.length) this.forgetFired();
  }

  track(work: Promise<unknown>): void {
    this.working.add(work);
    const end = () => this.working.delete(work);
    work.then(end, end);
  }

  /** The work tracked that has not ended (a snapshot). */
  get inFlight(): Promise<unknown>[] {
    return [...this.working];
  }

  /** Time no longer waits for the work in flight now (it keeps running). */
  letGo(): void {
    this.working.clear();
  }

  /** Number of timers still waiting to fire. */
  get pending(): number {
    let cancelled = 0;
    for (const handle of this.handles) if (this.cancelled.has(handle)) cancelled++;
    return this.handles.length - cancelled;
  }

  /** Due time of the next live timer, if any. */
  nextDue(): number | undefined {
    this.dropCancelled();
    return this.dues[0];
  }

  /** Due time of the first live timer due after `t`, if any: those due at `t` or before are passed over. */
  nextDueAfter(t: number): number | undefined {
    // Only the top of the heap holds timers due by `t` (and the rare cancelled ones): the first
    // later timer is one of their children.
    let best: number | undefined;
    const stack = this.dues.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const i = stack.pop()!;
      const due = this.dues[i]!;
      if (best !== undefined && due >= best) continue;
      if (due > t && !this.cancelled.has(this.handles[i]!)) {
        best = due;
        continue;
      }
      for (const child of [2 * i + 1, 2 * i + 2]) if (child < this.dues.length) stack.push(child);
    }
    return best;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  advanceTo(targetMs: number): void {
    for (;;) {
      this.dropCancelled();
      if (this.dues.length === 0 || this.dues[0]! > targetMs) break;
      const due = this.dues[0]!;
      const fn = this.fns[0]!;
      this.pop();
      this.current = Math.max(this.current, due);
      this.fired++;
      fn();
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
    while (this.cancelled.size > 0 && this.handles.length > 0 && this.cancelled.delete(this.handles[0]!)) this.pop();
  }

  /** Keeps only the cleared handles still in the heap. */
  private forgetFired(): void {
    const pending = new Set(this.handles);
    this.cancelled = new Set([...this.cancelled].filter((handle) => pending.has(handle)));
  }

  private push(due: number, handle: number, fn: () => void): void {
    const { dues, handles } = this;
    // Sift the hole up from the end, then drop the timer into it.
    let i = dues.length;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (dues[parent]! < due || (dues[parent] === due && handles[parent]! < handle)) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, due, handle, fn);
  }

  /** Removes the root: the last timer sifts down from the top. */
  private pop(): void {
    const { dues, handles } = this;
    const due = dues.pop()!;
    const handle = handles.pop()!;
    const fn = this.fns.pop()!;
    const size = dues.length;
    if (size === 0) return;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && (dues[right]! < dues[child]! || (dues[right] === dues[child] && handles[right]! < handles[child]!))) child = right;
      if (due < dues[child]! || (due === dues[child] && handle < handles[child]!)) break;
      this.move(child, i);
      i = child;
    }
    this.place(i, due, handle, fn);
  }

  private move(from: number, to: number): void {
    this.place(to, this.dues[from]!, this.handles[from]!, this.fns[from]!);
  }

  private place(i: number, due: number, handle: number, fn: () => void): void {
    this.dues[i] = due;
    this.handles[i] = handle;
    this.fns[i] = fn;
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
    let suffix = '';
    for (let i = 0; i < 5; i++) suffix += alphabet[this.int(alphabet.length)];
    return suffix;
  }
}
