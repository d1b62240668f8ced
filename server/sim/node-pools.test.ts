import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.js';
import { parseFeatureGates } from '../features.js';
import { createCluster } from '../cluster.js';
import {
  NODE_POOL_LABEL,
  ensurePoolNodes,
  loadNodePools,
  nodeCountChanges,
  nodeCountsByPool,
  nodeSecondsByPool,
  parseNodePool,
} from './node-pools.js';
import { allocatablePods } from './nodes.js';

const pool = (spec: Record<string, unknown>, name = 'default') => ({
  apiVersion: 'fleetsim.dev/v1alpha1',
  kind: 'NodePool',
  metadata: { name },
  spec: { maxNodes: 10, ...spec },
});

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

describe('parseNodePool', () => {
  it('reads every field, with durations, and defaults the rest', () => {
    expect(
      parseNodePool(pool({ podsPerNode: 50, minNodes: 1, maxNodes: 20, initialNodes: 3, scaleUpDelay: '90s', scaleDownUnneededTime: '5m', scaleDownDelayAfterAdd: 0, scanInterval: '500ms' })),
    ).toEqual({
      name: 'default',
      podsPerNode: 50,
      minNodes: 1,
      maxNodes: 20,
      initialNodes: 3,
      scaleUpDelayMs: 90_000,
      scaleDownUnneededTimeMs: 300_000,
      scaleDownDelayAfterAddMs: 0,
      scanIntervalMs: 500,
    });
    expect(parseNodePool(pool({ minNodes: 2 }))).toMatchObject({
      podsPerNode: 110,
      initialNodes: 2,
      scaleUpDelayMs: 60_000,
      scaleDownUnneededTimeMs: 600_000,
      scaleDownDelayAfterAddMs: 600_000,
      scanIntervalMs: 10_000,
    });
  });

  it.each([
    [pool({ maxNodes: 1, minNodes: 2 }), 'spec.maxNodes: must be an integer >= spec.minNodes'],
    [pool({ maxNodes: undefined }), 'spec.maxNodes: required'],
    [pool({ podsPerNode: 0 }), 'spec.podsPerNode: must be an integer >= 1'],
    [pool({ podsPerNode: 1.5 }), 'spec.podsPerNode: must be an integer >= 1'],
    [pool({ minNodes: -1 }), 'spec.minNodes: must be an integer >= 0'],
    [pool({ initialNodes: 11 }), 'spec.initialNodes: must be an integer from spec.minNodes to spec.maxNodes'],
    [pool({ scaleUpDelay: 'soon' }), 'spec.scaleUpDelay: "soon" is not a duration'],
    [pool({ scanInterval: 0 }), 'spec.scanInterval: must be longer than 0'],
    [pool({ scanInterval: '1ns' }), 'spec.scanInterval: must be at least 1ms'],
    [pool({ scaleUpDelay: Infinity }), 'spec.scaleUpDelay: "Infinity" is not a duration'],
    [pool({ maxNodes: 1e9 }), 'spec.maxNodes: must be at most 10000, not 1000000000'],
    [pool({ podsPernode: 10 }), 'spec.podsPernode: unknown field'],
    [pool({}, 'Bad_Name'), 'metadata.name: "Bad_Name" must be lower-case'],
    [{ ...pool({}), metadata: {} }, 'metadata.name: required'],
    [{ ...pool({}), kind: 'ProcessProfile' }, 'kind: expected NodePool, got ProcessProfile'],
    [{ ...pool({}), apiVersion: 'v1' }, 'apiVersion: expected fleetsim.dev/v1alpha1'],
    [{ ...pool({}), spec: [] }, 'spec: must be an object'],
  ])('refuses %j naming the field', (document, message) => {
    expect(() => parseNodePool(document)).toThrow(message);
  });
});

describe('loadNodePools', () => {
  const file = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetsim-pools-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'pools.yaml');
    writeFileSync(path, text);
    return path;
  };

  it('reads the pools of a file in order, and names the file and document of an error', () => {
    const doc = (name: string, spec: string) => `apiVersion: fleetsim.dev/v1alpha1\nkind: NodePool\nmetadata: { name: ${name} }\nspec: ${spec}\n`;
    expect(loadNodePools(file(`${doc('a', '{ maxNodes: 2 }')}---\n${doc('b', '{ maxNodes: 3, podsPerNode: 8 }')}`)).map((p) => [p.name, p.maxNodes, p.podsPerNode])).toEqual([
      ['a', 2, 110],
      ['b', 3, 8],
    ]);
    const bad = file(`${doc('a', '{ maxNodes: 2 }')}---\n${doc('b', '{ maxNodes: 3, color: red }')}`);
    expect(() => loadNodePools(bad)).toThrow(`${bad}, document 2: spec.color: unknown field`);
    const twice = file(`${doc('a', '{ maxNodes: 2 }')}---\n${doc('a', '{ maxNodes: 3 }')}`);
    expect(() => loadNodePools(twice)).toThrow(`${twice}: pool 2: metadata.name: "a" names an earlier pool too`);
  });
});

describe('pool nodes', () => {
  it('start with each pool its initialNodes, named <pool>-<n>, labelled, with the pool capacity, once', async () => {
    const cluster = createCluster({ db: ':memory:', clock: new VirtualClock(), gates: parseFeatureGates('') });
    cleanups.push(() => cluster.close());
    const pools = [parseNodePool(pool({ initialNodes: 2, podsPerNode: 30 }, 'small')), parseNodePool(pool({ minNodes: 1 }, 'big'))];
    await ensurePoolNodes(cluster, pools);
    await ensurePoolNodes(cluster, pools);
    const nodes = cluster.readModel.list('Node');
    expect(nodes.map((n) => [n.metadata.name, n.metadata.labels[NODE_POOL_LABEL], allocatablePods(n)])).toEqual([
      ['small-1', 'small', 30],
      ['small-2', 'small', 30],
      ['big-1', 'big', 110],
    ]);
    const internal = nodes.map((n) => (n.status as { addresses: Array<{ type: string; address: string }> }).addresses.find((a) => a.type === 'InternalIP')?.address);
    expect(internal).toEqual(['10.1.0.1', '10.1.0.2', '10.2.0.1']);
    expect(nodeCountsByPool(cluster)).toEqual(new Map([['small', 2], ['big', 1]]));
    const created = [...cluster.log.read({ kind: 'Node' })];
    expect(created).toHaveLength(3);
    expect(created[0]!.cause).toEqual({ type: 'startup', detail: 'the simulated cluster starts its node pools with their initial nodes (small 2, big 1)' });
  });
});

describe('node-seconds', () => {
  it('integrate each pool count over the window, counting changes before it as the start', () => {
    const t0 = 1_000_000;
    const changes = [
      { time: t0 - 5000, pool: 'a', delta: 1 as const },
      { time: t0 + 10_000, pool: 'a', delta: 1 as const },
      { time: t0 + 20_000, pool: 'b', delta: 1 as const },
      { time: t0 + 30_000, pool: 'a', delta: -1 as const },
      { time: t0 + 90_000, pool: 'b', delta: 1 as const },
    ];
    // a: 1 node 0-10 s, 2 nodes 10-30 s, 1 node 30-60 s = 10 + 40 + 30; b: 1 node 20-60 s.
    expect(nodeSecondsByPool(changes, t0, t0 + 60_000)).toEqual(new Map([['a', 80], ['b', 40]]));
    expect(nodeSecondsByPool([], t0, t0 + 60_000)).toEqual(new Map());
  });

  it('are read from the log: Node creations and deletions under the pool of their label', () => {
    const event = (seq: number, time: number, type: string, name: string, pool?: string) => ({
      seq,
      time,
      schemaVersion: 1,
      type,
      kind: 'Node',
      namespace: '',
      name,
      payload: type === 'ResourceCreated' ? { object: { metadata: { name, labels: pool ? { [NODE_POOL_LABEL]: pool } : {} } } } : {},
    });
    const changes = nodeCountChanges([
      event(1, 0, 'ResourceCreated', 'node-1'),
      event(2, 0, 'ResourceCreated', 'p-1', 'p'),
      event(3, 1000, 'ResourceCreated', 'p-2', 'p'),
      event(4, 4000, 'ResourceDeleted', 'p-2'),
    ]);
    expect(changes).toEqual([
      { time: 0, pool: '', delta: 1 },
      { time: 0, pool: 'p', delta: 1 },
      { time: 1000, pool: 'p', delta: 1 },
      { time: 4000, pool: 'p', delta: -1 },
    ]);
    expect(nodeSecondsByPool(changes, 0, 10_000)).toEqual(new Map([['', 10], ['p', 13]]));
  });
});

describe('examples/node-pools.yaml', () => {
  it('loads', () => {
    const pools = loadNodePools(new URL('../../examples/node-pools.yaml', import.meta.url).pathname);
    expect(pools.map((p) => [p.name, p.podsPerNode, p.minNodes, p.maxNodes, p.initialNodes])).toEqual([
      ['default', 110, 1, 10, 1],
      ['overflow', 30, 0, 20, 0],
    ]);
  });
});
