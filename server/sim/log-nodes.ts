import type { StoredEvent } from '../log/event-log.js';
import type { Resource } from '../kinds/resource.js';
import { NODE_KIND, allocatablePods } from './nodes.js';
import { type NodePool, poolOf } from './node-pools.js';

/** A simulated node a log ends with: its pool (none for `--nodes`) and the pods it takes. */
export interface LoggedNode {
  name: string;
  pool: string | undefined;
  pods: number;
}

/** The nodes a log's Node events leave (nodes are created and deleted, never changed). */
export function loggedNodes(events: Iterable<StoredEvent>): LoggedNode[] {
  const nodes = new Map<string, LoggedNode>();
  for (const event of events) {
    if (event.kind !== NODE_KIND) continue;
    if (event.type === 'ResourceCreated') {
      const node = (event.payload as { object: Resource }).object;
      nodes.set(event.name, { name: event.name, pool: poolOf(node), pods: allocatablePods(node) });
    } else if (event.type === 'ResourceDeleted') {
      nodes.delete(event.name);
    }
  }
  return [...nodes.values()];
}

/** serve's node flags, as given (a flag left to its default is absent). */
export interface NodeFlags {
  nodes?: number;
  maxPods?: number;
  nodePools?: readonly NodePool[];
}

const START_OVER = 'or add --fresh to start a new log';

/**
 * Why serve's node flags describe another world than the log's nodes, or undefined. serve adds
 * the nodes its flags name and removes none, so a log of plain nodes started with node pools (or
 * the other way round), fewer nodes, or another pod capacity would keep both worlds at once.
 */
export function nodeFlagsConflict(nodes: readonly LoggedNode[], flags: NodeFlags): string | undefined {
  const plain = nodes.filter((node) => node.pool === undefined);
  const pooled = nodes.filter((node) => node.pool !== undefined);
  const pools = [...new Set(pooled.map((node) => node.pool!))];
  if (flags.nodePools) {
    if (plain.length > 0) {
      return `--node-pools: the log has ${plain.length} plain nodes (from --nodes), not node pools: leave --node-pools out to resume it, ${START_OVER}`;
    }
    for (const pool of pools) {
      const declared = flags.nodePools.find((p) => p.name === pool);
      if (!declared) return `--node-pools: the log has nodes of pool "${pool}", which the file does not declare: declare it to resume the log, ${START_OVER}`;
      const other = pooled.find((node) => node.pool === pool && node.pods !== declared.podsPerNode);
      if (other) {
        return `--node-pools: pool "${pool}" has podsPerNode ${declared.podsPerNode}, but its nodes in the log take ${other.pods} pods: give it ${other.pods} to resume the log, ${START_OVER}`;
      }
    }
    return undefined;
  }
  if (pools.length > 0) {
    const flag = flags.nodes !== undefined ? '--nodes: ' : '';
    return `${flag}the log's nodes come from node pools (${pools.join(', ')}): resume it with --node-pools FILE, ${START_OVER}`;
  }
  if (flags.nodes !== undefined && flags.nodes < plain.length) {
    return `--nodes ${flags.nodes}: the log has ${plain.length} nodes, and serve removes none: leave --nodes out to resume it, ${START_OVER}`;
  }
  const other = flags.maxPods !== undefined ? plain.find((node) => node.pods !== flags.maxPods) : undefined;
  if (other) return `--max-pods ${flags.maxPods}: the log's nodes take ${other.pods} pods each: leave --max-pods out to resume it, ${START_OVER}`;
  return undefined;
}
