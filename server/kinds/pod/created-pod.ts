import { rfc3339 } from '../meta.js';
import type { Resource } from '../resource.js';
import { isJsonObject } from '../common.js';
import { type FieldError, PORT_NUMBER_RANGE, duplicate, forbidden, invalid, isDNS1123Label, isPortNumber, notFound, notSupported, required } from '../../k8s/validation.js';

/**
 * A Pod a client creates through the API (not a GameServer's, which Agones builds): the API
 * server's defaults and validation for the fields clients send, and the status the scheduler
 * and kubelet give it. fleetsim places such a pod at once on the loopback address its own
 * control-plane pods have, and its containers run; only an image fleetsim simulates
 * (server/sim/pod-processes.ts) answers on their ports.
 */

export interface CreatedContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}

export interface VolumeMount {
  name?: string;
  mountPath?: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface CreatedContainer {
  name?: string;
  image?: string;
  args?: string[];
  env?: Array<{ name?: string; value?: string }>;
  ports?: CreatedContainerPort[];
  volumeMounts?: VolumeMount[];
  imagePullPolicy?: string;
}

/** A key of a Secret or ConfigMap written to a path of its own inside the volume. */
export interface KeyToPath {
  key?: string;
  path?: string;
}

/** A pod's volume: its name and one source (the sources fleetsim reads are typed). */
export interface PodVolume {
  name?: string;
  secret?: { secretName?: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  emptyDir?: { medium?: string; sizeLimit?: string };
  [source: string]: unknown;
}

interface CreatedPodSpec {
  containers?: CreatedContainer[];
  volumes?: PodVolume[];
  [field: string]: unknown;
}

/** The address a stored pod has (Agones's own and created ones): its node's and its own. */
export const CREATED_POD_IP = '127.0.0.1';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const RESTART_POLICIES = ['Always', 'Never', 'OnFailure'];

/** The containers of a pod's spec (none when the spec holds none). */
export function containersOf(pod: Resource): CreatedContainer[] {
  const spec = pod.spec as CreatedPodSpec | undefined;
  return Array.isArray(spec?.containers) ? spec.containers : [];
}

/** The volumes of a pod's spec. */
export function volumesOf(pod: Resource): PodVolume[] {
  const spec = pod.spec as CreatedPodSpec | undefined;
  return Array.isArray(spec?.volumes) ? spec.volumes : [];
}

/** Kubernetes's pull-policy default: Always for `:latest` or no tag, else IfNotPresent. */
function pullPolicyOf(image: string): string {
  const last = image.split('/').pop() ?? '';
  if (last.includes('@')) return 'IfNotPresent';
  const tag = last.split(':')[1];
  return tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The API server's defaults, then what scheduling and the kubelet make of the pod: Running, its containers started. */
export function createdPodDefaults(pod: Resource, now: number): Resource {
  const spec = (isJsonObject(pod.spec) ? pod.spec : {}) as CreatedPodSpec;
  const containers = containersOf(pod).map((c) => ({
    ...c,
    ...(c.ports && { ports: c.ports.map((p) => ({ ...p, protocol: p.protocol || 'TCP' })) }),
    imagePullPolicy: c.imagePullPolicy || pullPolicyOf(c.image ?? ''),
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  }));
  return {
    ...pod,
    spec: {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      schedulerName: 'default-scheduler',
      serviceAccountName: 'default',
      ...spec,
      containers,
    },
    status: runningPodStatus(containers, now),
  } as Resource;
}

/** The status of a stored pod placed on 127.0.0.1 and started at `now`: Running, every container ready. */
export function runningPodStatus(containers: ReadonlyArray<{ name?: string; image?: string }>, now: number): Record<string, unknown> {
  const time = rfc3339(now);
  const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: time });
  return {
    phase: 'Running',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
    hostIP: CREATED_POD_IP,
    podIP: CREATED_POD_IP,
    podIPs: [{ ip: CREATED_POD_IP }],
    startTime: time,
    containerStatuses: containers.map((c) => ({ name: c.name, image: c.image, ready: true, started: true, restartCount: 0, state: { running: { startedAt: time } } })),
  };
}

/** The API server's validation of the fields a created pod's containers carry. */
export function validateCreatedPod(pod: Resource): FieldError[] {
  const errors: FieldError[] = [];
  const spec = (isJsonObject(pod.spec) ? pod.spec : {}) as CreatedPodSpec;
  const containers = containersOf(pod);
  const volumes = validateVolumes(volumesOf(pod), errors);
  if (containers.length === 0) errors.push(required('spec.containers'));
  const names = new Set<string>();
  containers.forEach((c, i) => {
    const at = `spec.containers[${i}]`;
    uniqueLabelName(c.name, `${at}.name`, names, errors);
    if (!c.image) errors.push(required(`${at}.image`));
    if (c.imagePullPolicy && !PULL_POLICIES.includes(c.imagePullPolicy)) errors.push(notSupported(`${at}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES));
    const portNames = new Set<string>();
    (c.ports ?? []).forEach((p, j) => {
      const portAt = `${at}.ports[${j}]`;
      if (!p.containerPort) errors.push(required(`${portAt}.containerPort`));
      else if (!isPortNumber(p.containerPort)) errors.push(invalid(`${portAt}.containerPort`, p.containerPort, PORT_NUMBER_RANGE));
      if (p.protocol && !PROTOCOLS.includes(p.protocol)) errors.push(notSupported(`${portAt}.protocol`, p.protocol, PROTOCOLS));
      if (p.name) {
        if (portNames.has(p.name)) errors.push(duplicate(`${portAt}.name`, p.name));
        portNames.add(p.name);
      }
    });
    (c.env ?? []).forEach((e, j) => {
      if (!e.name) errors.push(required(`${at}.env[${j}].name`));
    });
    const mountPaths = new Set<string>();
    (c.volumeMounts ?? []).forEach((m, j) => {
      const mountAt = `${at}.volumeMounts[${j}]`;
      if (!m.name) errors.push(required(`${mountAt}.name`));
      else if (!volumes.has(m.name)) errors.push(notFound(`${mountAt}.name`, m.name));
      if (!m.mountPath) errors.push(required(`${mountAt}.mountPath`));
      else if (mountPaths.has(m.mountPath)) errors.push(invalid(`${mountAt}.mountPath`, m.mountPath, 'must be unique'));
      else mountPaths.add(m.mountPath);
    });
  });
  const restartPolicy = spec.restartPolicy;
  if (typeof restartPolicy === 'string' && restartPolicy !== '' && !RESTART_POLICIES.includes(restartPolicy)) {
    errors.push(notSupported('spec.restartPolicy', restartPolicy, RESTART_POLICIES));
  }
  return errors;
}

/** A container's or a volume's name: given, a DNS-1123 label, not taken by another in `names` (which it joins). */
function uniqueLabelName(name: string | undefined, field: string, names: Set<string>, errors: FieldError[]): void {
  if (!name) return void errors.push(required(field));
  for (const e of isDNS1123Label(name)) errors.push(invalid(field, name, e));
  if (names.has(name)) errors.push(duplicate(field, name));
  names.add(name);
}

/** The API server's checks of a pod's volumes; the names of those a mount may name. */
function validateVolumes(volumes: PodVolume[], errors: FieldError[]): Set<string> {
  const names = new Set<string>();
  volumes.forEach((v, i) => {
    const at = `spec.volumes[${i}]`;
    uniqueLabelName(v.name, `${at}.name`, names, errors);
    const sources = Object.keys(v).filter((key) => key !== 'name' && isJsonObject(v[key]));
    if (sources.length === 0) errors.push(required(at, 'must specify a volume type'));
    for (const extra of sources.slice(1)) errors.push(forbidden(`${at}.${extra}`, 'may not specify more than 1 volume type'));
    if (v.secret && !v.secret.secretName) errors.push(required(`${at}.secret.secretName`));
    if (v.configMap && !v.configMap.name) errors.push(required(`${at}.configMap.name`));
  });
  return names;
}
