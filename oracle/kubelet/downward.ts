import { type Pod } from './pod.js';

/**
 * A pod's field as the downward API gives it (`metadata.name`, `metadata.labels['x']`,
 * `status.podIP`, …), for environment variables and downwardAPI volumes alike.
 */
export function fieldValue(pod: Pod, fieldPath: string, addresses: { podIP: string; hostIP: string }): string {
  const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (keyed) return (keyed[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[keyed[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
    case 'metadata.annotations': {
      const map = (fieldPath === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations) ?? {};
      return Object.keys(map)
        .sort()
        .map((key) => `${key}=${JSON.stringify(map[key])}`)
        .join('\n');
    }
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return addresses.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return addresses.hostIP;
    default:
      throw new Error(`the downward API has no field ${fieldPath}`);
  }
}
