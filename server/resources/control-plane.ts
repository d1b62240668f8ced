import type { ControlPlanePort } from './ports.js';
import { AGONES_NAMESPACE, agonesNamespaceCreation } from './agones-install.js';
import { FLEETSIM_AGONES_VERSION } from '../kinds/agones.js';
import { DEPLOYMENT_KIND, type DeploymentShape, deploymentObject, podTemplateHash, replicaSetName } from '../kinds/deployment/deployment.js';
import { hasLabels } from '../kinds/label-selector.js';
import { rfc3339 } from '../kinds/meta.js';
import { POD_KIND } from '../kinds/pod/pod.js';
import { runningPodStatus } from '../kinds/pod/created-pod.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';

/**
 * Agones's control plane as its Helm chart deploys it in agones-system: the Deployments
 * agones-controller (2 replicas), agones-extensions (2) and agones-allocator (3), and their pods.
 * fleetsim does their work in its own process; the objects are there for what clients read of
 * them (Agones's e2e subpackages list these pods by label, delete them, and wait for the
 * allocator's Deployment to be available). A deleted pod is replaced under a new name in the
 * same commit, as its ReplicaSet would replace it, so a replay of the log rebuilds the same pods.
 */

const RELEASE = { app: 'agones', release: 'agones' };
const IMAGES = 'us-docker.pkg.dev/agones-images/release';
const INSTALL_CAUSE: Cause = { type: 'startup', detail: "Agones's control plane is deployed as Agones's Helm chart deploys it" };

function component(name: string, replicas: number, role: Record<string, string>): DeploymentShape {
  const part = name.replace(/^agones-/, '');
  return {
    name,
    namespace: AGONES_NAMESPACE,
    replicas,
    podLabels: { ...RELEASE, ...role },
    labels: { ...RELEASE, component: part },
    container: { name, image: `${IMAGES}/${name}:${FLEETSIM_AGONES_VERSION}` },
  };
}

export const CONTROL_PLANE: readonly DeploymentShape[] = [
  component('agones-controller', 2, { 'agones.dev/role': 'controller' }),
  component('agones-extensions', 2, { 'agones.dev/role': 'extensions' }),
  component('agones-allocator', 3, { 'multicluster.agones.dev/role': 'allocator' }),
];

/** A pod of one of the Deployments, Running from `now` (the process is fleetsim's own). */
function podObject(shape: DeploymentShape, deployment: Resource, name: string, uid: string, now: number): Resource {
  const container = { name: shape.container.name, image: shape.container.image };
  return {
    apiVersion: 'v1',
    kind: POD_KIND,
    metadata: {
      name,
      namespace: shape.namespace,
      uid,
      resourceVersion: '0',
      generation: 1,
      creationTimestamp: rfc3339(now),
      labels: { ...shape.podLabels, 'pod-template-hash': podTemplateHash(shape) },
      annotations: {},
      ownerReferences: [
        // The ReplicaSet is not served: its uid is derived from the Deployment's, stable across restarts.
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: replicaSetName(shape), uid: `${deployment.metadata.uid.slice(0, -4)}0001`, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      containers: [{ ...container, imagePullPolicy: 'IfNotPresent' }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      serviceAccountName: shape.name === 'agones-allocator' ? 'agones-allocator' : 'agones-controller',
    },
    status: runningPodStatus([container], now),
  } as Resource;
}

/** Whether a pod carries a Deployment's pod labels (its selector's matchLabels). */
function selects(shape: DeploymentShape, pod: Resource): boolean {
  return pod.metadata.namespace === shape.namespace && hasLabels(pod.metadata.labels, shape.podLabels);
}

function podsOf(cluster: ControlPlanePort, shape: DeploymentShape): Resource[] {
  return cluster.readModel.list(POD_KIND, shape.namespace).filter((pod) => selects(shape, pod));
}

/** The events creating one new pod of a Deployment, under a name not taken (nor in `taken`). */
function newPod(cluster: ControlPlanePort, shape: DeploymentShape, deployment: Resource, taken: Set<string>): NewEvent {
  let name: string;
  do name = `${replicaSetName(shape)}-${cluster.rng.suffix()}`;
  while (taken.has(name) || cluster.get(POD_KIND, shape.namespace, name));
  taken.add(name);
  const pod = podObject(shape, deployment, name, cluster.rng.uid(), cluster.clock.now());
  return resourceEvent('ResourceCreated', POD_KIND, shape.namespace, name, { object: pod });
}

/** Writes the Deployments and pods the log has not got (none on a restart of a log that has them). */
export async function installControlPlane(cluster: ControlPlanePort): Promise<void> {
  const events: NewEvent[] = [];
  const taken = new Set<string>();
  for (const shape of CONTROL_PLANE) {
    let deployment = cluster.get(DEPLOYMENT_KIND, shape.namespace, shape.name);
    if (!deployment) {
      deployment = deploymentObject(shape, cluster.rng.uid(), cluster.clock.now());
      events.push(resourceEvent('ResourceCreated', DEPLOYMENT_KIND, shape.namespace, shape.name, { object: deployment }));
    }
    for (let n = podsOf(cluster, shape).length; n < shape.replicas; n++) events.push(newPod(cluster, shape, deployment, taken));
  }
  if (events.length > 0) await cluster.commit([...agonesNamespaceCreation(cluster), ...events], INSTALL_CAUSE);
}

/** The events deleting a stored pod: with, for a pod of a control-plane Deployment, its replacement. */
export function storedPodDeletion(cluster: ControlPlanePort, pod: Resource): NewEvent[] {
  const { namespace, name } = pod.metadata;
  const deleted = resourceEvent('ResourceDeleted', POD_KIND, namespace, name, {});
  const shape = CONTROL_PLANE.find((s) => selects(s, pod));
  const deployment = shape && cluster.get(DEPLOYMENT_KIND, shape.namespace, shape.name);
  if (!shape || !deployment) return [deleted];
  return [deleted, newPod(cluster, shape, deployment, new Set([name]))];
}
