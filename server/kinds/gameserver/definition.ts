import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { defaultGameServer, gameServerCommand, gameServerSchema, validateGameServer } from './rules.js';
import { GAMESERVER_KIND } from '../agones.js';
import { GAMESERVER_WRITES } from './events.js';

export const GAMESERVER_DEFINITION: KindDefinition = {
  kind: GAMESERVER_KIND,
  listKind: 'GameServerList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'gameservers',
  singular: 'gameserver',
  shortNames: ['gs'],
  namespaced: true,
  customResource: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    { name: 'Port', type: 'string', jsonPath: '.status.ports[0].port' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    AGE_COLUMN,
  ],
  schema: gameServerSchema,
  defaults: defaultGameServer,
  validate: validateGameServer,
  commandOf: gameServerCommand,
  writes: GAMESERVER_WRITES,
  // A GameServer whose pod runs a process terminates while it stops: the lifecycle decides.
  deletion: { own: (object, scope) => scope.terminate(object) },
};
