import type { Cause } from '../log/cause.js';
import { apiVersionOf, type KindContext, type KindDefinition } from '../kinds/registry.js';
import type { Resource } from '../kinds/resource.js';
import { NAMESPACE_KIND, namespacePhase } from '../kinds/namespace/namespace.js';
import { isJsonObject, validateObjectMeta, validateObjectMetaUpdate } from '../kinds/common.js';
import { checkSchema, pruneUnknown, type SchemaReport } from '../k8s/schema.js';
import { apiErrors } from '../k8s/status.js';
import { type FieldError, forbidden } from '../k8s/validation.js';
import { scaleErrors } from './scale-validation.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun?: boolean;
  /** What asked for the write (a request, a controller, an autoscaler): recorded with its events. */
  cause?: Cause;
  fieldValidation?: FieldValidation;
  /** Filled with warnings for the client (fieldValidation=Warn), sent as `Warning` headers. */
  warnings?: string[];
}

/**
 * The admission chain of a real API server running Agones's webhooks, step by step: decode (kind,
 * unknown fields, types: what decoding into Go types refuses), then — after the kind's defaults —
 * the schema's remaining rules (enums, bounds, required) and validation (object metadata, the
 * kind's rules) on the object as it would be stored.
 */

/**
 * The decoding step: kind, apiVersion, unknown fields (fieldValidation=Strict unless told
 * otherwise) and value types, which is what decoding into the kind's Go types would refuse
 * before any webhook runs. The schema's other rules wait until the defaults are applied.
 */
export function decode(definition: KindDefinition, body: unknown, options: WriteOptions, current?: Resource, part: 'spec' | 'status' = 'spec'): Record<string, unknown> {
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
export function checkRules(definition: KindDefinition, object: Resource, current?: Resource, part: 'spec' | 'status' = 'spec'): void {
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(object, definition.schema, '', report, current);
  const errors = [...report.errors, ...scaleErrors(definition, object, part)];
  if (errors.length) throw apiErrors.invalid(definition.kind, definition.group, object.metadata.name, errors);
}

/**
 * Validation: the object's metadata, as the API server checks it for every kind, then the kind's
 * rules; `commandsOff` (why this server runs no commands) refuses an object that would run one.
 */
export function validate(definition: KindDefinition, object: Resource, context: KindContext, commandsOff: string | undefined, old?: Resource): void {
  const errors: FieldError[] = validateObjectMeta(object.metadata, 'metadata');
  if (old) errors.push(...validateObjectMetaUpdate(object.metadata, old.metadata, 'metadata'));
  if (definition.validate) errors.push(...definition.validate(object, context, old));
  const command = commandsOff === undefined ? undefined : definition.commandOf?.(object);
  if (command) errors.push(forbidden(command.field, `commands are off: ${commandsOff}`));
  if (errors.length) throw apiErrors.invalid(definition.kind, definition.group, object.metadata.name, errors);
}

/** The NamespaceLifecycle admission: content goes only into a namespace that exists and is not terminating. */
export function requireLiveNamespace(
  namespaces: { get(kind: string, namespace: string, name: string): Resource | undefined },
  definition: KindDefinition,
  namespace: string,
  input: Record<string, unknown>,
): void {
  const live = namespaces.get(NAMESPACE_KIND, '', namespace);
  if (!live) throw apiErrors.notFound('namespaces', '', namespace);
  if (namespacePhase(live) === 'Terminating') {
    const name = isJsonObject(input.metadata) && typeof input.metadata.name === 'string' ? input.metadata.name : '';
    const target = definition.group ? `${definition.plural}.${definition.group}` : definition.plural;
    throw apiErrors.forbidden(`${target} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`);
  }
}
