import type { KubeClient, KubeList } from './kube-client.js';
import { WATCHED_KINDS, collectionPath, identityOf } from './observe.js';
import type { RecordedState } from './recorded-state.js';

/**
 * Whether a recording holds what the cluster holds: every object of the recorded kinds, each at
 * the resourceVersion the cluster lists it with — nothing missed, nothing left over. Events are
 * left out: they expire on their own clock.
 */
const COMPARED_KINDS = WATCHED_KINDS.filter((kind) => kind.kind !== 'Event');

/** `kind/namespace/name@resourceVersion` of every compared object a list of the cluster holds now, sorted. */
export async function listedVersions(client: KubeClient): Promise<string[]> {
  const out: string[] = [];
  for (const kind of COMPARED_KINDS) {
    const list = await client.get<KubeList>(collectionPath(kind));
    for (const item of list.items ?? []) {
      const id = identityOf(item, kind);
      if (id) out.push(`${kind.kind}/${id.namespace}/${id.name}@${id.resourceVersion}`);
    }
  }
  return out.sort();
}

/** The same of what a recording holds. */
export function recordedVersions(state: RecordedState): string[] {
  const out: string[] = [];
  for (const kind of COMPARED_KINDS) {
    for (const recorded of state.ofKind(kind.kind)) out.push(`${kind.kind}/${recorded.object.metadata.namespace}/${recorded.object.metadata.name}@${recorded.resourceVersion}`);
  }
  return out.sort();
}
