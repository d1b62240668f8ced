import type { KindDefinition } from '../kinds/registry.js';
import type { Resource } from '../kinds/resource.js';
import { isJsonObject, jsonEqual, objectAt } from '../kinds/common.js';
import { requireBodyType, requireNameOnUrl } from '../k8s/decoding.js';
import { apiErrors } from '../k8s/status.js';
import { invalid } from '../k8s/validation.js';
import { checkRules, decode, type WriteOptions } from './admission.js';
import { patchObject } from './patch.js';
import type { ResourceService } from './service.js';

/** The scale and status subresources, written through the resource service's update. */

const INT32_MAX = 2_147_483_647;

/** The scale subresource: `spec.replicas` of a Fleet or GameServerSet. */
export function getScale(service: ResourceService, definition: KindDefinition, namespace: string, name: string): Record<string, unknown> {
  if (!definition.subresources.scale) throw apiErrors.pathNotFound();
  const object = service.get(definition, namespace, name);
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

/** A client's write of a subresource: a PUT (`contentType` undefined) or a PATCH of it. */
export interface SubresourceWrite {
  namespace: string;
  name: string;
  body: unknown;
  contentType?: string;
  options?: WriteOptions;
}

/** A write of the scale subresource: the object's `spec.replicas` set through the service's update. */
export async function updateScale(service: ResourceService, definition: KindDefinition, write: SubresourceWrite): Promise<Record<string, unknown>> {
  const { namespace, name, body, contentType, options = {} } = write;
  const currentScale = getScale(service, definition, namespace, name);
  const scale = contentType ? patchObject(currentScale as unknown as Resource, body, contentType) : body;
  if (!isJsonObject(scale)) throw apiErrors.badRequest('the body must be an autoscaling/v1 Scale object');
  // A Scale for this object, as the API server decodes it: `{}` names no object and scales nothing.
  requireBodyType(scale, { kind: 'Scale', apiVersion: 'autoscaling/v1' });
  requireNameOnUrl(scale.metadata, name, definition.namespaced ? namespace : undefined);
  // Scale.spec.replicas is `omitempty`: a client scaling to 0 (client-go's UpdateScale) sends no replicas.
  const spec = scale.spec === undefined ? {} : scale.spec;
  const replicas = isJsonObject(spec) ? (spec.replicas ?? 0) : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw apiErrors.invalid('Scale', 'autoscaling', name, [invalid('spec.replicas', replicas ?? null, 'must be greater than or equal to 0')]);
  }
  // Scale.spec.replicas is an int32 on the wire.
  if (replicas > INT32_MAX) {
    throw apiErrors.invalid('Scale', 'autoscaling', name, [invalid('spec.replicas', replicas, `must be less than or equal to ${INT32_MAX}`)]);
  }
  const version = isJsonObject(scale.metadata) ? scale.metadata.resourceVersion : undefined;
  const current = service.get(definition, namespace, name);
  if (typeof version === 'string' && version !== '' && version !== current.metadata.resourceVersion) {
    throw apiErrors.conflict(definition.plural, definition.group, name);
  }
  await service.replace(definition, current, { ...current, spec: { ...(current.spec as object), replicas } }, options);
  return getScale(service, definition, namespace, name);
}

/**
 * The status subresource as clients write it: a PUT or PATCH of the whole object, of which only
 * the status is taken. Decoded and validated like any write, and guarded by
 * `metadata.resourceVersion` (required on a PUT, 409 when stale).
 */
export async function writeStatus(service: ResourceService, definition: KindDefinition, write: SubresourceWrite): Promise<Resource> {
  const { namespace, name, body, contentType, options = {} } = write;
  if (!definition.subresources.status) throw apiErrors.pathNotFound();
  const current = service.get(definition, namespace, name);
  const written = contentType === undefined ? body : patchObject(current, body, contentType);
  const input = decode(definition, written, options, current, 'status');
  const metadata = objectAt(input.metadata) ?? {};
  requireNameOnUrl(metadata, name, definition.namespaced ? namespace : undefined);
  if (contentType === undefined && !metadata.resourceVersion) {
    throw apiErrors.invalid(definition.kind, definition.group, name, [invalid('metadata.resourceVersion', 0, 'must be specified for an update')]);
  }
  if (metadata.resourceVersion !== undefined && metadata.resourceVersion !== current.metadata.resourceVersion) {
    throw apiErrors.conflict(definition.plural, definition.group, name);
  }
  const next: Resource = { ...current, status: input.status };
  if (jsonEqual(next.status, current.status)) return service.unchanged(current);
  checkRules(definition, next, current, 'status');
  if (options.dryRun) return next;
  // Fleets and sets fold their status from their GameServers: a valid write has nothing to change.
  if (definition.derivedStatus) return service.unchanged(current);
  return service.updateStatus(definition, namespace, name, next.status, options.cause);
}
