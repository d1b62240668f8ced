import type { KindDefinition } from './registry.js';
import { GAMESERVERALLOCATION_DEFINITION } from './gameserverallocation/definition.js';
import { GAMESERVER_DEFINITION } from './gameserver/definition.js';
import { GAMESERVERSET_DEFINITION } from './gameserverset/definition.js';
import { FLEET_DEFINITION } from './fleet/definition.js';
import { FLEETAUTOSCALER_DEFINITION } from './fleetautoscaler/definition.js';
import { GAMESERVERALLOCATIONPOLICY_DEFINITION } from './gameserverallocationpolicy/definition.js';
import { SECRET_DEFINITION } from './secret/definition.js';
import { NODE_DEFINITION } from './node/definition.js';
import { EVENT_DEFINITION } from './event/definition.js';
import { POD_DEFINITION } from './pod/definition.js';
import { DEPLOYMENT_DEFINITION } from './deployment/definition.js';
import { NAMESPACE_DEFINITION } from './namespace/definition.js';
import { CRD_DEFINITION } from './customresourcedefinition/definition.js';
import { SERVICEACCOUNT_DEFINITION } from './serviceaccount/definition.js';
import { SERVICE_DEFINITION } from './service/definition.js';
import {
  CLUSTERROLEBINDING_DEFINITION,
  CLUSTERROLE_DEFINITION,
  ROLEBINDING_DEFINITION,
  ROLE_DEFINITION,
} from './rbac/definition.js';

/** The kinds the resource API serves; each kind's definition lives in its own folder. */
export const KIND_DEFINITIONS: KindDefinition[] = [
  GAMESERVERALLOCATION_DEFINITION,
  GAMESERVER_DEFINITION,
  GAMESERVERSET_DEFINITION,
  FLEET_DEFINITION,
  FLEETAUTOSCALER_DEFINITION,
  GAMESERVERALLOCATIONPOLICY_DEFINITION,
  SECRET_DEFINITION,
  NODE_DEFINITION,
  EVENT_DEFINITION,
  POD_DEFINITION,
  DEPLOYMENT_DEFINITION,
  NAMESPACE_DEFINITION,
  SERVICEACCOUNT_DEFINITION,
  SERVICE_DEFINITION,
  ROLE_DEFINITION,
  ROLEBINDING_DEFINITION,
  CLUSTERROLE_DEFINITION,
  CLUSTERROLEBINDING_DEFINITION,
  CRD_DEFINITION,
];

export function findDefinition(group: string, version: string, plural: string): KindDefinition | undefined {
  return KIND_DEFINITIONS.find((d) => d.group === group && d.version === version && d.plural === plural);
}

export function definitionOfKind(kind: string): KindDefinition | undefined {
  return KIND_DEFINITIONS.find((d) => d.kind === kind);
}

/** The kinds of what a namespace holds and its deletion deletes (a GameServer's Pod goes with its GameServer; allocations are never stored). */
export const NAMESPACE_CONTENT_KINDS: readonly string[] = KIND_DEFINITIONS.filter((d) => d.namespaced && (!d.projected || d.alsoStored) && d.verbs.includes('list')).map((d) => d.kind);
