import type { KindDefinition, KindWrites } from '../kinds/registry.js';
import { type Resource, resourceEvent } from '../kinds/resource.js';

/**
 * How a kind's objects are written: by its own events (`writes`), or by Resource events carrying
 * the object whole — less a status folded from other objects (sets, fleets), which is never stored.
 */
export function writesOf(definition: KindDefinition): KindWrites {
  return definition.writes ?? resourceWrites(definition);
}

function resourceWrites(definition: KindDefinition): KindWrites {
  const { kind } = definition;
  return {
    created: (object) => resourceEvent('ResourceCreated', kind, object.metadata.namespace, object.metadata.name, { object }),
    updated: (current, next) => resourceEvent('ResourceUpdated', kind, current.metadata.namespace, current.metadata.name, { object: withoutDerivedStatus(definition, next) }),
    deleted: (namespace, name) => resourceEvent('ResourceDeleted', kind, namespace, name, {}),
  };
}

function withoutDerivedStatus(definition: KindDefinition, object: Resource): Resource {
  if (!definition.derivedStatus) return object;
  const { status: _status, ...rest } = object;
  return rest as Resource;
}
