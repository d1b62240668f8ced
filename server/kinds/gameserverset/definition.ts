import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { defaultGameServerSet, gameServerSetSchema, validateGameServerSet } from './rules.js';
import { templateCommand } from '../gameserver/rules.js';
import { GAMESERVERSET_KIND, GAMESERVERSET_LABEL } from './gameserverset.js';
import { GAMESERVER_KIND } from '../gameserver/gameserver.js';

/** `kubectl get` columns of sets, and of the fleets that own them. */
export const SETS_COLUMNS = [
  { name: 'Scheduling', type: 'string', jsonPath: '.spec.scheduling' },
  { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Current', type: 'integer', jsonPath: '.status.replicas' },
  { name: 'Allocated', type: 'integer', jsonPath: '.status.allocatedReplicas' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
  AGE_COLUMN,
] as const;

/** Sets and fleets: status, and scale on spec.replicas (kubectl scale, the HPA's way in). */
export const SCALABLE_SUBRESOURCES: KindDefinition['subresources'] = {
  status: true,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
};

export const GAMESERVERSET_DEFINITION: KindDefinition = {
  kind: GAMESERVERSET_KIND,
  listKind: 'GameServerSetList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'gameserversets',
  singular: 'gameserverset',
  shortNames: ['gss', 'gsset'],
  namespaced: true,
  customResource: true,
  verbs: ALL_VERBS,
  subresources: SCALABLE_SUBRESOURCES,
  printerColumns: [...SETS_COLUMNS],
  schema: gameServerSetSchema,
  defaults: defaultGameServerSet,
  validate: validateGameServerSet,
  commandOf: templateCommand,
  derivedStatus: true,
  memberLabel: GAMESERVERSET_LABEL,
  ownedKind: GAMESERVER_KIND,
};
