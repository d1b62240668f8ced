import { type ObjectMeta, rfc3339 } from '../meta.js';
import type { Resource } from '../resource.js';

/**
 * Kubernetes Events (core/v1 `Event`) as Agones's controllers record them. Two sources build
 * them with this one builder: the controllers' recorder (stored objects) and the read model's
 * window of Events derived from the GameServer log (built when listed).
 */

export const EVENT_KIND = 'Event';

export type EventType = 'Normal' | 'Warning';

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export interface KubernetesEvent extends Resource {
  apiVersion: 'v1';
  kind: 'Event';
  involvedObject: InvolvedObject;
  reason: string;
  message: string;
  type: EventType;
  source: { component: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

export interface EventFields {
  type: EventType;
  reason: string;
  message: string;
}

/** Who an Event is about, and how the builder is told who it is. */
export interface EventIdentity {
  name: string;
  uid: string;
  /** '0' for an Event about to be created (the log gives it its version), the log sequence otherwise. */
  resourceVersion: string;
  /** Epoch milliseconds: creation, first and last time. */
  time: number;
}

export function involvedObjectOf(object: { apiVersion: string; kind: string; metadata: ObjectMeta }): InvolvedObject {
  const { namespace, name, uid } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, namespace, name, uid };
}

/** Builds the Event object (pure): its name, uid, version and time are given by the caller. */
export function buildKubernetesEvent(
  involved: InvolvedObject,
  fields: EventFields,
  component: string,
  identity: EventIdentity,
): KubernetesEvent {
  const time = rfc3339(identity.time);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: identity.name,
      namespace: involved.namespace,
      uid: identity.uid,
      resourceVersion: identity.resourceVersion,
      generation: 1,
      creationTimestamp: time,
      labels: {},
      annotations: {},
    },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      namespace: involved.namespace,
      name: involved.name,
      uid: involved.uid,
    },
    reason: fields.reason,
    message: fields.message,
    type: fields.type,
    source: { component },
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}
