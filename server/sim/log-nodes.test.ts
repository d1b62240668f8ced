import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../log/event-log.js';
import { type LoggedNode, loggedNodes, nodeFlagsConflict } from './log-nodes.js';
import { NODE_KIND, simulatedNode } from './nodes.js';
import { type NodePool, NODE_POOL_LABEL } from './node-pools.js';

const plain = (n: number, pods = 110): LoggedNode[] => Array.from({ length: n }, (_, i) => ({ name: `node-${i + 1}`, pool: undefined, pods }));
const pool = (name: string, podsPerNode = 110): NodePool => ({
  name,
  podsPerNode,
  minNodes: 0,
  maxNodes: 10,
  initialNodes: 1,
  scaleUpDelayMs: 0,
  scaleDownUnneededTimeMs: 0,
  scaleDownDelayAfterAddMs: 0,
  scanIntervalMs: 1000,
});

describe('loggedNodes', () => {
  it('keeps the nodes created and not deleted, with their pool and pods', () => {
    let seq = 0;
    const created = (name: string, pods: number, labels?: Record<string, string>): StoredEvent => ({
      seq: ++seq,
      time: 0,
      schemaVersion: 1,
      type: 'ResourceCreated',
      kind: NODE_KIND,
      namespace: '',
      name,
      payload: { object: simulatedNode({ name, pods, labels, network: 0, ordinal: seq }, 'uid', 0) },
    });
    const deleted = (name: string): StoredEvent => ({ seq: ++seq, time: 0, schemaVersion: 1, type: 'ResourceDeleted', kind: NODE_KIND, namespace: '', name, payload: {} });
    const events = [created('default-1', 30, { [NODE_POOL_LABEL]: 'default' }), created('default-2', 30, { [NODE_POOL_LABEL]: 'default' }), deleted('default-1'), created('node-1', 110)];
    expect(loggedNodes(events)).toEqual([
      { name: 'default-2', pool: 'default', pods: 30 },
      { name: 'node-1', pool: undefined, pods: 110 },
    ]);
  });
});

describe('nodeFlagsConflict', () => {
  it('accepts a log with no nodes, whatever the flags', () => {
    expect(nodeFlagsConflict([], { nodePools: [pool('default')] })).toBeUndefined();
    expect(nodeFlagsConflict([], { nodes: 1, maxPods: 5 })).toBeUndefined();
  });

  it('accepts the flags the log was made with, none, and more plain nodes', () => {
    expect(nodeFlagsConflict(plain(4), {})).toBeUndefined();
    expect(nodeFlagsConflict(plain(4), { nodes: 4, maxPods: 110 })).toBeUndefined();
    expect(nodeFlagsConflict(plain(4), { nodes: 6 })).toBeUndefined();
    const pooled: LoggedNode[] = [{ name: 'default-1', pool: 'default', pods: 110 }];
    expect(nodeFlagsConflict(pooled, { nodePools: [pool('default'), pool('overflow', 30)] })).toBeUndefined();
  });

  it('refuses another world, and says how to start over', () => {
    const pooled: LoggedNode[] = [{ name: 'default-1', pool: 'default', pods: 110 }];
    const cases: Array<[LoggedNode[], Parameters<typeof nodeFlagsConflict>[1], string]> = [
      [plain(4), { nodePools: [pool('default')] }, '--node-pools: the log has 4 plain nodes (from --nodes), not node pools'],
      [pooled, {}, "the log's nodes come from node pools (default): resume it with --node-pools FILE"],
      [pooled, { nodes: 2 }, "--nodes: the log's nodes come from node pools (default)"],
      [pooled, { nodePools: [pool('overflow')] }, '--node-pools: the log has nodes of pool "default", which the file does not declare'],
      [pooled, { nodePools: [pool('default', 30)] }, '--node-pools: pool "default" has podsPerNode 30, but its nodes in the log take 110 pods'],
      [plain(4), { nodes: 2 }, '--nodes 2: the log has 4 nodes, and serve removes none'],
      [plain(4), { maxPods: 50 }, "--max-pods 50: the log's nodes take 110 pods each"],
    ];
    for (const [nodes, flags, message] of cases) {
      const conflict = nodeFlagsConflict(nodes, flags);
      expect(conflict, message).toContain(message);
      expect(conflict).toMatch(/add --fresh to start a new log$/);
    }
  });
});
