import type { AllocationOverflow } from '../common.js';
import { FLEET_LABEL } from '../agones.js';
import type { SchedulingStrategy } from '../gameserver-types.js';
import type { Priority } from '../priorities.js';
import { type Resource, ownedMetadata } from '../resource.js';

/** What a Fleet is: its kind, its label, its spec and the GameServerSet it makes. */

export const FLEET_KIND = 'Fleet';

export { FLEET_LABEL };

/** An int-or-string on the wire: an absolute number or `"<n>%"`. */
export type IntOrString = number | string;

export interface FleetStrategy {
  type?: 'RollingUpdate' | 'Recreate';
  rollingUpdate?: { maxSurge?: IntOrString; maxUnavailable?: IntOrString };
}

/** The fields of a Fleet's spec fleetsim reads. */
export interface FleetSpec {
  replicas?: number;
  strategy?: FleetStrategy;
  scheduling?: SchedulingStrategy;
  priorities?: Priority[];
  allocationOverflow?: AllocationOverflow;
  template?: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
}

/** A GameServerSet as the fleet makes it (Agones's Fleet.GameServerSet()). */
export function gameServerSetOfFleet(fleet: Resource, spec: FleetSpec, replicas: number): Record<string, unknown> {
  const template = spec.template ?? {};
  const templateMeta = (template.metadata ?? {}) as { labels?: Record<string, string> } & Record<string, unknown>;
  return {
    metadata: ownedMetadata(fleet, templateMeta, { ...(templateMeta.labels ?? {}), [FLEET_LABEL]: fleet.metadata.name }),
    spec: {
      replicas,
      scheduling: spec.scheduling ?? 'Packed',
      ...(spec.priorities && { priorities: spec.priorities }),
      ...(spec.allocationOverflow && { allocationOverflow: spec.allocationOverflow }),
      template: spec.template,
    },
  };
}
