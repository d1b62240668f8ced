import type { StoredEvent } from '../log/event-log.js';
import type { Resource } from '../kinds/resource.js';
import type { NodeMaker } from './ports.js';
import { MAX_NODES, MAX_PODS_PER_NODE, NODE_KIND, type NodeShape, nodeCreation } from './nodes.js';
import { durationMs, loadDocuments } from './profiles.js';

/**
 * Node pools: groups of like simulated nodes that a node autoscaler grows and shrinks, as the
 * Kubernetes cluster autoscaler does with a cloud's node groups. Declared in YAML:
 *
 *   apiVersion: fleetsim.dev/v1alpha1
 *   kind: NodePool
 *   metadata: { name: default }
 *   spec:
 *     podsPerNode: 110             # each node's pod capacity (status.allocatable.pods)
 *     minNodes: 1
 *     maxNodes: 100
 *     initialNodes: 1              # default minNodes
 *     scaleUpDelay: 60s            # from the scale-up decision to the new node Ready
 *     scaleDownUnneededTime: 10m   # a node empty this long is removed
 *     scaleDownDelayAfterAdd: 10m  # no scale-down in the pool this long after it grew
 *     scanInterval: 10s            # how often the autoscaler looks
 *
 * A pool's nodes are named `<pool>-<n>` (n from 1) and carry the label `fleetsim.dev/node-pool`.
 * The autoscaler itself is server/controllers/node-autoscaler.ts; this module is what is true of
 * the pools without it: the declaration, the nodes' shape, and node-seconds read from the log.
 */
export const NODE_POOL_KIND = 'NodePool';
export const NODE_POOL_API_VERSION = 'fleetsim.dev/v1alpha1';
export const NODE_POOL_LABEL = 'fleetsim.dev/node-pool';

export interface NodePool {
  name: string;
  podsPerNode: number;
  minNodes: number;
  maxNodes: number;
  initialNodes: number;
  scaleUpDelayMs: number;
  scaleDownUnneededTimeMs: number;
  scaleDownDelayAfterAddMs: number;
  scanIntervalMs: number;
}

/** The spec's fields, each with its default (undefined: required, or derived from another). */
const SPEC_DEFAULTS = {
  podsPerNode: MAX_PODS_PER_NODE,
  minNodes: 0,
  maxNodes: undefined,
  initialNodes: undefined,
  scaleUpDelay: '60s',
  scaleDownUnneededTime: '10m',
  scaleDownDelayAfterAdd: '10m',
  scanInterval: '10s',
} as const;
const SPEC_FIELDS = Object.keys(SPEC_DEFAULTS);

/** Longest pool name: `<pool>-<n>` must stay a DNS label (63) with room for the number. */
const MAX_POOL_NAME = 50;

function integer(value: unknown, field: string, min: number, rule: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Error(`${field}: must be an integer ${rule}`);
  return value;
}

/** Reads one NodePool document (parsed YAML or JSON); errors name the field at fault. */
export function parseNodePool(document: unknown): NodePool {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new Error('a NodePool must be an object');
  const doc = document as Record<string, unknown>;
  if (doc.kind !== NODE_POOL_KIND) throw new Error(`kind: expected ${NODE_POOL_KIND}, got ${String(doc.kind)}`);
  if (doc.apiVersion !== undefined && doc.apiVersion !== NODE_POOL_API_VERSION) {
    throw new Error(`apiVersion: expected ${NODE_POOL_API_VERSION}, got ${String(doc.apiVersion)}`);
  }
  const name = (doc.metadata as Record<string, unknown> | undefined)?.name;
  if (typeof name !== 'string' || name === '') throw new Error('metadata.name: required');
  if (name.length > MAX_POOL_NAME || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new Error(`metadata.name: "${name}" must be lower-case letters, digits and '-', start and end with a letter or digit, at most ${MAX_POOL_NAME} long (its nodes are named <pool>-<n>)`);
  }
  const rawSpec = doc.spec ?? {};
  if (typeof rawSpec !== 'object' || rawSpec === null || Array.isArray(rawSpec)) throw new Error('spec: must be an object');
  const unknown = Object.keys(rawSpec).find((field) => !SPEC_FIELDS.includes(field));
  if (unknown !== undefined) throw new Error(`spec.${unknown}: unknown field (known: ${SPEC_FIELDS.join(', ')})`);
  const spec = { ...SPEC_DEFAULTS, ...(rawSpec as Record<string, unknown>) };
  const podsPerNode = integer(spec.podsPerNode, 'spec.podsPerNode', 1, '>= 1');
  const minNodes = integer(spec.minNodes, 'spec.minNodes', 0, '>= 0');
  if (spec.maxNodes === undefined) throw new Error('spec.maxNodes: required');
  const maxNodes = integer(spec.maxNodes, 'spec.maxNodes', minNodes, '>= spec.minNodes');
  if (maxNodes > MAX_NODES) throw new Error(`spec.maxNodes: must be at most ${MAX_NODES}, not ${maxNodes}`);
  const initialNodes = spec.initialNodes ?? minNodes;
  if (typeof initialNodes !== 'number' || !Number.isInteger(initialNodes) || initialNodes < minNodes || initialNodes > maxNodes) {
    throw new Error('spec.initialNodes: must be an integer from spec.minNodes to spec.maxNodes');
  }
  const scanIntervalMs = durationMs(spec.scanInterval, 'spec.scanInterval');
  if (scanIntervalMs <= 0) throw new Error('spec.scanInterval: must be longer than 0');
  // The clock counts whole milliseconds: a shorter interval would fire at the same instant forever.
  if (scanIntervalMs < 1) throw new Error('spec.scanInterval: must be at least 1ms');
  return {
    name,
    podsPerNode,
    minNodes,
    maxNodes,
    initialNodes,
    scaleUpDelayMs: durationMs(spec.scaleUpDelay, 'spec.scaleUpDelay'),
    scaleDownUnneededTimeMs: durationMs(spec.scaleDownUnneededTime, 'spec.scaleDownUnneededTime'),
    scaleDownDelayAfterAddMs: durationMs(spec.scaleDownDelayAfterAdd, 'spec.scaleDownDelayAfterAdd'),
    scanIntervalMs,
  };
}

/** Refuses a list of pools that names one pool twice (their nodes would share names). */
export function checkNodePools(pools: readonly NodePool[]): void {
  const seen = new Set<string>();
  for (const [i, pool] of pools.entries()) {
    if (seen.has(pool.name)) throw new Error(`pool ${i + 1}: metadata.name: "${pool.name}" names an earlier pool too`);
    seen.add(pool.name);
  }
}

/** Every NodePool of a YAML file, in the order declared (the order scale-up tries them in). */
export function loadNodePools(path: string): NodePool[] {
  const pools = loadDocuments(path, parseNodePool);
  try {
    checkNodePools(pools);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  return pools;
}

/** The name of a pool's node number `ordinal` (from 1). */
export function poolNodeName(pool: string, ordinal: number): string {
  return `${pool}-${ordinal}`;
}

/** The node number in a pool node's name (`default-12` → 12), or 0. */
export function poolNodeOrdinal(pool: string, node: string): number {
  const rest = node.startsWith(`${pool}-`) ? node.slice(pool.length + 1) : '';
  return /^[1-9]\d*$/.test(rest) ? Number(rest) : 0;
}

/** The pool a Node belongs to, by its label; undefined for a node of no pool (`--nodes N`). */
export function poolOf(node: Resource): string | undefined {
  return node.metadata.labels?.[NODE_POOL_LABEL];
}

/**
 * How node `ordinal` of a pool looks. `poolIndex` is the pool's place in its list (from 0): it
 * gives the pool's nodes an InternalIP range of their own (10.<1 + poolIndex>.x.y).
 */
export function poolNodeShape(pool: NodePool, poolIndex: number, ordinal: number): NodeShape {
  return {
    name: poolNodeName(pool.name, ordinal),
    pods: pool.podsPerNode,
    labels: { [NODE_POOL_LABEL]: pool.name },
    network: 1 + poolIndex,
    ordinal: ordinal - 1,
  };
}

/**
 * Creates each pool's initialNodes, as one commit with a start-up cause, for the pools that
 * have no node in the cluster yet (a restarted server keeps the nodes its log holds).
 */
export async function ensurePoolNodes(cluster: NodeMaker, pools: readonly NodePool[]): Promise<void> {
  const present = new Set<string>();
  for (const node of cluster.readModel.list(NODE_KIND)) {
    const pool = poolOf(node);
    if (pool !== undefined) present.add(pool);
  }
  const events = [];
  const created: string[] = [];
  for (const [index, pool] of pools.entries()) {
    if (present.has(pool.name) || pool.initialNodes === 0) continue;
    for (let n = 1; n <= pool.initialNodes; n++) events.push(nodeCreation(cluster, poolNodeShape(pool, index, n)));
    created.push(`${pool.name} ${pool.initialNodes}`);
  }
  if (events.length === 0) return;
  await cluster.commit(events, { type: 'startup', detail: `the simulated cluster starts its node pools with their initial nodes (${created.join(', ')})` });
}

/** One node more (+1) or fewer (-1) in a pool at a time (ms since the epoch). */
export interface NodeCountChange {
  time: number;
  /** The pool's name; '' for nodes of no pool (`fleetsim serve --nodes N`). */
  pool: string;
  delta: 1 | -1;
}

/**
 * The node count changes a log records, in its order: each Node created (+1) or deleted (-1),
 * under the pool its creation labelled it with. Pass the log's Node events:
 * `nodeCountChanges(cluster.log.read({ kind: 'Node' }))` (the log holds what is durable: await
 * `cluster.settled()` first to include the latest commits).
 */
export function nodeCountChanges(events: Iterable<StoredEvent>): NodeCountChange[] {
  const poolOfName = new Map<string, string>();
  const changes: NodeCountChange[] = [];
  for (const event of events) {
    if (event.kind !== NODE_KIND) continue;
    if (event.type === 'ResourceCreated') {
      const pool = poolOf((event.payload as { object: Resource }).object) ?? '';
      poolOfName.set(event.name, pool);
      changes.push({ time: event.time, pool, delta: 1 });
    } else if (event.type === 'ResourceDeleted' && poolOfName.has(event.name)) {
      changes.push({ time: event.time, pool: poolOfName.get(event.name)!, delta: -1 });
      poolOfName.delete(event.name);
    }
  }
  return changes;
}

/**
 * Node-seconds per pool from `from` to `to` (ms since the epoch): the integral of each pool's
 * node count over that window, what a cloud bills for. `changes` come in time order (as
 * nodeCountChanges gives them); those before `from` set the count the window starts with.
 * Pure: `nodeSecondsByPool(nodeCountChanges(cluster.log.read({ kind: 'Node' })), start, end)`.
 */
export function nodeSecondsByPool(changes: Iterable<NodeCountChange>, from: number, to: number): Map<string, number> {
  const count = new Map<string, number>();
  const since = new Map<string, number>();
  const seconds = new Map<string, number>();
  const accrue = (pool: string, until: number) => {
    const start = since.get(pool) ?? from;
    const span = Math.max(0, Math.min(until, to) - Math.max(start, from));
    seconds.set(pool, (seconds.get(pool) ?? 0) + ((count.get(pool) ?? 0) * span) / 1000);
    since.set(pool, Math.max(until, from));
  };
  for (const change of changes) {
    accrue(change.pool, change.time);
    count.set(change.pool, (count.get(change.pool) ?? 0) + change.delta);
  }
  for (const pool of count.keys()) accrue(pool, to);
  return seconds;
}

/** How many nodes each pool has now, from the read model ('' for nodes of no pool). */
export function nodeCountsByPool(cluster: NodeMaker): Map<string, number> {
  const counts = new Map<string, number>();
  for (const node of cluster.readModel.list(NODE_KIND)) {
    const pool = poolOf(node) ?? '';
    counts.set(pool, (counts.get(pool) ?? 0) + 1);
  }
  return counts;
}
