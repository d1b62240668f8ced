import { clusterObjectMeta, rfc3339 } from '../meta.js';
import type { Resource } from '../resource.js';

export const NAMESPACE_KIND = 'Namespace';

/** The namespaces a Kubernetes cluster has from its start. */
export const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

/** The namespaces the API server refuses to delete. */
export const UNDELETABLE_NAMESPACES = new Set(['default', 'kube-public', 'kube-system']);

/** The finalizer the API server puts on every namespace: its content goes before it does. */
export const NAMESPACE_FINALIZER = 'kubernetes';

export type NamespacePhase = 'Active' | 'Terminating';

export function namespacePhase(namespace: Resource): NamespacePhase {
  return (namespace.status as { phase?: NamespacePhase } | undefined)?.phase ?? 'Active';
}

/** A namespace as the API server creates it: Active, with the `kubernetes` finalizer. */
export function namespaceObject(name: string, uid: string, now: number): Resource {
  return {
    apiVersion: 'v1',
    kind: NAMESPACE_KIND,
    metadata: clusterObjectMeta(name, uid, now, { 'kubernetes.io/metadata.name': name }),
    spec: { finalizers: [NAMESPACE_FINALIZER] },
    status: { phase: 'Active' },
  };
}

/** The namespace as it is while its content is deleted: a deletionTimestamp and phase Terminating. */
export function terminatingNamespace(namespace: Resource, now: number): Resource {
  return {
    ...namespace,
    metadata: { ...namespace.metadata, deletionTimestamp: rfc3339(now), deletionGracePeriodSeconds: 0 },
    status: { ...(namespace.status as object | undefined), phase: 'Terminating' },
  };
}
