import { type KubeObject } from '../api.js';

/** The parts of a Pod the stand-in kubelet and scheduler read (core/v1 names). */

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    resourceFieldRef?: { resource: string };
  };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string; host?: string; scheme?: 'HTTP' | 'HTTPS'; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command: string[] };
  grpc?: { port: number };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean }; prefix?: string }[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  /** `Always` on an init container makes it a sidecar. */
  restartPolicy?: 'Always';
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  hostPath?: { path: string };
  secret?: { secretName: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items: DownwardItem[]; defaultMode?: number };
  projected?: {
    defaultMode?: number;
    sources: {
      serviceAccountToken?: { path: string; expirationSeconds?: number; audience?: string };
      configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
      secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
      downwardAPI?: { items: DownwardItem[] };
    }[];
  };
}

export interface DownwardItem {
  path: string;
  fieldRef?: { fieldPath: string };
  mode?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

export interface PodAffinityTerm {
  labelSelector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[] };
  topologyKey: string;
  namespaces?: string[];
}

export interface PodSpec {
  nodeName?: string;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: {
    nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: { matchExpressions?: NodeSelectorRequirement[] }[] } };
    podAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: PodAffinityTerm }[] };
    podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: PodAffinityTerm }[] };
  };
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  serviceAccountName?: string;
  hostname?: string;
  subdomain?: string;
  hostNetwork?: boolean;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
}

export interface ContainerStatusJson {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: Record<string, unknown>;
  lastState: Record<string, unknown>;
}

export interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: PodCondition[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  reason?: string;
  message?: string;
  qosClass?: string;
  containerStatuses?: ContainerStatusJson[];
  initContainerStatuses?: ContainerStatusJson[];
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

/** A pod that has ended (Succeeded or Failed) holds no ports or place on its node. */
export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The host ports a pod asks for, as `protocol/port` (a pod without hostPort asks none). */
export function hostPortsOf(pod: Pod): string[] {
  const ports: string[] = [];
  for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
    for (const port of container.ports ?? []) if (port.hostPort) ports.push(`${port.protocol ?? 'TCP'}/${port.hostPort}`);
  }
  return ports;
}
