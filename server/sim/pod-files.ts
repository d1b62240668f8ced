import type { CreatedContainer, PodVolume } from '../kinds/pod/created-pod.js';
import { volumesOf } from '../kinds/pod/created-pod.js';
import type { Resource } from '../kinds/resource.js';
import { SECRET_DEFINITION } from '../kinds/secret/definition.js';
import type { StoreReads } from '../runtime/store-ports.js';

/**
 * The files a container of a stored pod sees through its volume mounts, as the kubelet writes
 * them: a Secret volume holds a file per key (or per `items` entry, at its path); the other
 * sources hold nothing fleetsim can read (an emptyDir starts empty).
 */

/** The Secrets the kubelet reads. */
export type SecretReads = Pick<StoreReads, 'get'>;

function secretOf(store: SecretReads, namespace: string, volume: PodVolume): Resource | undefined {
  const name = volume.secret?.secretName;
  return name ? store.get(SECRET_DEFINITION.kind, namespace, name) : undefined;
}

/**
 * Why the container cannot start yet, if it cannot: a Secret it mounts that does not exist (and
 * is not `optional`) keeps it from starting, as the kubelet fails to mount the volume.
 */
export function unmountableVolume(store: SecretReads, pod: Resource, container: CreatedContainer): string | undefined {
  const volumes = volumesOf(pod);
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.find((v) => v.name === mount.name);
    if (!volume?.secret || volume.secret.optional) continue;
    if (!secretOf(store, pod.metadata.namespace, volume)) {
      return `MountVolume.SetUp failed for volume "${mount.name}" : secret "${volume.secret.secretName ?? ''}" not found`;
    }
  }
  return undefined;
}

/** The bytes of the file at `path` inside the container, if a mounted Secret holds it. */
export function mountedFile(store: SecretReads, pod: Resource, container: CreatedContainer, path: string): Buffer | undefined {
  const volumes = volumesOf(pod);
  // The deepest mount holding the path wins, as a mount inside another hides what is beneath.
  const mounts = (container.volumeMounts ?? [])
    .map((mount) => ({ mount, dir: (mount.mountPath ?? '').replace(/\/+$/, '') }))
    .filter(({ dir }) => path.startsWith(`${dir}/`))
    .sort((a, b) => b.dir.length - a.dir.length);
  const first = mounts[0];
  if (!first) return undefined;
  const volume = volumes.find((v) => v.name === first.mount.name);
  const secret = volume ? secretOf(store, pod.metadata.namespace, volume) : undefined;
  if (!volume?.secret || !secret) return undefined;
  const inVolume = [first.mount.subPath, path.slice(first.dir.length + 1)].filter(Boolean).join('/');
  const data = (secret.data ?? {}) as Record<string, string>;
  const items = volume.secret.items;
  const key = items ? items.find((item) => item.path === inVolume)?.key : inVolume;
  const value = key === undefined ? undefined : data[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64');
}
