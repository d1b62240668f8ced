import type { AllocationOverflow } from '../common.js';
import { FLEET_LABEL, GAMESERVERSET_KIND, GAMESERVERSET_LABEL } from '../agones.js';
import type { SchedulingStrategy } from '../gameserver-types.js';
import type { Priority } from '../priorities.js';
import { type Resource, ownedMetadata } from '../resource.js';

/** What a GameServerSet is: its kind, its label, its spec and the GameServer it makes. */

export { GAMESERVERSET_KIND, GAMESERVERSET_LABEL };

/** The fields of a GameServerSet's spec fleetsim reads. */
export interface GameServerSetSpec {
  replicas?: number;
  scheduling?: SchedulingStrategy;
  priorities?: Priority[];
  allocationOverflow?: AllocationOverflow;
  template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
}

export function gameServerSetSpecOf(set: Resource): GameServerSetSpec {
  return (set.spec ?? {}) as GameServerSetSpec;
}

/** A GameServer as the set makes it (Agones's GameServerSet.GameServer()). */
export function gameServerOfSet(set: Resource): Record<string, unknown> {
  const spec = gameServerSetSpecOf(set);
  const template = spec.template ?? {};
  const labels = { ...(template.metadata?.labels ?? {}), [GAMESERVERSET_LABEL]: set.metadata.name, [FLEET_LABEL]: set.metadata.labels[FLEET_LABEL] ?? '' };
  return {
    metadata: ownedMetadata(set, template.metadata ?? {}, labels),
    spec: { ...(template.spec ?? {}), ...(spec.scheduling && { scheduling: spec.scheduling }) },
  };
}
