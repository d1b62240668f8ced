import { ALL_VERBS, type KindDefinition } from '../registry.js';
import { defaultGameServerSet, gameServerSetSchema, validateGameServerSet } from './rules.js';
import { SCALABLE_SUBRESOURCES, SETS_COLUMNS, templateCommand } from '../gameserver-template.js';
import { GAMESERVERSET_KIND, GAMESERVERSET_LABEL } from './gameserverset.js';
import { GAMESERVER_KIND } from '../agones.js';

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
