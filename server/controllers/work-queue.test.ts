import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { WorkQueue } from './work-queue.js';

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
});
