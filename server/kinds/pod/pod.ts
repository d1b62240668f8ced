import { createHash } from 'node:crypto';
import type { GameServer } from '../gameserver-types.js';
import { type ObjectMeta, rfc3339 } from '../meta.js';
import type { Resource } from '../resource.js';
import { FLEETSIM_AGONES_VERSION, SDK_VERSION_ANNOTATION } from '../agones.js';

/**
 * A GameServer's Pod, as Agones builds it and a kubelet reports it: projected on read from the
 * GameServer and from what the kubelet knows of its container (never stored).
 */

export const POD_KIND = 'Pod';
export const SIDECAR_CONTAINER = 'agones-gameserver-sidecar';

/** A container's state, as a Pod's `status.containerStatuses[].state` shows it. */
export type ContainerState =
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: number }
  | { kind: 'terminated'; exitCode: number; signal?: string; reason: string; startedAt?: number; finishedAt: number };

export interface ContainerStatus {
  state: ContainerState;
  /** The previous run's end, once it has restarted. */
  lastState?: Extract<ContainerState, { kind: 'terminated' }>;
  restartCount: number;
}

/** States before the controller has created the pod. */
const BEFORE_POD = new Set(['PortAllocation', 'Creating']);
const SCHEDULED = new Set(['Scheduled', 'RequestReady', 'Ready', 'Reserved', 'Allocated', 'Shutdown', 'Unhealthy']);

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { containers?: Array<Record<string, unknown>>; [field: string]: unknown };
}

/** Whether a GameServer has a pod in this state (it has none before the controller created it). */
/** Kubernetes's default terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;

/** How long the pod's process is given between SIGTERM and SIGKILL (its terminationGracePeriodSeconds). */
export function terminationGraceMs(gs: GameServer): number {
  const seconds = ((gs.spec.template as { spec?: { terminationGracePeriodSeconds?: unknown } }).spec ?? {}).terminationGracePeriodSeconds;
  return (typeof seconds === 'number' && seconds >= 0 ? seconds : DEFAULT_GRACE_SECONDS) * 1000;
}

export function hasPod(gs: GameServer): boolean {
  return !BEFORE_POD.has(gs.status.state);
}

/** A host port a pod asks for on its node: what Kubernetes's scheduler keeps unique per node and protocol. */
export interface HostPort {
  port: number;
  protocol: 'TCP' | 'UDP';
}

/** The host ports of a GameServer's pod (a TCPUDP port asks for its number under both protocols; `None` asks for none). */
export function podHostPorts(gs: GameServer): HostPort[] {
  const ports: HostPort[] = [];
  for (const p of gs.spec.ports) {
    if (p.portPolicy === 'None' || !p.hostPort) continue;
    if (p.protocol !== 'UDP') ports.push({ port: p.hostPort, protocol: 'TCP' });
    if (p.protocol !== 'TCP') ports.push({ port: p.hostPort, protocol: 'UDP' });
  }
  return ports;
}

/** A uid derived from the GameServer's: stable, and distinct from it. */
export function podUid(gameServerUid: string): string {
  const h = createHash('sha1').update(`pod/${gameServerUid}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function containerStateJson(state: ContainerState): Record<string, unknown> {
  switch (state.kind) {
    case 'waiting':
      return { waiting: { reason: state.reason, ...(state.message && { message: state.message }) } };
    case 'running':
      return { running: { startedAt: rfc3339(state.startedAt) } };
    case 'terminated':
      return {
        terminated: {
          exitCode: state.exitCode,
          ...(state.signal && { signal: signalNumber(state.signal) }),
          reason: state.reason,
          ...(state.startedAt !== undefined && { startedAt: rfc3339(state.startedAt) }),
          finishedAt: rfc3339(state.finishedAt),
        },
      };
  }
}

function signalNumber(signal: string): number {
  return { SIGKILL: 9, SIGTERM: 15, SIGINT: 2, SIGSEGV: 11, SIGABRT: 6 }[signal] ?? 0;
}

/** The pod's phase from its game container (or, for a silent simulation, from the GameServer). */
function phaseOf(gs: GameServer, container: ContainerStatus | undefined): string {
  if (!SCHEDULED.has(gs.status.state) && gs.status.state !== 'Error') return 'Pending';
  if (gs.status.state === 'Error') return 'Failed';
  const state = container?.state;
  if (state?.kind === 'terminated' && (gs.status.state === 'Unhealthy' || gs.status.state === 'Shutdown')) {
    return state.exitCode === 0 ? 'Succeeded' : 'Failed';
  }
  return 'Running';
}

/** What an Event about a GameServer's pod names as its involved object (the kubelet reports on the pod). */
export function podReference(gs: GameServer): { apiVersion: string; kind: string; metadata: ObjectMeta } {
  return { apiVersion: 'v1', kind: POD_KIND, metadata: { ...gs.metadata, uid: podUid(gs.metadata.uid) } };
}

/** Builds the Pod of a GameServer: Agones's labels, annotations and owner; the template's spec; the kubelet's status. */
export function podOf(gs: GameServer, container: ContainerStatus | undefined): Resource {
  const { metadata } = gs;
  const template = gs.spec.template as PodTemplate;
  const spec = template.spec ?? {};
  const created = Date.parse(metadata.creationTimestamp);
  const gameContainerName = gs.spec.container ?? String(spec.containers?.[0]?.name ?? 'gameserver');
  const scheduled = SCHEDULED.has(gs.status.state);
  const game: ContainerStatus = container ?? { state: scheduled ? { kind: 'running', startedAt: created } : { kind: 'waiting', reason: 'ContainerCreating' }, restartCount: 0 };
  const phase = phaseOf(gs, container);
  const gameReady = game.state.kind === 'running';
  const podIp = gs.status.addresses?.find((a) => a.type === 'PodIP')?.address;
  const hostIp = gs.status.addresses?.find((a) => a.type === 'InternalIP')?.address;
  const containers = (spec.containers ?? []).map((c) => {
    if (c.name !== gameContainerName) return c;
    const ports = gs.spec.ports
      .filter((p) => (p.container ?? gameContainerName) === gameContainerName)
      .map((p) => ({
        name: p.name,
        containerPort: p.containerPort ?? p.hostPort,
        ...(p.portPolicy !== 'None' && p.hostPort !== undefined && { hostPort: p.hostPort }),
        protocol: p.protocol === 'TCPUDP' ? 'TCP' : (p.protocol ?? 'UDP'),
      }));
    return { ...c, ports };
  });
  const image = String(spec.containers?.find((c) => c.name === gameContainerName)?.image ?? '');
  const transition = rfc3339(created);
  const condition = (type: string, status: boolean) => ({ type, status: status ? 'True' : 'False', lastTransitionTime: transition });
  return {
    apiVersion: 'v1',
    kind: POD_KIND,
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: podUid(metadata.uid),
      resourceVersion: metadata.resourceVersion,
      generation: 1,
      creationTimestamp: metadata.creationTimestamp,
      ...(metadata.deletionTimestamp && { deletionTimestamp: metadata.deletionTimestamp }),
      labels: { ...template.metadata?.labels, 'agones.dev/role': 'gameserver', 'agones.dev/gameserver': metadata.name },
      annotations: {
        ...template.metadata?.annotations,
        'agones.dev/container': gameContainerName,
        [SDK_VERSION_ANNOTATION]: FLEETSIM_AGONES_VERSION,
      },
      ownerReferences: [
        { apiVersion: gs.apiVersion, kind: gs.kind, name: metadata.name, uid: metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      ...spec,
      containers,
      initContainers: [
        { name: SIDECAR_CONTAINER, image: `us-docker.pkg.dev/agones-images/release/agones-sdk:${FLEETSIM_AGONES_VERSION}`, restartPolicy: 'Always' },
        ...((spec.initContainers as unknown[] | undefined) ?? []),
      ],
      hostname: metadata.name.replace(/\./g, '-'),
      ...(gs.status.nodeName && { nodeName: gs.status.nodeName }),
    },
    status: {
      phase,
      conditions: [
        condition('PodScheduled', scheduled),
        condition('Initialized', scheduled),
        condition('ContainersReady', scheduled && gameReady),
        condition('Ready', scheduled && gameReady),
      ],
      ...(hostIp && { hostIP: hostIp }),
      ...(podIp && { podIP: podIp, podIPs: [{ ip: podIp }] }),
      ...(scheduled && { startTime: transition }),
      initContainerStatuses: [
        { name: SIDECAR_CONTAINER, ready: scheduled, started: scheduled, restartCount: 0, state: scheduled ? { running: { startedAt: transition } } : { waiting: { reason: 'PodInitializing' } } },
      ],
      containerStatuses: [
        {
          name: gameContainerName,
          image,
          ready: gameReady && scheduled,
          started: gameReady,
          restartCount: game.restartCount,
          state: containerStateJson(game.state),
          ...(game.lastState && { lastState: containerStateJson(game.lastState) }),
        },
      ],
    },
  } as Resource;
}

/** `kubectl get pods`'s columns, computed as its printer does. */
export function podReady(pod: Resource): string {
  const status = pod.status as { containerStatuses?: Array<{ ready: boolean }>; initContainerStatuses?: Array<{ ready: boolean }> };
  const all = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  return `${all.filter((c) => c.ready).length}/${all.length}`;
}

export function podStatusText(pod: Resource): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const status = pod.status as { phase: string; containerStatuses?: Array<{ state: { waiting?: { reason?: string }; terminated?: { reason?: string } } }> };
  for (const c of status.containerStatuses ?? []) {
    const reason = c.state.waiting?.reason ?? c.state.terminated?.reason;
    if (reason) return reason;
  }
  return status.phase;
}

export function podRestarts(pod: Resource): number {
  const status = pod.status as { containerStatuses?: Array<{ restartCount: number }> };
  return (status.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0);
}
