import type { FeatureGates } from '../features.js';
import type { FieldError } from '../k8s/validation.js';
import type { Schema } from '../k8s/schema.js';
import type { NewEvent } from '../log/event-log.js';
import type { Resource } from './resource.js';

/** A column of `kubectl get` (a CRD's additionalPrinterColumns). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
  /** A column computed from the whole object (core kinds' printers are code, not JSONPaths). */
  value?: (object: Resource) => unknown;
}

/**
 * Whose rules validation follows where the spec and Agones differ: the spec's (the default), or
 * Agones's for manifests brought from a real cluster (`serve --validation agones`).
 */
export type ValidationRules = 'spec' | 'agones';
export function isValidationRules(value: string): value is ValidationRules {
  return value === 'spec' || value === 'agones';
}

export interface KindContext {
  gates: FeatureGates;
  /** Milliseconds since the epoch, from the cluster's clock. */
  now: number;
  /** Absent: the spec's. */
  validation?: ValidationRules;
}

/**
 * The events that write a kind's objects, where they are not the Resource events that carry an
 * object whole (a GameServer's own events, which its reducer and lifecycle read).
 */
export interface KindWrites {
  created(object: Resource): NewEvent;
  /** `next` written over `current`. */
  updated(current: Resource, next: Resource): NewEvent;
  deleted(namespace: string, name: string): NewEvent;
}

/** What a kind's deletion hooks read and ask for, from the resource service that deletes. */
export interface DeletionScope {
  /** Milliseconds since the epoch, from the cluster's clock. */
  now: number;
  get(kind: string, namespace: string, name: string): Resource | undefined;
  /** Every object stored in a namespace, of every kind a namespace holds. */
  contents(namespace: string): Resource[];
  /** The events deleting one object on its own (its dependents aside), its kind's way. */
  ownDeletion(object: Resource): NewEvent[];
  /**
   * The lifecycle's events deleting an object whose pod runs a process: it goes at once, or
   * terminates while the process stops within its grace period.
   */
  terminate(object: Resource): NewEvent[];
}

/** How a kind's objects are deleted, where it differs from a plain object's (finalizers, then the garbage collector). */
export interface KindDeletion {
  /** The events deleting one object, its dependents aside. */
  own?(object: Resource, scope: DeletionScope): NewEvent[];
  /**
   * A DELETE of the object, in place of the cascade: the events, the answer, and what follows once
   * they are applied (a namespace turns Terminating, its content goes, and it goes once empty).
   */
  deleteObject?(object: Resource, scope: DeletionScope): { events: NewEvent[]; answer: Resource; afterwards(): NewEvent[] };
  /** Why a DELETE of a collection of them is refused, when it is. */
  noCollection?: string;
}

/** Everything the resource API needs to serve one kind. */
export interface KindDefinition {
  kind: string;
  listKind: string;
  group: string;
  version: string;
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  categories?: string[];
  verbs: string[];
  subresources: {
    status: boolean;
    scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
    /** `<plural>/log`: a container's output (Pods). */
    log?: boolean;
    /** `<plural>/eviction`: a policy/v1 Eviction posted for the object (Pods). */
    eviction?: boolean;
  };
  printerColumns: PrinterColumn[];
  /** Schema of the whole object (apiVersion, kind, metadata, spec, status…). */
  schema: Schema;
  /** Defaults, applied on create (and on update where the Agones webhook does); pure. */
  defaults?(object: Resource, context: KindContext, old?: Resource): Resource;
  /** Validation beyond the schema, with Kubernetes field errors; `old` is set on update. */
  validate?(object: Resource, context: KindContext, old?: Resource): FieldError[];
  /**
   * The command line an object makes fleetsim run (a GameServer's `fleetsim.dev/command`, or its
   * template's for a set or fleet), with the field that holds it: what a server whose commands
   * are off refuses.
   */
  commandOf?(object: Resource): { field: string; command: string } | undefined;
  /**
   * The status is folded from the kind's GameServers (sets, fleets): never stored, so a write of
   * it changes nothing.
   */
  derivedStatus?: boolean;
  /** The label a member GameServer carries with the object's name: the scale subresource's selector. */
  memberLabel?: string;
  /** The kind of the objects an object of this kind owns: deleted with it, as the garbage collector does. */
  ownedKind?: string;
  /** The events that write its objects; absent: Resource events, each carrying the object whole. */
  writes?: KindWrites;
  /** Built on read from what other kinds store (a Pod from its GameServer): never stored, left to its owner. */
  projected?: boolean;
  /** A projected kind some of whose objects are stored whole besides (Agones's own pods in agones-system). */
  alsoStored?: boolean;
  deletion?: KindDeletion;
  /** Installed by a CustomResourceDefinition, as Agones installs it (listed at apiextensions.k8s.io). */
  customResource?: boolean;
}

/** The body of the kinds fleetsim simulates and serves read-only (Node, Event): any fields. */
export const OPEN_OBJECT: Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

export function apiVersionOf(definition: KindDefinition): string {
  return definition.group ? `${definition.group}/${definition.version}` : definition.version;
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
export const AGE_COLUMN = AGE;

/** Verbs of a kind that can be read, written and watched. */
export const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
