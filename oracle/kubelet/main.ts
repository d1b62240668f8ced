import { mkdirSync } from 'node:fs';
import { Api, ApiError, Informer } from '../api.js';
import { readConfig } from '../config.js';
import { nodeNetwork } from '../paths.js';
import { run } from '../shell.js';
import { HostPorts } from './host-ports.js';
import { type Pod } from './pod.js';
import { PodWorker } from './pod-worker.js';
import { timestamp } from './status.js';
import { type SourceObject } from './volumes.js';

/**
 * The stand-in kubelet of one node, run inside the node's network namespace by the supervisor:
 *   node dist/oracle/kubelet/main.js CONFIG NODE-INDEX
 * It registers its Node (Ready, with the node's address), renews its Lease, and runs the pods
 * bound to it (pod-worker.ts). SIGTERM stops their containers and removes their namespaces, leaving the API's
 * objects as they are (the whole cluster is going down).
 */

const LEASE_SECONDS = 40;
const LEASE_RENEW_MS = 10_000;
const STATUS_EVERY_MS = 60_000;

async function main(): Promise<void> {
  const [configFile, indexText] = process.argv.slice(2);
  if (!configFile || !indexText) throw new Error('usage: kubelet/main.js CONFIG NODE-INDEX');
  const config = readConfig(configFile);
  const node = nodeNetwork(Number(indexText));
  const api = new Api(config.api);
  const log = (line: string) => console.log(`${timestamp()} ${line}`);
  mkdirSync(config.paths.pods, { recursive: true });
  // The pods' network namespaces are named in a /run/netns of this process's own mount namespace
  // (made by `ip netns exec`): the machine never sees them, and they go when the kubelet's processes do.
  await run('mount', ['-n', '-t', 'tmpfs', '-o', 'mode=755', 'fleetsim-oracle-pods', '/run/netns']);

  await register(api, node.name, node.ip, config.maxPods);
  const renew = setInterval(() => void renewLease(api, node.name).catch((error: Error) => log(`lease: ${error.message}`)), LEASE_RENEW_MS);
  const heartbeat = setInterval(() => void api.patch(`/api/v1/nodes/${node.name}/status`, { status: { conditions: conditions() } }).catch((error: Error) => log(`node status: ${error.message}`)), STATUS_EVERY_MS);

  const hostPorts = new HostPorts(node.ip);
  const addresses = new Map<string, string>();
  const taken = new Set<number>();
  const workers = new Map<string, PodWorker>();
  const context = {
    api,
    nodeName: node.name,
    nodeIP: node.ip,
    podGateway: node.podGateway,
    hostPorts,
    images: config.images,
    podsDir: config.paths.pods,
    hostsFile: config.paths.hosts,
    allocateIP(uid: string): string {
      for (let host = 2; host < 255; host++) {
        if (taken.has(host)) continue;
        taken.add(host);
        const address = node.podAddress(host);
        addresses.set(uid, address);
        return address;
      }
      throw new Error(`node ${node.name} has no pod address left`);
    },
    releaseIP(uid: string): void {
      const address = addresses.get(uid);
      if (address) taken.delete(Number(address.split('.')[3]));
      addresses.delete(uid);
    },
    log,
  };

  const pods = new Informer<Pod>(
    api,
    `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${node.name}`)}`,
    (type, pod) => {
      const uid = pod.metadata.uid!;
      if (type === 'DELETED') {
        workers.get(uid)?.removed();
        return;
      }
      let worker = workers.get(uid);
      if (!worker) {
        if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
        worker = new PodWorker(context, pod);
        workers.set(uid, worker);
        void worker.done.then(() => workers.delete(uid));
      }
      worker.update(pod);
    },
    (error) => log(`pods: ${error.message}`),
  );

  // Secrets and ConfigMaps as they change, for the volumes that show them (the kubelet's watch);
  // a deleted one leaves its files as they were.
  const sources = (['secrets', 'configmaps'] as const).map(
    (plural) =>
      new Informer<SourceObject>(
        api,
        `/api/v1/${plural}`,
        (type, object) => {
          if (type === 'DELETED') return;
          for (const worker of workers.values()) worker.sourceChanged(plural, object);
        },
        (error) => log(`${plural}: ${error.message}`),
      ),
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('stopping: ending every pod of the node');
    pods.stop();
    for (const informer of sources) informer.stop();
    clearInterval(renew);
    clearInterval(heartbeat);
    await Promise.all([...workers.values()].map((worker) => worker.shutdown()));
    hostPorts.closeAll();
    api.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop()).on('SIGINT', () => void stop());
  await pods.synced;
  log(`node ${node.name} (${node.ip}) is Ready`);
}

const since = timestamp();

function conditions() {
  const now = timestamp();
  const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: since });
  return [
    condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
}

async function register(api: Api, name: string, ip: string, maxPods: number): Promise<void> {
  const capacity = { cpu: '8', memory: '32Gi', pods: String(maxPods), 'ephemeral-storage': '100Gi' };
  const object = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' },
    },
    spec: {},
  };
  try {
    await api.create('/api/v1/nodes', object);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
  }
  await api.patch(`/api/v1/nodes/${name}/status`, {
    status: {
      capacity,
      allocatable: capacity,
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      conditions: conditions(),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: '',
        osImage: 'fleetsim oracle',
        containerRuntimeVersion: 'process://fleetsim-oracle',
        kubeletVersion: 'v1.34.4',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  });
  await renewLease(api, name);
}

async function renewLease(api: Api, name: string): Promise<void> {
  const renewTime = new Date().toISOString().replace(/Z$/, '000Z');
  const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
  try {
    await api.patch(path, { spec: { renewTime } });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    await api.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: LEASE_SECONDS, renewTime },
    });
  }
}

main().catch((error: Error) => {
  console.error(`kubelet: ${error.message}`);
  process.exit(1);
});
