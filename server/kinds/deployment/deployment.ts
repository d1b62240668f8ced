import { createHash } from 'node:crypto';
import { rfc3339 } from '../meta.js';
import type { Resource } from '../resource.js';

/**
 * An apps/v1 Deployment of Agones's own control plane (agones-controller, agones-extensions,
 * agones-allocator), as Agones's Helm chart installs it. fleetsim runs what these pods would run
 * in its own process, so a Deployment is always fully available: its ReplicaSet replaces a deleted
 * pod at once.
 */

export const DEPLOYMENT_KIND = 'Deployment';

/** One Deployment: its name, how many pods it keeps, the labels of its pods (its selector too) and its container. */
export interface DeploymentShape {
  name: string;
  namespace: string;
  replicas: number;
  podLabels: Record<string, string>;
  labels: Record<string, string>;
  container: { name: string; image: string };
}

const HASH_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The pod-template-hash of a Deployment's ReplicaSet: stable for its template, as Kubernetes's is. */
export function podTemplateHash(shape: DeploymentShape): string {
  const digest = createHash('sha1').update(JSON.stringify([shape.name, shape.podLabels, shape.container])).digest();
  return Array.from(digest.subarray(0, 10), (byte) => HASH_ALPHABET[byte % HASH_ALPHABET.length]).join('');
}

/** The name of the ReplicaSet that owns a Deployment's pods. */
export function replicaSetName(shape: DeploymentShape): string {
  return `${shape.name}-${podTemplateHash(shape)}`;
}

/** The Deployment object, its status that of a rollout complete with every replica available. */
export function deploymentObject(shape: DeploymentShape, uid: string, now: number): Resource {
  const time = rfc3339(now);
  const { replicas } = shape;
  return {
    apiVersion: 'apps/v1',
    kind: DEPLOYMENT_KIND,
    metadata: {
      name: shape.name,
      namespace: shape.namespace,
      uid,
      resourceVersion: '0',
      generation: 1,
      creationTimestamp: time,
      labels: shape.labels,
      annotations: { 'deployment.kubernetes.io/revision': '1' },
    },
    spec: {
      replicas,
      selector: { matchLabels: shape.podLabels },
      template: { metadata: { labels: shape.podLabels }, spec: { containers: [{ name: shape.container.name, image: shape.container.image }] } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        { type: 'Available', status: 'True', lastUpdateTime: time, lastTransitionTime: time, reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
        {
          type: 'Progressing',
          status: 'True',
          lastUpdateTime: time,
          lastTransitionTime: time,
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${replicaSetName(shape)}" has successfully progressed.`,
        },
      ],
    },
  } as Resource;
}

/** `kubectl get deployments`' READY: ready of desired replicas. */
export function deploymentReady(object: Resource): string {
  const status = (object.status ?? {}) as { readyReplicas?: number };
  const spec = (object.spec ?? {}) as { replicas?: number };
  return `${status.readyReplicas ?? 0}/${spec.replicas ?? 0}`;
}
