import { describe, expect, it } from 'vitest';
import { SeededRandom, VirtualClock } from './clock.js';

describe('VirtualClock', () => {
  it('fires timers in due order, ties in creation order, skipping cancelled ones, also those set while firing', () => {
    const clock = new VirtualClock(0);
    const rng = new SeededRandom(7);
    const fired: number[] = [];
    const expected: Array<{ due: number; id: number }> = [];
    let nextId = 0;
    const set = (delay: number) => {
      const id = nextId++;
      const due = clock.now() + delay;
      const handle = clock.setTimeout(() => {
        fired.push(id);
        // Some timers set another one, due at once or later.
        if (id % 5 === 0 && nextId < 3000) set(rng.int(3) === 0 ? 0 : rng.int(50));
      }, delay);
      expected.push({ due, id });
      return { handle, id };
    };
    const cancelled = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const { handle, id } = set(rng.int(100));
      if (rng.int(10) === 0) {
        clock.clearTimeout(handle);
        cancelled.add(id);
      }
    }
    expect(clock.pending).toBe(2000 - cancelled.size);
    clock.advanceTo(10_000);
    const order = expected.filter((t) => !cancelled.has(t.id)).sort((a, b) => a.due - b.due || a.id - b.id);
    expect(fired).toEqual(order.map((t) => t.id));
    expect(clock.pending).toBe(0);
    expect(clock.nextDue()).toBeUndefined();
  });

  it('forgets handles cleared after they fired, and a cleared one never fires', () => {
    const clock = new VirtualClock(0);
    let fired = 0;
    const old = Array.from({ length: 200 }, () => clock.setTimeout(() => fired++, 1));
    clock.advance(1);
    expect(fired).toBe(200);
    for (const handle of old) clock.clearTimeout(handle); // late, harmless
    clock.clearTimeout(10_000); // never given
    const kept = clock.setTimeout(() => fired++, 5);
    const dropped = clock.setTimeout(() => fired++, 5);
    clock.clearTimeout(dropped);
    expect(clock.pending).toBe(1);
    expect((clock as unknown as { cancelled: Set<number> }).cancelled.size).toBeLessThanOrEqual(65);
    clock.advance(10);
    expect(fired).toBe(201);
    expect(clock.pending).toBe(0);
    expect(kept).toBeLessThan(dropped);
  });

  it('moves time to each timer as it fires and stops at the target', () => {
    const clock = new VirtualClock(1000);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 30);
    clock.setTimeout(() => seen.push(clock.now()), 10);
    clock.setTimeout(() => seen.push(clock.now()), 500);
    clock.advance(100);
    expect(seen).toEqual([1010, 1030]);
    expect(clock.now()).toBe(1100);
    expect(clock.step()).toBe(true);
    expect(seen).toEqual([1010, 1030, 1500]);
    expect(clock.step()).toBe(false);
  });

  it('keeps whole milliseconds, as Date.now() does: a fractional delay fires at the next one', () => {
    const clock = new VirtualClock(1000);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 2.25);
    clock.setTimeout(() => seen.push(clock.now()), 4);
    clock.advance(10);
    expect(seen).toEqual([1003, 1004]);
  });

  it('finds the first timer due after an instant, passing over those due by then and cancelled ones', () => {
    const clock = new VirtualClock(0);
    const rng = new SeededRandom(3);
    const dues: number[] = [];
    for (let i = 0; i < 500; i++) {
      const due = rng.int(4) === 0 ? 0 : rng.int(1000);
      const handle = clock.setTimeout(() => undefined, due);
      if (rng.int(8) === 0) clock.clearTimeout(handle);
      else dues.push(due);
    }
    for (const t of [-1, 0, 1, 250, 998, 999, 1000]) {
      const later = dues.filter((due) => due > t);
      expect(clock.nextDueAfter(t), `after ${t}`).toBe(later.length > 0 ? Math.min(...later) : undefined);
    }
  });
});
