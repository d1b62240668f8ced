import { readdirSync } from 'node:fs';
import { BRIDGE, CLUSTER_PREFIX_LENGTH, CONTROL_IP, CONTROL_NETNS, NETNS_PREFIX, type NodeNetwork } from './paths.js';
import { ipBatch, netnsSysctl, run } from './shell.js';

/**
 * The oracle's private network, made with `ip`: nothing of it is visible from the machine's own
 * namespace. The control namespace holds the bridge; each node's namespace joins it with a veth
 * pair and routes its pod subnet behind a bridge of its own.
 */

export const NODE_BRIDGE = 'cbr0';

/** The namespaces a run made (or a crashed run left), found by their prefix. */
export function oracleNamespaces(): string[] {
  try {
    return readdirSync('/run/netns').filter((name) => name === NETNS_PREFIX || name.startsWith(`${NETNS_PREFIX}-`));
  } catch {
    return [];
  }
}

export async function createControlNetwork(): Promise<void> {
  await run('ip', ['netns', 'add', CONTROL_NETNS]);
  await ipBatch(['link set lo up', `link add ${BRIDGE} type bridge`, `addr add ${CONTROL_IP}/${CLUSTER_PREFIX_LENGTH} dev ${BRIDGE}`, `link set ${BRIDGE} up`], CONTROL_NETNS);
  await netnsSysctl(CONTROL_NETNS, 'net.ipv4.ip_forward', '1');
}

export async function createNodeNetwork(node: NodeNetwork): Promise<void> {
  await run('ip', ['netns', 'add', node.netns]);
  await ipBatch([`link add ${node.uplink} type veth peer name eth0 netns ${node.netns}`, `link set ${node.uplink} master ${BRIDGE}`, `link set ${node.uplink} up`], CONTROL_NETNS);
  await ipBatch(
    [
      'link set lo up',
      `addr add ${node.ip}/${CLUSTER_PREFIX_LENGTH} dev eth0`,
      'link set eth0 up',
      `route add default via ${CONTROL_IP}`,
      `link add ${NODE_BRIDGE} type bridge`,
      `addr add ${node.podGateway}/24 dev ${NODE_BRIDGE}`,
      `link set ${NODE_BRIDGE} up`,
    ],
    node.netns,
  );
  // Once the node's end is up, the control namespace can route the node's pods through it.
  await ipBatch([`route add ${node.podSubnet} via ${node.ip}`], CONTROL_NETNS);
  await netnsSysctl(node.netns, 'net.ipv4.ip_forward', '1');
}

/** Deletes every namespace of the oracle (their links go with them). */
export async function deleteNetworks(): Promise<string[]> {
  const failed: string[] = [];
  for (const name of oracleNamespaces()) {
    await run('ip', ['netns', 'del', name]).catch((error: Error) => failed.push(`${name}: ${error.message}`));
  }
  return failed;
}
