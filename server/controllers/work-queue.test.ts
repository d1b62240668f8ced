import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { WorkQueue, type WorkQueueObserver } from './work-queue.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WorkQueue', () => {
  it('drains on the clock and holds a waiting key once', () => {
    const clock = new VirtualClock();
    const seen: string[] = [];
    const queue = new WorkQueue<string>(clock, (key) => void seen.push(key));
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(seen).toEqual([]);
    expect(queue.length).toBe(2);
    clock.advance(0);
    expect(seen).toEqual(['a', 'b']);
    expect(queue.idle).toBe(true);
  });

  it('processes a key again when it is re-added while its handler runs, never concurrently', async () => {
    const clock = new VirtualClock();
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    let release: (() => void) | undefined;
    const queue = new WorkQueue<string>(clock, async () => {
      running++;
      runs++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((resolve) => (release = resolve));
      running--;
    });
    queue.add('k');
    clock.advance(0);
    expect(runs).toBe(1);
    queue.add('k');
    queue.add('k');
    clock.advance(0);
    expect(runs).toBe(1);
    release!();
    await flush();
    clock.advance(0);
    expect(runs).toBe(2);
    release!();
    await flush();
    clock.advance(0);
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
    expect(queue.idle).toBe(true);
  });

  it('adds after a delay, keeping the earliest of several delayed adds', () => {
    const clock = new VirtualClock();
    const seen: Array<[string, number]> = [];
    const start = clock.now();
    const queue = new WorkQueue<string>(clock, (key) => void seen.push([key, clock.now() - start]));
    queue.addAfter('x', 1000);
    queue.addAfter('x', 500);
    queue.addAfter('x', 800);
    clock.advance(499);
    expect(seen).toEqual([]);
    clock.advance(1);
    expect(seen).toEqual([['x', 500]]);
    clock.advance(1000);
    expect(seen).toEqual([['x', 500]]);
  });

  it('retries a failing key with backoff (200 ms × 5, then 3 s) and reports the error', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const attempts: number[] = [];
    const errors: unknown[] = [];
    const queue = new WorkQueue<string>(
      clock,
      (key) => {
        attempts.push(clock.now() - start);
        if (attempts.length < 8) throw new Error(`fail ${key}`);
      },
      { onError: (_key, error) => errors.push(error) },
    );
    queue.add('k');
    for (let i = 0; i < 100; i++) {
      clock.advance(100);
      await flush();
    }
    expect(attempts).toEqual([0, 200, 400, 600, 800, 1000, 4000, 7000]);
    expect(errors).toHaveLength(7);
    expect(queue.idle).toBe(true);
  });

  it('drops everything on shutDown', () => {
    const clock = new VirtualClock();
    const seen: string[] = [];
    const queue = new WorkQueue<string>(clock, (key) => void seen.push(key));
    queue.add('a');
    queue.addAfter('b', 10);
    queue.shutDown();
    clock.advance(100);
    queue.add('c');
    clock.advance(100);
    expect(seen).toEqual([]);
  });

  it("tells its observer what client-go's work-queue metrics count: adds, depth, waiting, work and retries", async () => {
    const clock = new VirtualClock();
    const seen = { added: 0, depth: [] as number[], waited: [] as number[], worked: 0, retried: 0 };
    const observer: WorkQueueObserver = {
      added: () => void seen.added++,
      depth: (n) => void seen.depth.push(n),
      started: (ms) => void seen.waited.push(ms),
      finished: () => void seen.worked++,
      retried: () => void seen.retried++,
    };
    let fail = true;
    let release: (() => void) | undefined;
    const queue = new WorkQueue<string>(clock, async (key) => {
      if (key === 'slow') await new Promise<void>((resolve) => (release = resolve));
      if (key === 'bad' && fail) throw new Error('no');
    }, { retry: { fastRetries: 1, fastDelayMs: 100, slowDelayMs: 100 } });
    queue.observer = observer;
    queue.add('a');
    queue.add('a'); // already waiting: not an add
    queue.add('slow');
    expect(seen.added).toBe(2);
    expect(seen.depth.at(-1)).toBe(2);
    clock.advance(50); // the drain is due at once; virtual time then moves on
    expect(seen.waited).toEqual([0, 0]);
    expect(seen.depth.at(-1)).toBe(0);
    queue.add('slow'); // added while its handler runs: counted, waits for the run to end
    queue.add('slow');
    expect(seen.added).toBe(3);
    expect(seen.depth.at(-1)).toBe(1);
    clock.advance(30);
    release!();
    await flush();
    clock.advance(0);
    expect(seen.waited).toEqual([0, 0, 30]);
    release!();
    await flush();
    expect(seen.worked).toBe(3);

    queue.add('bad');
    clock.advance(0);
    await flush();
    expect(seen.retried).toBe(1);
    fail = false;
    clock.advance(100);
    await flush();
    expect(seen.added).toBe(5); // the retry is added again once its delay has passed
    expect(seen.waited.at(-1)).toBe(0);
    expect(queue.idle).toBe(true);
  });
});
