import type { Cause } from '../log/cause.js';
import type { NewEvent } from '../log/event-log.js';
import { GAMESERVER_KIND, type GameServer } from '../kinds/gameserver/gameserver.js';
import { differOnlyInIdentity, gameServerEvent } from '../kinds/gameserver/events.js';
import type { ObjectMeta } from '../kinds/meta.js';
import { rfc3339 } from '../kinds/meta.js';
import { apiVersionOf, type KindContext, type KindDefinition, type ValidationRules } from '../kinds/registry.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';
import { checkSchema, pruneUnknown, type SchemaReport } from '../k8s/schema.js';
import { apiErrors } from '../k8s/status.js';
import { requireBodyType, requireNameOnUrl } from '../k8s/decoding.js';
import { type FieldError, forbidden, invalid, isDNS1123Subdomain } from '../k8s/validation.js';
import type { Cluster } from '../cluster.js';
import { GAMESERVER_DEFINITION } from '../kinds/gameserver/definition.js';
import { definitionOfKind, KIND_DEFINITIONS } from '../kinds/definitions.js';
import { NAMESPACE_KIND, namespacePhase, terminatingNamespace, UNDELETABLE_NAMESPACES } from '../kinds/namespace/namespace.js';
import { POD_KIND } from '../kinds/pod/pod.js';
import { type LabelSelector, matchesSelector } from '../kinds/label-selector.js';
import { tooDeeplyNested } from '../k8s/nesting.js';
import { jsonPatch, mergePatch } from './patch.js';
import { scaleErrors } from './scale-validation.js';
import { isJsonObject, jsonEqual, objectAt, validateObjectMeta, validateObjectMetaUpdate } from '../kinds/common.js';
import { stringifyJsonExact } from '../log/json.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  /** What asked for the write (a request, a controller, an autoscaler): recorded with its events. */
  cause?: Cause;
  fieldValidation?: FieldValidation;
  /** Filled with warnings for the client (fieldValidation=Warn), sent as `Warning` headers. */
  warnings?: string[];
}

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

/** The kinds of what a namespace holds and its deletion deletes (pods are projected from GameServers; allocations are never stored). */
export const NAMESPACE_CONTENT_KINDS: readonly string[] = KIND_DEFINITIONS.filter(
  (d) => d.namespaced && d.kind !== POD_KIND && d.verbs.includes('list'),
).map((d) => d.kind);

export interface ResourceServiceOptions {
  /**
   * Why this server runs no commands, when it runs none (`serve` beyond loopback without
   * --allow-commands): a write that would make it run one is refused, saying why.
   */
  commandsOff?: string;
  /** Whose rules validation follows where the spec and Agones differ (default: the spec's). */
  validation?: ValidationRules;
}

const INT32_MAX = 2_147_483_647;

/** Most characters a generated name may have; Kubernetes truncates the prefix to fit. */
const MAX_NAME = 63;

/**
 * The resource API's command handler: decides what a create, update, patch or delete means
 * (defaults, validation, optimistic concurrency, cascading deletes) and commits the events.
 * Adapters (HTTP, in-process callers) only parse and encode.
 *
 * Every write goes through the admission chain of a real API server running Agones's webhooks:
 * decode (kind, unknown fields, types: what decoding into Go types refuses), mutate (the kind's
 * defaults), then the schema's remaining rules (enums, bounds, required) and validation (object
 * metadata, the kind's rules) on the object as it would be stored. Defaulting before the schema
 * is what lets a client built on Agones's Go types send `scheduling: ""`. A write that changes
 * nothing is answered with the object as it is, and nothing is appended.
 */
export class ResourceService {
  /** The first GameServer prepared from each body a caller reuses across batches (a set's template). */
  private readonly preparedCopies = new WeakMap<object, GameServer>();

  constructor(
    private readonly cluster: Cluster,
    private readonly options: ResourceServiceOptions = {},
  ) {}

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
    const input = this.decode(definition, body, options);
    const ns = definition.namespaced ? namespace : '';
    if (definition.namespaced) this.requireLiveNamespace(definition, ns, input);
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
    this.checkRules(definition, object);
    this.validate(definition, object);
    const event =
      definition.kind === GAMESERVER_KIND
        ? gameServerEvent('GameServerCreated', ns, name, { object: object as unknown as GameServer })
        : resourceEvent('ResourceCreated', definition.kind, ns, name, { object });
    return { object, event };
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
          this.requireLiveNamespace(GAMESERVER_DEFINITION, namespace, body);
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
    if (objects.length === 0) return { objects, events: [] };
    const spec = objects[0]!.spec;
    const specJson = stringifyJsonExact(spec);
    if (objects.some((o) => o.spec !== spec && stringifyJsonExact(o.spec) !== specJson)) {
      return { objects, events: objects.map((o) => gameServerEvent('GameServerCreated', namespace, o.metadata.name, { object: o })) };
    }
    const withoutSpec = ({ spec: _spec, ...rest }: GameServer) => rest;
    // A set's copies of its template: written as one object and the names and uids of all.
    const payload = objects.every((o) => differOnlyInIdentity(o, objects[0]!))
      ? { spec, template: withoutSpec(objects[0]!), members: objects.map((o) => ({ name: o.metadata.name, uid: o.metadata.uid })) }
      : { spec, objects: objects.map(withoutSpec) };
    return { objects, events: [gameServerEvent('GameServersCreated', namespace, '', payload)] };
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
    const input = this.decode(definition, body, options, current);
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
    const patched = this.applyPatch(current, patch, contentType);
    requireNameOnUrl(patched.metadata, name, definition.namespaced ? namespace : undefined);
    const metadata = isJsonObject(patched.metadata) ? patched.metadata : {};
    if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw apiErrors.conflict(definition.plural, definition.group, name);
    }
    const input = this.decode(definition, patched, options, current);
    return this.replace(definition, current, input, options);
  }

  /** The scale subresource: `spec.replicas` of a Fleet or GameServerSet. */
  getScale(definition: KindDefinition, namespace: string, name: string): Record<string, unknown> {
    if (!definition.subresources.scale) throw apiErrors.pathNotFound();
    const object = this.get(definition, namespace, name);
    const spec = object.spec as { replicas?: number };
    const status = object.status as { replicas?: number } | undefined;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name,
        namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
        creationTimestamp: object.metadata.creationTimestamp,
      },
      spec: { replicas: spec.replicas ?? 0 },
      status: {
        replicas: status?.replicas ?? 0,
        selector: `${definition.memberLabel}=${name}`,
      },
    };
  }

  async updateScale(
    definition: KindDefinition,
    namespace: string,
    name: string,
    body: unknown,
    contentType: string | undefined,
    options: WriteOptions = {},
  ): Promise<Record<string, unknown>> {
    const currentScale = this.getScale(definition, namespace, name);
    const scale = contentType ? this.applyPatch(currentScale as unknown as Resource, body, contentType) : body;
    if (!isJsonObject(scale)) throw apiErrors.badRequest('the body must be an autoscaling/v1 Scale object');
    // A Scale for this object, as the API server decodes it: `{}` names no object and scales nothing.
    requireBodyType(scale, { kind: 'Scale', apiVersion: 'autoscaling/v1' });
    requireNameOnUrl(scale.metadata, name, definition.namespaced ? namespace : undefined);
    // Scale.spec.replicas is `omitempty`: a client scaling to 0 (client-go's UpdateScale) sends no replicas.
    const spec = scale.spec === undefined ? {} : scale.spec;
    const replicas = isJsonObject(spec) ? (spec.replicas ?? 0) : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw apiErrors.invalid('Scale', 'autoscaling', name, [
        invalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0'),
      ]);
    }
    // Scale.spec.replicas is an int32 on the wire.
    if (replicas > INT32_MAX) {
      throw apiErrors.invalid('Scale', 'autoscaling', name, [invalid('spec.replicas', replicas, `must be less than or equal to ${INT32_MAX}`)]);
    }
    const version = isJsonObject(scale.metadata) ? scale.metadata.resourceVersion : undefined;
    const current = this.get(definition, namespace, name);
    if (typeof version === 'string' && version !== '' && version !== current.metadata.resourceVersion) {
      throw apiErrors.conflict(definition.plural, definition.group, name);
    }
    await this.replace(definition, current, { ...current, spec: { ...(current.spec as object), replicas } }, options);
    return this.getScale(definition, namespace, name);
  }

  /**
   * The status subresource as clients write it: PUT (`contentType` undefined) or PATCH of the whole
   * object, of which only the status is taken. Decoded and validated like any write, and guarded by
   * `metadata.resourceVersion` (required on a PUT, 409 when stale).
   */
  async writeStatus(
    definition: KindDefinition,
    namespace: string,
    name: string,
    body: unknown,
    contentType: string | undefined,
    options: WriteOptions = {},
  ): Promise<Resource> {
    if (!definition.subresources.status) throw apiErrors.pathNotFound();
    const current = this.get(definition, namespace, name);
    const written = contentType === undefined ? body : this.applyPatch(current, body, contentType);
    const input = this.decode(definition, written, options, current, 'status');
    const metadata = objectAt(input.metadata) ?? {};
    requireNameOnUrl(metadata, name, definition.namespaced ? namespace : undefined);
    if (contentType === undefined && !metadata.resourceVersion) {
      throw apiErrors.invalid(definition.kind, definition.group, name, [
        invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
    }
    if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw apiErrors.conflict(definition.plural, definition.group, name);
    }
    const next: Resource = { ...current, status: input.status };
    if (jsonEqual(next.status, current.status)) return this.unchanged(current);
    this.checkRules(definition, next, current, 'status');
    // Fleets and sets fold their status from their GameServers: a valid write has nothing to change.
    if (options.dryRun || definition.derivedStatus) {
      return options.dryRun ? next : this.unchanged(current);
    }
    const event = resourceEvent('ResourceStatusSet', definition.kind, namespace, name, { status: next.status });
    return this.cluster.commitAndRead([event], () => this.get(definition, namespace, name), options.cause);
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
    if (definition.kind === NAMESPACE_KIND) return this.deleteNamespace(object, options);
    const events = this.deletionEvents(object, options.propagationPolicy);
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
    // The API server offers no deletecollection of namespaces: each goes through its own lifecycle.
    if (definition.kind === NAMESPACE_KIND) throw apiErrors.methodNotAllowed('namespaces are deleted one at a time');
    const deleted = this.list(definition, namespace, selector).filter(filter);
    // Each object's preconditions hold, or none is deleted.
    for (const object of deleted) requireDeletePreconditions(definition, object, options.preconditions);
    if (!options.dryRun) await this.cluster.commit(deleted.flatMap((object) => this.deletionEvents(object, options.propagationPolicy)), options.cause);
    return deleted;
  }

  /**
   * A namespace is deleted as the API server and its namespace controller do: it turns
   * Terminating, everything in it is deleted (GameServers whose process runs terminate first),
   * and it goes once empty — at once, or when its last GameServer has gone (see
   * `namespaceFinalization`). The answer is the namespace as it is while terminating.
   */
  private async deleteNamespace(namespace: Resource, options: WriteOptions): Promise<Resource> {
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
    const terminating = terminatingNamespace(namespace, this.cluster.clock.now());
    if (options.dryRun) return terminating;
    const events: NewEvent[] = [resourceEvent('ResourceUpdated', NAMESPACE_KIND, '', name, { object: terminating })];
    // Owners and what they own are all in the namespace: each object is deleted on its own.
    for (const kind of NAMESPACE_CONTENT_KINDS) for (const object of this.cluster.readModel.list(kind, name)) events.push(...this.ownDeletion(object));
    const committed = this.cluster.commit(events, options.cause);
    // Applied already: the namespace goes in the same transaction when nothing is left terminating.
    const finalization = this.namespaceFinalization(name);
    await Promise.all([committed, finalization && this.cluster.commit([finalization], options.cause)]);
    return terminating;
  }

  /**
   * The event that removes a Terminating namespace once nothing is left in it, if that is now:
   * what it held was deleted with it, but what was terminating then (a GameServer whose process
   * stops, an object finalizers hold) is waited for.
   */
  namespaceFinalization(name: string): NewEvent | undefined {
    const namespace = this.cluster.get(NAMESPACE_KIND, '', name);
    if (!namespace || namespacePhase(namespace) !== 'Terminating') return undefined;
    const terminating = (kind: string) => this.cluster.readModel.list(kind, name).some((o) => o.metadata.deletionTimestamp !== undefined);
    if (NAMESPACE_CONTENT_KINDS.some(terminating)) return undefined;
    return resourceEvent('ResourceDeleted', NAMESPACE_KIND, '', name, {});
  }

  /** The NamespaceLifecycle admission: content goes only into a namespace that exists and is not terminating. */
  private requireLiveNamespace(definition: KindDefinition, namespace: string, input: Record<string, unknown>): void {
    const live = this.cluster.get(NAMESPACE_KIND, '', namespace);
    if (!live) throw apiErrors.notFound('namespaces', '', namespace);
    if (namespacePhase(live) === 'Terminating') {
      const name = isJsonObject(input.metadata) && typeof input.metadata.name === 'string' ? input.metadata.name : '';
      const target = definition.group ? `${definition.plural}.${definition.group}` : definition.plural;
      throw apiErrors.forbidden(`${target} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  /**
   * Events deleting an object and its dependents (children first), as the API server and its
   * garbage collector do. An object already terminating is left as it is. One that finalizers
   * keep turns terminating, and its dependents wait for it to go unless the delete is Foreground.
   * With Orphan its dependents stay and lose their reference to it.
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
   * The events deleting one object, its dependents aside: it goes, or — held by finalizers — it
   * gets a deletionTimestamp and stays (a GameServer also while its pod's process stops). None
   * when it is terminating already.
   */
  private ownDeletion(object: Resource): NewEvent[] {
    if (object.kind === GAMESERVER_KIND) return this.cluster.gameServerDeletion(object as unknown as GameServer);
    if (object.metadata.deletionTimestamp !== undefined) return [];
    const { namespace, name } = object.metadata;
    if (!object.metadata.finalizers?.length) return [resourceEvent('ResourceDeleted', object.kind, namespace, name, {})];
    // The registry's markAsDeleting: now, no grace period, and a new generation.
    const { generation } = object.metadata;
    const metadata = { ...object.metadata, deletionTimestamp: rfc3339(this.cluster.clock.now()), deletionGracePeriodSeconds: 0, generation: generation > 0 ? generation + 1 : generation };
    return [this.updateEvent(definitionOfKind(object.kind)!, object, { ...object, metadata })];
  }

  /** A terminating object whose last finalizer is gone goes, and what it owns with it (in the background). */
  private finalizedDeletion(object: Resource): NewEvent[] {
    const { namespace, name } = object.metadata;
    const gone = object.kind === GAMESERVER_KIND ? gameServerEvent('GameServerDeleted', namespace, name, {}) : resourceEvent('ResourceDeleted', object.kind, namespace, name, {});
    return [...this.children(object).flatMap((child) => this.deletionEvents(child)), gone];
  }

  /** A dependent without its reference to `owner` (the garbage collector's update of an orphan). */
  private orphanEvent(dependent: Resource, owner: Resource): NewEvent {
    const { ownerReferences, ...metadata } = dependent.metadata;
    const kept = (ownerReferences ?? []).filter((r) => r.uid !== owner.metadata.uid);
    const next: Resource = { ...dependent, metadata: kept.length ? { ...metadata, ownerReferences: kept } : metadata };
    return this.updateEvent(definitionOfKind(dependent.kind)!, dependent, next);
  }

  private children(parent: Resource): Resource[] {
    const kind = definitionOfKind(parent.kind)?.ownedKind;
    if (!kind) return [];
    return this.cluster.readModel
      .list(kind, parent.metadata.namespace)
      .filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === parent.metadata.uid));
  }

  private async replace(definition: KindDefinition, current: Resource, input: Record<string, unknown>, options: WriteOptions): Promise<Resource> {
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
    this.checkRules(definition, next, current);
    this.validate(definition, next, current);
    if (options.dryRun) return next;
    const { namespace, name } = current.metadata;
    // A terminating object's last finalizer removed: the write deletes it, and the answer is the object as written.
    if (next.metadata.deletionTimestamp !== undefined && !next.metadata.finalizers?.length) {
      await this.cluster.commit(this.finalizedDeletion(next), options.cause);
      return next;
    }
    return this.cluster.commitAndRead([this.updateEvent(definition, current, next)], () => this.get(definition, namespace, name), options.cause);
  }

  /** The event writing `next` over `current`: a GameServer's carries its metadata and spec (its status when that changes). */
  private updateEvent(definition: KindDefinition, current: Resource, next: Resource): NewEvent {
    const { namespace, name } = current.metadata;
    if (definition.kind !== GAMESERVER_KIND) return resourceEvent('ResourceUpdated', definition.kind, namespace, name, { object: stripDerivedStatus(definition, next) });
    return gameServerEvent('GameServerSpecUpdated', namespace, name, {
      metadata: next.metadata,
      spec: next.spec as GameServer['spec'],
      ...(!jsonEqual(next.status, current.status) && { status: next.status as GameServer['status'] }),
    });
  }

  private applyPatch(current: Resource, patch: unknown, contentType: string): Record<string, unknown> {
    const type = contentType.split(';')[0]!.trim();
    let result: unknown;
    // Built-in kinds take strategic merge patches (kubectl always sends one for them); for the
    // fields fleetsim stores of those kinds (maps, scalars) it is a merge patch without directives.
    const builtIn = !current.apiVersion.includes('/');
    if (type === 'application/merge-patch+json') result = mergePatch(current, patch);
    else if (type === 'application/strategic-merge-patch+json' && builtIn) result = mergePatch(current, withoutDirectives(patch));
    else if (type === 'application/json-patch+json') result = jsonPatch(current, patch);
    else throw apiErrors.unsupportedMediaType(type);
    if (!isJsonObject(result)) throw apiErrors.badRequest('the patch did not produce an object');
    // A JSON patch can graft deep values onto deep paths: the result is capped as bodies are.
    const tooDeep = tooDeeplyNested(result);
    if (tooDeep) throw apiErrors.badRequest(`the patched object ${tooDeep}`);
    return result;
  }

  /**
   * The decoding step: kind, apiVersion, unknown fields (fieldValidation=Strict unless told
   * otherwise) and value types, which is what decoding into the kind's Go types would refuse
   * before any webhook runs. The schema's other rules wait until the defaults are applied.
   */
  private decode(definition: KindDefinition, body: unknown, options: WriteOptions, current?: Resource, part: 'spec' | 'status' = 'spec'): Record<string, unknown> {
    if (!isJsonObject(body)) throw apiErrors.badRequest(`the body must be a ${definition.kind} object`);
    if (body.kind !== undefined && body.kind !== definition.kind) {
      throw apiErrors.badRequest(`the kind of the object (${String(body.kind)}) does not match the resource (${definition.kind})`);
    }
    if (body.apiVersion !== undefined && body.apiVersion !== apiVersionOf(definition)) {
      throw apiErrors.badRequest(`the apiVersion of the object (${String(body.apiVersion)}) does not match ${apiVersionOf(definition)}`);
    }
    const report: SchemaReport = { unknown: [], errors: [] };
    checkSchema(body, definition.schema, '', report, current);
    const validation = options.fieldValidation ?? 'Strict';
    if (report.unknown.length && validation === 'Strict') {
      const fields = report.unknown.map((f) => `unknown field "${f}"`).join(', ');
      throw apiErrors.badRequest(`strict decoding error: ${fields}`);
    }
    const typeErrors = report.errors.filter((e) => e.type === 'FieldValueTypeInvalid');
    if (typeErrors.length) {
      const name = isJsonObject(body.metadata) && typeof body.metadata.name === 'string' ? body.metadata.name : '';
      // The scale check reads the same object: a replicas of the wrong type is named twice.
      const scale = scaleErrors(definition, body, part).filter((error) => typeErrors.some((typeError) => `.${typeError.field}` === error.field));
      throw apiErrors.invalid(definition.kind, definition.group, name, [...typeErrors, ...scale]);
    }
    if (report.unknown.length === 0) return body;
    // Warn and Ignore: unknown fields are dropped, as the API server prunes them.
    if (validation === 'Warn') options.warnings?.push(...report.unknown.map((f) => `unknown field "${f}"`));
    return pruneUnknown(body, definition.schema) as Record<string, unknown>;
  }

  /**
   * The schema's rules on the object as admission leaves it (after the defaults), then the scale
   * subresource's check of the replicas a write sets (`part`: spec, or status for a status write);
   * `current` is the stored object an update replaces.
   */
  private checkRules(definition: KindDefinition, object: Resource, current?: Resource, part: 'spec' | 'status' = 'spec'): void {
    const report: SchemaReport = { unknown: [], errors: [] };
    checkSchema(object, definition.schema, '', report, current);
    const errors = [...report.errors, ...scaleErrors(definition, object, part)];
    if (errors.length) throw apiErrors.invalid(definition.kind, definition.group, object.metadata.name, errors);
  }

  /** Validation: the object's metadata, as the API server checks it for every kind, then the kind's rules. */
  private validate(definition: KindDefinition, object: Resource, old?: Resource): void {
    const errors: FieldError[] = validateObjectMeta(object.metadata, 'metadata');
    if (old) errors.push(...validateObjectMetaUpdate(object.metadata, old.metadata, 'metadata'));
    if (definition.validate) errors.push(...definition.validate(object, this.context, old));
    const command = this.options.commandsOff === undefined ? undefined : definition.commandOf?.(object);
    if (command) errors.push(forbidden(command.field, `commands are off: ${this.options.commandsOff}`));
    if (errors.length) throw apiErrors.invalid(definition.kind, definition.group, object.metadata.name, errors);
  }

  /** The answer to a write that changes nothing: the object, once all it rests on is durable. */
  private async unchanged(current: Resource): Promise<Resource> {
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

/** Drops strategic-merge-patch directives (`$patch`, `$retainKeys`, …). */
function withoutDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(withoutDirectives);
  if (!isJsonObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) if (!key.startsWith('$')) out[key] = withoutDirectives(value);
  return out;
}

/** Kinds whose status is folded from their GameServers (sets, fleets) store none of their own. */
function stripDerivedStatus(definition: KindDefinition, object: Resource): Resource {
  if (!definition.derivedStatus) return object;
  const { status: _status, ...rest } = object;
  return rest as Resource;
}
