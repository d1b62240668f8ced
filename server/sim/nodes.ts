import type { NodeAddress } from '../kinds/gameserver/gameserver.js';
import { clusterObjectMeta } from '../kinds/meta.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import type { Cluster } from '../cluster.js';

/** Pods a simulated node takes, as a default kubelet does. */
export const MAX_PODS_PER_NODE = 110;

export function nodeName(index: number): string {
  return `node-${index + 1}`;
}

/**
 * Simulated nodes: Node objects (read-only through the API) with addresses. The external
 * address is loopback, so a game client on this machine can reach what a GameServer reports.
 */
export function nodeObject(index: number, uid: string, now: number): Resource {
  const name = nodeName(index);
  const addresses: NodeAddress[] = [
    { type: 'Hostname', address: name },
    { type: 'ExternalIP', address: '127.0.0.1' },
    { type: 'InternalIP', address: `10.0.${Math.floor(index / 250)}.${(index % 250) + 1}` },
  ];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: clusterObjectMeta(name, uid, now, { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'fleetsim.dev/simulated': 'true' }),
    spec: {},
    status: {
      addresses,
      capacity: { pods: String(MAX_PODS_PER_NODE), cpu: '8', memory: '32Gi' },
      allocatable: { pods: String(MAX_PODS_PER_NODE), cpu: '8', memory: '32Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'simulated by fleetsim' }],
    },
  };
}

/** Creates the first `count` simulated nodes the log does not hold yet. */
export async function ensureNodes(cluster: Cluster, count: number): Promise<void> {
  const events = [];
  for (let i = 0; i < count; i++) {
    if (cluster.get('Node', '', nodeName(i))) continue;
    events.push(resourceEvent('ResourceCreated', 'Node', '', nodeName(i), { object: nodeObject(i, cluster.rng.uid(), cluster.clock.now()) }));
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
