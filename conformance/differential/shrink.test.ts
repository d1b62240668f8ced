import { describe, expect, it } from 'vitest';
import { shrink, without } from './shrink.js';

const items = (n: number, needs: Record<string, string[]> = {}) => Array.from({ length: n }, (_, i) => ({ id: `o${i + 1}`, needs: needs[`o${i + 1}`] ?? [] }));
const ids = (list: { id: string }[]) => list.map((item) => item.id);

describe('shrinking a differing sequence', () => {
  it('finds the two operations that together make the difference, out of twenty', async () => {
    const asked: string[] = [];
    const result = await shrink(items(20), async (candidate) => {
      asked.push(ids(candidate).join(','));
      const present = new Set(ids(candidate));
      return present.has('o4') && present.has('o17');
    });
    expect(ids(result.items)).toEqual(['o4', 'o17']);
    // Never the same candidate twice, never the whole sequence, and far fewer than all subsets.
    expect(new Set(asked).size).toBe(asked.length);
    expect(asked).not.toContain(ids(items(20)).join(','));
    expect(result.tries).toBe(asked.length);
    expect(result.tries).toBeLessThan(60);
  });

  it('keeps what an operation needs, and drops what needs a dropped one', async () => {
    // o5 (an SDK call) needs o3 (the allocation), which needs o1 (the fleet).
    const sequence = items(6, { o3: ['o1'], o5: ['o3'], o6: ['o2'] });
    expect(ids(without(sequence, new Set(['o1'])))).toEqual(['o2', 'o4', 'o6']);
    expect(ids(without(sequence, new Set(['o2', 'o4'])))).toEqual(['o1', 'o3', 'o5']);
    const result = await shrink(sequence, async (candidate) => ids(candidate).includes('o5'));
    expect(ids(result.items)).toEqual(['o1', 'o3', 'o5']);
  });

  it('leaves a sequence alone when every operation is needed for the difference', async () => {
    const result = await shrink(items(3), async (candidate) => candidate.length === 3);
    expect(ids(result.items)).toEqual(['o1', 'o2', 'o3']);
  });

  it('goes down to one operation when one alone differs', async () => {
    const result = await shrink(items(9), async (candidate) => ids(candidate).includes('o9'));
    expect(ids(result.items)).toEqual(['o9']);
  });
});
