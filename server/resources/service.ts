import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import type { GameServer } from '../kinds/gameserver-types.js';
import { gameServersCreated } from '../kinds/gameserver/events.js';
import type { ObjectMeta } from '../kinds/meta.js';
import { rfc3339 } from '../kinds/meta.js';
import { apiVersionOf, type KindContext, type KindDefinition, type ValidationRules } from '../kinds/registry.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { apiErrors } from '../k8s/status.js';
import { requireNameOnUrl } from '../k8s/decoding.js';
import { invalid, isDNS1123Subdomain } from '../k8s/validation.js';
import type { ResourceServicePort } from './ports.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { type LabelSelector, matchesSelector } from '../kinds/label-selector.js';
import { isJsonObject, jsonEqual } from '../kinds/common.js';
import { checkRules, decode, requireLiveNamespace, validate, type WriteOptions } from './admission.js';
import { Cascade, type DeleteOptions, type DeletePropagation, requireDeletePreconditions } from './deletion.js';
import { patchObject } from './patch.js';
import { writesOf } from './writes.js';

export type { FieldValidation, WriteOptions } from './admission.js';
export type { DeleteOptions, DeletePropagation } from './deletion.js';

export interface ResourceServiceOptions {
  /**
   * Why this server runs no commands, when it runs none (`serve` beyond loopback without
   * --allow-commands): a write that would make it run one is refused, saying why.
   */
  commandsOff?: string;
  /** Whose rules validation follows where the spec and Agones differ (default: the spec's). */
  validation?: ValidationRules;
}

/** Most characters a generated name may have; Kubernetes truncates the prefix to fit. */
const MAX_NAME = 63;

/**
 * The resource API's command handler: decides what a create, update, patch or delete means
 * (defaults, validation, optimistic concurrency, cascading deletes) and commits the events each
 * kind is written with. Adapters (HTTP, in-process callers) only parse and encode.
 *
 * Every write goes through the admission chain of a real API server running Agones's webhooks
 * (admission.ts): decode, mutate (the kind's defaults), then the schema's remaining rules and
 * validation on the object as it would be stored. Defaulting before the schema is what lets a
 * client built on Agones's Go types send `scheduling: ""`. A write that changes nothing is
 * answered with the object as it is, and nothing is appended.
 */
export class ResourceService {
  /** The first GameServer prepared from each body a caller reuses across batches (a set's template). */
  private readonly preparedCopies = new WeakMap<object, GameServer>();
  /** Deletions and what they take with them. */
  readonly cascade: Cascade;

  constructor(
    private readonly cluster: ResourceServicePort,
    private readonly options: ResourceServiceOptions = {},
  ) {
    this.cascade = new Cascade({
      now: () => cluster.clock.now(),
      get: (kind, namespace, name) => cluster.get(kind, namespace, name),
      list: (kind, namespace) => cluster.readModel.list(kind, namespace),
      // Only a GameServer's pod runs a process: the lifecycle decides how it leaves.
      terminate: (object) => cluster.termination.deletion(object as unknown as GameServer),
    });
  }

  private get context(): KindContext {
    return { gates: this.cluster.gates, now: this.cluster.clock.now(), validation: this.options.validation };
  }

  get(definition: KindDefinition, namespace: string, name: string): Resource {
    const object = this.cluster.get(definition.kind, definition.namespaced ? namespace : '', name);
    if (!object) throw apiErrors.notFound(definition.plural, definition.group, name);
    return object;
  }

  list(definition: KindDefinition, namespace: string | undefined, selector?: LabelSelector): Resource[] {
    const items = this.cluster.readModel.list(definition.kind, definition.namespaced ? namespace : undefined);
    const filtered = selector ? items.filter((o) => matchesSelector(selector, o.metadata.labels ?? {})) : items;
    return filtered.sort((a, b) =>
      a.metadata.namespace === b.metadata.namespace
        ? a.metadata.name.localeCompare(b.metadata.name)
        : a.metadata.namespace.localeCompare(b.metadata.namespace),
    );
  }

  /** Builds a new object and the event that creates it, without committing (controllers batch these). */
  prepareCreate(
    definition: KindDefinition,
    namespace: string,
    body: unknown,
    options: WriteOptions = {},
    /** Names already used by the batch being built (not yet in the read model). */
    taken?: ReadonlySet<string>,
  ): { object: Resource; event: NewEvent } {
    this.requireVerb(definition, 'create');
    const input = decode(definition, body, options);
    const ns = definition.namespaced ? namespace : '';
    if (definition.namespaced) requireLiveNamespace(this.cluster, definition, ns, input);
    const metadata = isJsonObject(input.metadata) ? (input.metadata as Partial<ObjectMeta>) : {};
    if (definition.namespaced && metadata.namespace && metadata.namespace !== ns) {
      throw apiErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    let name = metadata.name ?? '';
    if (!name) {
      if (!metadata.generateName) {
        throw apiErrors.invalid(definition.kind, definition.group, '', [
          { type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' },
        ]);
      }
      name = this.generateName(definition, ns, metadata.generateName, taken);
    }
    if (this.cluster.get(definition.kind, ns, name) || taken?.has(name)) {
      throw apiErrors.alreadyExists(definition.plural, definition.group, name);
    }
    const nameErrors = isDNS1123Subdomain(name);
    if (nameErrors.length) {
      throw apiErrors.invalid(definition.kind, definition.group, name, nameErrors.map((e) => invalid('metadata.name', name, e)));
    }
    let object: Resource = {
      ...input,
      apiVersion: apiVersionOf(definition),
      kind: definition.kind,
      metadata: {
        ...metadata,
        name,
        namespace: ns,
        uid: this.cluster.rng.uid(),
        resourceVersion: '0',
        generation: 1,
        creationTimestamp: rfc3339(this.cluster.clock.now()),
        labels: { ...(metadata.labels ?? {}) },
        annotations: { ...(metadata.annotations ?? {}) },
      },
    };
    delete object.metadata.deletionTimestamp;
    delete object.metadata.deletionGracePeriodSeconds;
    // No finalizers are stored as none (Go omits an empty list), so writing [] back changes nothing.
    if (!object.metadata.finalizers?.length) delete object.metadata.finalizers;
    if (definition.subresources.status) delete object.status;
    if (definition.defaults) object = definition.defaults(object, this.context);
    checkRules(definition, object);
    validate(definition, object, this.context, this.options.commandsOff);
    return { object, event: writesOf(definition).created(object) };
  }

  /**
   * Builds a batch of GameServers (a set's creations): each defaulted and validated as one
   * created alone, written as one event that holds their shared spec once.
   */
  prepareGameServerBatch(namespace: string, bodies: unknown[]): { objects: GameServer[]; events: NewEvent[] } {
    const objects: GameServer[] = [];
    const taken = new Set<string>();
    let first: { body: unknown; object: GameServer } | undefined;
    for (const body of bodies) {
      let object: GameServer;
      const generateName = isJsonObject(body) && isJsonObject(body.metadata) ? body.metadata.generateName : undefined;
      const copyable = typeof generateName === 'string' && !(isJsonObject(body) && isJsonObject(body.metadata) && body.metadata.name);
      if (!first && copyable && isJsonObject(body)) {
        // A body seen in an earlier batch (a set's template, kept by the set's controller): its
        // defaults and validation were those; only its namespace and creation time are new.
        const earlier = this.preparedCopies.get(body);
        if (earlier) {
          requireLiveNamespace(this.cluster, GAMESERVER_DEFINITION, namespace, body);
          first = { body, object: { ...earlier, metadata: { ...earlier.metadata, creationTimestamp: rfc3339(this.cluster.clock.now()) } } };
        }
      }
      if (first && body === first.body && copyable) {
        // The same body again: its defaults and validation are those of the first copy, and
        // objects are never mutated, so the copies share everything but their identity.
        const name = this.generateName(GAMESERVER_DEFINITION, namespace, generateName as string, taken);
        object = { ...first.object, metadata: { ...first.object.metadata, name, uid: this.cluster.rng.uid() } };
      } else {
        object = this.prepareCreate(GAMESERVER_DEFINITION, namespace, body, {}, taken).object as unknown as GameServer;
        if (!first) {
          first = { body, object };
          if (copyable && isJsonObject(body)) this.preparedCopies.set(body, object);
        }
      }
      taken.add(object.metadata.name);
      objects.push(object);
    }
    return { objects, events: gameServersCreated(namespace, objects) };
  }

  async create(definition: KindDefinition, namespace: string, body: unknown, options: WriteOptions = {}): Promise<Resource> {
    const { object, event } = this.prepareCreate(definition, namespace, body, options);
    if (options.dryRun) return object;
    return this.cluster.commitAndRead([event], () => this.get(definition, object.metadata.namespace, object.metadata.name), options.cause);
  }

  /** PUT: replaces the object; the body's resourceVersion must be the current one. */
  async update(definition: KindDefinition, namespace: string, name: string, body: unknown, options: WriteOptions = {}): Promise<Resource> {
    this.requireVerb(definition, 'update');
    const current = this.get(definition, namespace, name);
    const input = decode(definition, body, options, current);
    requireNameOnUrl(input.metadata, name, definition.namespaced ? namespace : undefined);
    const metadata = isJsonObject(input.metadata) ? (input.metadata as Partial<ObjectMeta>) : {};
    if (!metadata.resourceVersion) {
      throw apiErrors.invalid(definition.kind, definition.group, name, [
        invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
    }
    if (metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw apiErrors.conflict(definition.plural, definition.group, name);
    }
    return this.replace(definition, current, input, options);
  }

  /** PATCH: merge or JSON patch onto the current object, then the same rules as an update. */
  async patch(
    definition: KindDefinition,
    namespace: string,
    name: string,
    patch: unknown,
    contentType: string,
    options: WriteOptions = {},
  ): Promise<Resource> {
    this.requireVerb(definition, 'patch');
    const current = this.get(definition, namespace, name);
    const patched = patchObject(current, patch, contentType);
    requireNameOnUrl(patched.metadata, name, definition.namespaced ? namespace : undefined);
    const metadata = isJsonObject(patched.metadata) ? patched.metadata : {};
    if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw apiErrors.conflict(definition.plural, definition.group, name);
    }
    const input = decode(definition, patched, options, current);
    return this.replace(definition, current, input, options);
  }

  /** Writes the status subresource for a controller (its own status, e.g. FleetAutoscaler's). */
  async updateStatus(definition: KindDefinition, namespace: string, name: string, status: unknown, cause?: Cause): Promise<Resource> {
    const current = this.get(definition, namespace, name);
    if (definition.derivedStatus) return current;
    const event = resourceEvent('ResourceStatusSet', definition.kind, namespace, name, { status });
    return this.cluster.commitAndRead([event], () => this.get(definition, namespace, name), cause);
  }

  /** Deletes an object and, as Kubernetes's garbage collector would, everything it owns (or, with Orphan, lets it go). */
  async delete(definition: KindDefinition, namespace: string, name: string, options: DeleteOptions = {}): Promise<Resource> {
    this.requireVerb(definition, 'delete');
    const object = this.get(definition, namespace, name);
    requireDeletePreconditions(definition, object, options.preconditions);
    const deleteObject = definition.deletion?.deleteObject;
    if (deleteObject) {
      const { events, answer, afterwards } = deleteObject(object, this.cascade.scope());
      if (options.dryRun) return answer;
      const committed = this.cluster.commit(events, options.cause);
      // Applied already: what follows goes in the same transaction.
      const after = afterwards();
      await Promise.all([committed, after.length > 0 && this.cluster.commit(after, options.cause)]);
      return answer;
    }
    const events = this.cascade.deletionEvents(object, options.propagationPolicy);
    if (!options.dryRun) await this.cluster.commit(events, options.cause);
    return object;
  }

  /** DELETE of a collection: each object the selector matches, deleted as one DELETE would; answers what was deleted. */
  async deleteCollection(
    definition: KindDefinition,
    namespace: string | undefined,
    selector: LabelSelector | undefined,
    options: DeleteOptions = {},
    filter: (object: Resource) => boolean = () => true,
  ): Promise<Resource[]> {
    this.requireVerb(definition, 'delete');
    const refused = definition.deletion?.noCollection;
    if (refused) throw apiErrors.methodNotAllowed(refused);
    const deleted = this.list(definition, namespace, selector).filter(filter);
    // Each object's preconditions hold, or none is deleted.
    for (const object of deleted) requireDeletePreconditions(definition, object, options.preconditions);
    if (!options.dryRun) await this.cluster.commit(deleted.flatMap((object) => this.cascade.deletionEvents(object, options.propagationPolicy)), options.cause);
    return deleted;
  }

  /** Events deleting an object and its dependents, as a DELETE of it would (see Cascade). */
  deletionEvents(object: Resource, propagation?: DeletePropagation): NewEvent[] {
    return this.cascade.deletionEvents(object, propagation);
  }

  /** Writes `input` over `current` (an update, a patch, a scale): the kind's defaults and rules, then its update event. */
  async replace(definition: KindDefinition, current: Resource, input: Record<string, unknown>, options: WriteOptions): Promise<Resource> {
    const metadata = isJsonObject(input.metadata) ? (input.metadata as Partial<ObjectMeta>) : {};
    let next: Resource = {
      ...input,
      apiVersion: current.apiVersion,
      kind: current.kind,
      metadata: {
        ...current.metadata,
        labels: { ...(metadata.labels ?? {}) },
        annotations: { ...(metadata.annotations ?? {}) },
        ...(metadata.ownerReferences && { ownerReferences: metadata.ownerReferences }),
      },
    };
    // The finalizers are the written object's: a write that leaves them out removes them.
    if (metadata.finalizers?.length) next.metadata.finalizers = metadata.finalizers;
    else delete next.metadata.finalizers;
    // Where the status is a subresource it belongs to controllers: an update of the object leaves
    // it as it was. Where it is not (a GameServer), one update changes spec and status together.
    const writesStatus = !definition.subresources.status && input.status !== undefined;
    if (writesStatus) next.status = input.status;
    else if (current.status !== undefined) next.status = current.status;
    else delete next.status;
    if (definition.defaults) next = definition.defaults(next, this.context, current);
    // Compared as JSON values, so a body that only orders its keys differently changes nothing.
    const specChanged = !jsonEqual(next.spec, current.spec);
    if (specChanged) next = { ...next, metadata: { ...next.metadata, generation: current.metadata.generation + 1 } };
    // Nothing changed: nothing to validate (the object stands as accepted) and nothing to append.
    if (jsonEqual(next, current)) return this.unchanged(current);
    checkRules(definition, next, current);
    validate(definition, next, this.context, this.options.commandsOff, current);
    if (options.dryRun) return next;
    const { namespace, name } = current.metadata;
    // A terminating object's last finalizer removed: the write deletes it, and the answer is the object as written.
    if (next.metadata.deletionTimestamp !== undefined && !next.metadata.finalizers?.length) {
      await this.cluster.commit(this.cascade.finalizedDeletion(next), options.cause);
      return next;
    }
    return this.cluster.commitAndRead([writesOf(definition).updated(current, next)], () => this.get(definition, namespace, name), options.cause);
  }

  /** The answer to a write that changes nothing: the object, once all it rests on is durable. */
  async unchanged(current: Resource): Promise<Resource> {
    await this.cluster.settled();
    return current;
  }

  private requireVerb(definition: KindDefinition, verb: string): void {
    if (!definition.verbs.includes(verb)) {
      throw apiErrors.methodNotAllowed(`${definition.plural} cannot be changed through the API: fleetsim simulates them`);
    }
  }

  private generateName(definition: KindDefinition, namespace: string, prefix: string, taken?: ReadonlySet<string>): string {
    const base = prefix.slice(0, MAX_NAME - 5);
    for (;;) {
      const name = base + this.cluster.rng.suffix();
      if (!this.cluster.get(definition.kind, namespace, name) && !taken?.has(name)) return name;
    }
  }
}

