import type { StoredEvent } from '../log/event-log.js';
import type { ObjectMeta } from './meta.js';

/**
 * Kinds without lifecycle logic of their own (Fleet, GameServerSet, FleetAutoscaler,
 * GameServerAllocationPolicy, Secret, Node, Event) are stored whole: the API or a controller
 * decides the new object, and the event carries it.
 */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

export interface ResourceEventPayloads {
  ResourceCreated: { object: Resource };
  ResourceUpdated: { object: Resource };
  /** A controller's status write (the status subresource). */
  ResourceStatusSet: { status: unknown };
  ResourceDeleted: Record<string, never>;
}
export type ResourceEventType = keyof ResourceEventPayloads;

export function resourceEvent<T extends ResourceEventType>(
  type: T,
  kind: string,
  namespace: string,
  name: string,
  payload: ResourceEventPayloads[T],
) {
  return { type, kind, namespace, name, payload };
}

export function evolveResource(object: Resource | undefined, event: StoredEvent): Resource | undefined {
  const resourceVersion = String(event.seq);
  switch (event.type as ResourceEventType) {
    case 'ResourceCreated':
    case 'ResourceUpdated': {
      const next = (event.payload as ResourceEventPayloads['ResourceCreated']).object;
      return { ...next, metadata: { ...next.metadata, resourceVersion } };
    }
    case 'ResourceStatusSet':
      if (!object) return object;
      return {
        ...object,
        metadata: { ...object.metadata, resourceVersion },
        status: (event.payload as ResourceEventPayloads['ResourceStatusSet']).status,
      };
    case 'ResourceDeleted':
      return undefined;
    default:
      return object;
  }
}

/**
 * The metadata of an object `owner` makes from its template (a set's GameServer, a fleet's set):
 * the template's, named after the owner, in its namespace, with `labels`, controlled by the owner.
 */
export function ownedMetadata(owner: Resource, templateMeta: Record<string, unknown>, labels: Record<string, string>): Record<string, unknown> {
  const { name: _name, namespace: _namespace, generateName: _generateName, uid: _uid, resourceVersion: _rv, ...meta } = templateMeta;
  return {
    ...meta,
    generateName: `${owner.metadata.name}-`,
    namespace: owner.metadata.namespace,
    labels,
    annotations: { ...((templateMeta.annotations as Record<string, string> | undefined) ?? {}) },
    ownerReferences: [
      { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
    ],
  };
}
