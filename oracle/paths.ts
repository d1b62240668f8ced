import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../loadtest/paths.js';

/**
 * Where the oracle keeps what it builds and what a run holds, and the addresses of its private
 * network. Everything lives under `${FLEETSIM_CACHE:-~/.cache/fleetsim}/oracle/`, outside the
 * repository: the built binaries survive `down`; `run/` is made afresh by each `up`.
 */

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FLEETSIM_CACHE) return env.FLEETSIM_CACHE;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'fleetsim');
}

export interface OraclePaths {
  root: string;
  /** The Go module kube-apiserver and kube-controller-manager are built from, and their binaries in bin/. */
  kube: string;
  kubeBin: string;
  /** Agones's source tree when it is not given by AGONES_SRC. */
  agonesSrc: string;
  /** Agones's binaries and the example game servers. */
  agonesBin: string;
  /** What `build` made, from which source. */
  buildRecord: string;
  run: string;
  /** The run's description, read by the supervisor and the kubelets. */
  config: string;
  state: string;
  kubeconfig: string;
  pki: string;
  logs: string;
  etcd: string;
  pods: string;
  /** The cluster's names for its Services, bind-mounted over /etc/hosts in every container. */
  hosts: string;
  /** The allocator's client certificate and CA, for mutual TLS from outside the cluster. */
  allocatorClient: string;
}

export function oraclePaths(env: NodeJS.ProcessEnv = process.env): OraclePaths {
  const root = join(cacheRoot(env), 'oracle');
  const run = join(root, 'run');
  return {
    root,
    kube: join(root, 'kube'),
    kubeBin: join(root, 'kube', 'bin'),
    agonesSrc: env.AGONES_SRC || join(root, 'agones-src'),
    agonesBin: join(root, 'agones-bin'),
    buildRecord: join(root, 'build.json'),
    run,
    config: join(run, 'oracle.json'),
    state: join(run, 'state.json'),
    kubeconfig: join(run, 'kubeconfig'),
    pki: join(run, 'pki'),
    logs: join(run, 'logs'),
    etcd: join(run, 'etcd'),
    pods: join(run, 'pods'),
    hosts: join(run, 'hosts'),
    allocatorClient: join(run, 'allocator-client'),
  };
}

/** The compiled oracle (dist/oracle), whose entry points the supervisor starts inside the namespaces. */
export const ORACLE_DIST = join(REPO_ROOT, 'dist', 'oracle');
export const CONTAINER_LAUNCHER = join(REPO_ROOT, 'oracle', 'kubelet', 'launch.sh');

/**
 * The network: one namespace for the control plane, holding a bridge the nodes' namespaces join;
 * each node routes its own pod subnet, each pod has a namespace of its own on its node's bridge.
 * Services' cluster IPs are addresses of the control namespace. Every namespace's name starts with
 * NETNS_PREFIX, so `down` finds all of them.
 */
export const NETNS_PREFIX = 'fleetsim-oracle';
export const CONTROL_NETNS = NETNS_PREFIX;
export const BRIDGE = 'fso-br0';
export const SERVICES_LINK = 'fso-svc';
export const CONTROL_IP = '10.77.0.1';
export const CLUSTER_PREFIX_LENGTH = 24;
export const SERVICE_CIDR = '10.96.0.0/16';
/** The first address of the service range: the `kubernetes` Service's, which the API server's certificate must name. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const API_PORT = 6443;
export const API_SERVER = `https://${CONTROL_IP}:${API_PORT}`;
/** The allocator Service's cluster IP, fixed so its certificate can name it. */
export const ALLOCATOR_IP = '10.96.100.1';
export const CLUSTER_DOMAIN = 'cluster.local';

export interface NodeNetwork {
  name: string;
  index: number;
  netns: string;
  ip: string;
  /** The node's pod subnet, `10.78.<index>.0/24`; the node's bridge is `.1`. */
  podSubnet: string;
  podGateway: string;
  /** The address of the node's `host`th pod slot (2 to 254). */
  podAddress(host: number): string;
  /** The control namespace's end of the node's link to the bridge. */
  uplink: string;
}

export function nodeNetwork(index: number): NodeNetwork {
  return {
    name: `oracle-node-${index}`,
    index,
    netns: `${NETNS_PREFIX}-node-${index}`,
    ip: `10.77.0.${10 + index}`,
    podSubnet: `10.78.${index}.0/24`,
    podGateway: `10.78.${index}.1`,
    podAddress: (host) => `10.78.${index}.${host}`,
    uplink: `fso-n${index}`,
  };
}

export const MAX_NODES = 200;
