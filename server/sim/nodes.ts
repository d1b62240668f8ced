import type { NodeAddress } from '../kinds/gameserver-types.js';
import { clusterObjectMeta } from '../kinds/meta.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import type { NodeMaker } from './ports.js';

/** Pods a simulated node takes, as a default kubelet does. */
export const MAX_PODS_PER_NODE = 110;

export const NODE_KIND = 'Node';

/** The most nodes a simulated cluster has (Kubernetes supports 5,000 per cluster): each is an object, made at start. */
export const MAX_NODES = 10_000;

export function nodeName(index: number): string {
  return `node-${index + 1}`;
}

/** How a simulated node differs from another: its name, its pod capacity, extra labels, its internal address. */
export interface NodeShape {
  name: string;
  /** Pods the node takes (`status.capacity.pods` and `status.allocatable.pods`). */
  pods: number;
  labels?: Record<string, string>;
  /**
   * The second octet and the ordinal of its addresses (10.x.y.z InternalIP, 127.x.y.z ExternalIP),
   * so nodes of different pools never share one.
   */
  network: number;
  ordinal: number;
}

/**
 * A simulated node: a Node object (read-only through the API) with addresses. The external
 * address is a loopback address of its own (the first node's is 127.0.0.1, the next 127.0.0.2…;
 * Linux routes all of 127/8 to this machine): a game client here reaches what a GameServer
 * reports, and game servers on two nodes may listen on the same host port, as pods on two
 * machines do.
 */
export function simulatedNode(shape: NodeShape, uid: string, now: number): Resource {
  const { name, pods, network, ordinal } = shape;
  const host = `${network}.${Math.floor(ordinal / 250)}.${(ordinal % 250) + 1}`;
  const addresses: NodeAddress[] = [
    { type: 'Hostname', address: name },
    { type: 'ExternalIP', address: `127.${host}` },
    { type: 'InternalIP', address: `10.${host}` },
  ];
  const labels = { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'fleetsim.dev/simulated': 'true', ...shape.labels };
  return {
    apiVersion: 'v1',
    kind: NODE_KIND,
    metadata: clusterObjectMeta(name, uid, now, labels),
    spec: {},
    status: {
      addresses,
      capacity: { pods: String(pods), cpu: '8', memory: '32Gi' },
      allocatable: { pods: String(pods), cpu: '8', memory: '32Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'simulated by fleetsim' }],
    },
  };
}

/** The creation of a simulated node, as it goes into the log. */
export function nodeCreation(cluster: NodeMaker, shape: NodeShape) {
  return resourceEvent('ResourceCreated', NODE_KIND, '', shape.name, { object: simulatedNode(shape, cluster.rng.uid(), cluster.clock.now()) });
}

/** A pod's `spec.nodeSelector` (from a GameServer's template), or undefined when it has none. */
export function podNodeSelector(template: Record<string, unknown>): Record<string, string> | undefined {
  const selector = (template.spec as { nodeSelector?: unknown } | undefined)?.nodeSelector;
  if (!selector || typeof selector !== 'object' || Object.keys(selector).length === 0) return undefined;
  return selector as Record<string, string>;
}

/** Pods a Node takes, from its `status.allocatable.pods` (0 when it says nothing usable). */
export function allocatablePods(node: Resource): number {
  const pods = Number((node.status as { allocatable?: { pods?: unknown } } | undefined)?.allocatable?.pods);
  return Number.isInteger(pods) && pods > 0 ? pods : 0;
}

/** Creates the first `count` simulated nodes, each taking `pods` pods, that the log does not hold yet. */
export async function ensureNodes(cluster: NodeMaker, count: number, pods = MAX_PODS_PER_NODE): Promise<void> {
  const events = [];
  for (let i = 0; i < count; i++) {
    if (cluster.get(NODE_KIND, '', nodeName(i))) continue;
    events.push(nodeCreation(cluster, { name: nodeName(i), pods, network: 0, ordinal: i }));
  }
  await cluster.commit(events, { type: 'startup', detail: `the simulated cluster starts with ${count} nodes` });
}

/** The address Agones picks from a node: ExternalDNS, ExternalIP, InternalDNS, then InternalIP. */
export function nodeAddress(addresses: NodeAddress[]): string | undefined {
  for (const type of ['ExternalDNS', 'ExternalIP', 'InternalDNS', 'InternalIP']) {
    const found = addresses.find((a) => a.type === type);
    if (found) return found.address;
  }
  return undefined;
}
