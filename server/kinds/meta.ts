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
  deletionGracePeriodSeconds?: number;
  generateName?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** The metadata of a cluster-scoped object the cluster makes itself (a node, a system namespace). */
export function clusterObjectMeta(name: string, uid: string, now: number, labels: Record<string, string>): ObjectMeta {
  return { name, namespace: '', uid, resourceVersion: '0', generation: 1, creationTimestamp: rfc3339(now), labels, annotations: {} };
}

/** `ns/name`: the key of a namespaced object in the read model. */
export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Kubernetes writes times with second precision and a Z. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Go's time.RFC3339Nano in UTC for epoch milliseconds, as Agones writes agones.dev/last-allocated:
 * the fraction has up to nine digits with trailing zeros dropped, and no dot at all when it is
 * zero. A fractional `ms` is kept to the microsecond, about the precision a double holds for
 * today's epoch milliseconds.
 */
let lastNano: { ms: number; text: string } | undefined;

export function rfc3339Nano(ms: number): string {
  // Allocations in one batch share a time: format it once.
  if (lastNano?.ms === ms) return lastNano.text;
  const text = formatNano(ms);
  lastNano = { ms, text };
  return text;
}

/** The date and time to the second, kept for the next call: allocations come many to a second. */
let lastSecond: { seconds: number; text: string } | undefined;

function formatNano(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (lastSecond?.seconds !== seconds) lastSecond = { seconds, text: new Date(seconds * 1000).toISOString().slice(0, 19) };
  const base = lastSecond.text;
  const micros = Math.min(999_999, Math.round((ms - seconds * 1000) * 1000));
  if (micros === 0) return `${base}Z`;
  // Nanoseconds are the microseconds and three zeros: trailing zeros go, so only the micros' digits matter.
  let digits = String(micros).padStart(6, '0');
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 48) end--;
  digits = digits.slice(0, end);
  return `${base}.${digits}Z`;
}

/** Applies a metadata patch where `null` removes a key; returns the same map when nothing changes. */
export function patchMap(
  current: Record<string, string>,
  patch: Record<string, string | null> | undefined,
): Record<string, string> {
  if (!patch) return current;
  let next: Record<string, string> | undefined;
  // for…in, not Object.entries: every allocation patches the annotations, and the entries array cost an allocation each time.
  for (const key in patch) {
    const value = patch[key];
    if (value === undefined || (value === null ? !(key in current) : current[key] === value)) continue;
    next ??= { ...current };
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next ?? current;
}
