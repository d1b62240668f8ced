import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../clock.js';
import type { NodeCount } from '../../machines/scale-down-order.js';
import { NodeBuckets } from './node-bucket.js';

/**
 * The node order against a sort made afresh after every change, over enough nodes that nodes
 * leave and come back anywhere in it (the index's own tests hold a few nodes each).
 */
describe('NodeBuckets keep each bucket in Packed node order', () => {
  it('through allocations, returns to Ready and moves between nodes over 300 nodes', () => {
    const rng = new SeededRandom(7);
    const counts = new Map<string, NodeCount>();
    const countsOf = (node: string): NodeCount => {
      let c = counts.get(node);
      if (!c) counts.set(node, (c = { ready: 0, allocated: 0 }));
      return c;
    };
    const buckets = new NodeBuckets(countsOf);
    const nodes = Array.from({ length: 300 }, (_, i) => `node-${i}`);
    /** Where each server is, and whether it is Ready (in the bucket) or Allocated. */
    const servers = new Map<string, { node: string; ready: boolean }>();
    const put = (key: string, node: string) => {
      servers.set(key, { node, ready: true });
      countsOf(node).ready++;
      buckets.move(key, undefined, [], node, ['b']);
    };
    for (let i = 0; i < 1500; i++) put(`default/gs-${String(i).padStart(5, '0')}`, nodes[rng.int(nodes.length)]!);

    const expected = () => {
      const firsts = new Map<string, string>();
      for (const [key, s] of servers) if (s.ready && (!firsts.has(s.node) || key < firsts.get(s.node)!)) firsts.set(s.node, key);
      return [...firsts.keys()].sort((x, y) => {
        const a = countsOf(x);
        const b = countsOf(y);
        if (a.allocated !== b.allocated) return b.allocated - a.allocated;
        if (a.ready !== b.ready) return b.ready - a.ready;
        return firsts.get(x)! < firsts.get(y)! ? -1 : 1;
      });
    };

    const keys = [...servers.keys()];
    for (let step = 0; step < 3000; step++) {
      const key = keys[rng.int(keys.length)]!;
      const s = servers.get(key)!;
      const c = countsOf(s.node);
      const op = rng.int(10);
      if (s.ready && op < 6) {
        // Allocated where it stands: its node is busier, and it leaves the bucket.
        c.ready--;
        c.allocated++;
        s.ready = false;
        buckets.move(key, s.node, ['b'], undefined, []);
      } else if (!s.ready && op < 9) {
        c.allocated--;
        c.ready++;
        s.ready = true;
        buckets.move(key, undefined, [], s.node, ['b']);
      } else if (s.ready) {
        // To another node: two nodes' counts move at once.
        const to = nodes[rng.int(nodes.length)]!;
        c.ready--;
        countsOf(to).ready++;
        const from = s.node;
        s.node = to;
        buckets.move(key, from, ['b'], to, ['b']);
      }
      expect(buckets.byKey.get('b')?.nodeNames() ?? [], `step ${step}`).toEqual(expected());
    }
  });
});
