/** Kubernetes object metadata as fleetsim stores it (camelCase, as the resource API serves it). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  /** The log sequence number of the last event that touched the object. */
  resourceVersion: string;
  generation: number;
  /** RFC 3339, seconds precision, as Kubernetes writes it. */
  creationTimestamp: string;
  deletionTimestamp?: string;
  generateName?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** `ns/name`: the key of a namespaced object in the read model. */
export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Kubernetes writes times with second precision and a Z. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Applies a metadata patch where `null` removes a key; returns the same map when nothing changes. */
export function patchMap(
  current: Record<string, string>,
  patch: Record<string, string | null> | undefined,
): Record<string, string> {
  if (!patch) return current;
  let next: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null ? !(key in current) : current[key] === value) continue;
    next ??= { ...current };
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next ?? current;
}
