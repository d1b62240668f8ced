import { apiErrors } from '../../k8s/status.js';
import type { NewEvent } from '../../log/event-log.js';
import type { DeletionScope, KindDeletion } from '../registry.js';
import { type Resource, resourceEvent } from '../resource.js';
import { NAMESPACE_KIND, UNDELETABLE_NAMESPACES, namespacePhase, terminatingNamespace } from './namespace.js';

/**
 * A namespace is deleted as the API server and its namespace controller do: it turns Terminating,
 * everything in it is deleted (GameServers whose process runs terminate first), and it goes once
 * empty — at once, or when the last of what was terminating has gone (`namespaceFinalization`).
 * The answer is the namespace as it is while terminating. The API server has no deletecollection
 * of namespaces: each goes through its own lifecycle.
 */
export const NAMESPACE_DELETION: KindDeletion = {
  deleteObject(namespace: Resource, scope: DeletionScope) {
    const { name } = namespace.metadata;
    if (UNDELETABLE_NAMESPACES.has(name)) throw apiErrors.forbidden(`namespaces "${name}" is forbidden: this namespace may not be deleted`);
    if (namespacePhase(namespace) === 'Terminating') {
      throw apiErrors.conflict(
        'namespaces',
        '',
        name,
        'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.',
      );
    }
    const terminating = terminatingNamespace(namespace, scope.now);
    const events: NewEvent[] = [resourceEvent('ResourceUpdated', NAMESPACE_KIND, '', name, { object: terminating })];
    // Owners and what they own are all in the namespace: each object is deleted on its own.
    for (const object of scope.contents(name)) events.push(...scope.ownDeletion(object));
    // Once those are applied, the namespace goes in the same transaction when nothing is left terminating.
    const afterwards = () => {
      const finalization = namespaceFinalization(name, scope);
      return finalization ? [finalization] : [];
    };
    return { events, answer: terminating, afterwards };
  },
  noCollection: 'namespaces are deleted one at a time',
};

/**
 * The event that removes a Terminating namespace once nothing is left in it, if that is now: what
 * it held was deleted with it, but what was terminating then (a GameServer whose process stops,
 * an object finalizers hold) is waited for.
 */
export function namespaceFinalization(name: string, scope: DeletionScope): NewEvent | undefined {
  const namespace = scope.get(NAMESPACE_KIND, '', name);
  if (!namespace || namespacePhase(namespace) !== 'Terminating') return undefined;
  if (scope.contents(name).some((o) => o.metadata.deletionTimestamp !== undefined)) return undefined;
  return resourceEvent('ResourceDeleted', NAMESPACE_KIND, '', name, {});
}
