import type { NewEvent } from '../log/event-log.js';
import { NAMESPACE_CONTENT_KINDS, definitionOfKind } from '../kinds/definitions.js';
import { rfc3339 } from '../kinds/meta.js';
import type { DeletionScope, KindDefinition } from '../kinds/registry.js';
import type { Resource } from '../kinds/resource.js';
import { apiErrors } from '../k8s/status.js';
import type { WriteOptions } from './admission.js';
import { writesOf } from './writes.js';

/** How a delete treats what the object owns: Background (the default) and Foreground delete it too; Orphan keeps it. */
export type DeletePropagation = 'Foreground' | 'Background' | 'Orphan';

export interface DeleteOptions extends WriteOptions {
  propagationPolicy?: DeletePropagation;
  /** What the object must still be for the delete to go ahead (409 Conflict otherwise). */
  preconditions?: { uid?: string; resourceVersion?: string };
}

/**
 * DeleteOptions' preconditions, checked as the API server's BeforeDelete checks them: a 409 on
 * the object's kind (not its resource, as the API server words it).
 */
export function requireDeletePreconditions(definition: KindDefinition, object: Resource, preconditions: DeleteOptions['preconditions']): void {
  const { uid, resourceVersion, name } = object.metadata;
  const conflict = (why: string) => apiErrors.conflict(definition.kind, definition.group, name, why);
  if (preconditions?.uid !== undefined && preconditions.uid !== uid) {
    throw conflict(`the UID in the precondition (${preconditions.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`);
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== resourceVersion) {
    throw conflict(
      `the ResourceVersion in the precondition (${preconditions.resourceVersion}) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`,
    );
  }
}

/** What the cascade reads, and the lifecycle it asks how an object with a process leaves. */
export interface CascadeStore {
  now(): number;
  get(kind: string, namespace: string, name: string): Resource | undefined;
  list(kind: string, namespace: string): Resource[];
  terminate(object: Resource): NewEvent[];
}

/** The events of deletions, as the API server and its garbage collector make them; each kind's own way through its deletion hooks. */
export class Cascade {
  constructor(private readonly store: CascadeStore) {}

  /** What a kind's deletion hooks are given. */
  scope(): DeletionScope {
    const { store } = this;
    return {
      now: store.now(),
      get: (kind, namespace, name) => store.get(kind, namespace, name),
      contents: (namespace) => NAMESPACE_CONTENT_KINDS.flatMap((kind) => store.list(kind, namespace)),
      ownDeletion: (object) => this.ownDeletion(object),
      terminate: (object) => store.terminate(object),
    };
  }

  /**
   * Events deleting an object and its dependents (children first). An object already terminating
   * is left as it is. One that finalizers keep turns terminating, and its dependents wait for it to
   * go unless the delete is Foreground. With Orphan its dependents stay and lose their reference to it.
   */
  deletionEvents(object: Resource, propagation: DeletePropagation = 'Background'): NewEvent[] {
    if (object.metadata.deletionTimestamp !== undefined) return [];
    const own = this.ownDeletion(object);
    if (propagation === 'Orphan') return [...this.children(object).map((dependent) => this.orphanEvent(dependent, object)), ...own];
    const stays = (object.metadata.finalizers?.length ?? 0) > 0;
    if (stays && propagation !== 'Foreground') return own;
    return [...this.children(object).flatMap((child) => this.deletionEvents(child, propagation)), ...own];
  }

  /**
   * The events deleting one object, its dependents aside: its kind's (a GameServer terminates while
   * its pod's process stops), or it goes, or — held by finalizers — it gets a deletionTimestamp and
   * stays. None when it is terminating already.
   */
  ownDeletion(object: Resource): NewEvent[] {
    const definition = definitionOfKind(object.kind)!;
    if (definition.deletion?.own) return definition.deletion.own(object, this.scope());
    if (object.metadata.deletionTimestamp !== undefined) return [];
    const { namespace, name, finalizers, generation } = object.metadata;
    if (!finalizers?.length) return [writesOf(definition).deleted(namespace, name)];
    // The registry's markAsDeleting: now, no grace period, and a new generation.
    const metadata = { ...object.metadata, deletionTimestamp: rfc3339(this.store.now()), deletionGracePeriodSeconds: 0, generation: generation > 0 ? generation + 1 : generation };
    return [writesOf(definition).updated(object, { ...object, metadata })];
  }

  /** A terminating object whose last finalizer is gone goes, and what it owns with it (in the background). */
  finalizedDeletion(object: Resource): NewEvent[] {
    const gone = writesOf(definitionOfKind(object.kind)!).deleted(object.metadata.namespace, object.metadata.name);
    return [...this.children(object).flatMap((child) => this.deletionEvents(child)), gone];
  }

  /** A dependent without its reference to `owner` (the garbage collector's update of an orphan). */
  private orphanEvent(dependent: Resource, owner: Resource): NewEvent {
    const { ownerReferences, ...metadata } = dependent.metadata;
    const kept = (ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
    const next: Resource = { ...dependent, metadata: kept.length ? { ...metadata, ownerReferences: kept } : metadata };
    return writesOf(definitionOfKind(dependent.kind)!).updated(dependent, next);
  }

  private children(parent: Resource): Resource[] {
    const kind = definitionOfKind(parent.kind)?.ownedKind;
    if (!kind) return [];
    return this.store.list(kind, parent.metadata.namespace).filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === parent.metadata.uid));
  }
}
