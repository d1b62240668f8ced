import { ALL_VERBS, type KindDefinition } from '../registry.js';
import { defaultFleet, fleetSchema, validateFleet } from './rules.js';
import { SCALABLE_SUBRESOURCES, SETS_COLUMNS, templateCommand } from '../gameserver-template.js';
import { FLEET_KIND, FLEET_LABEL } from './fleet.js';
import { GAMESERVERSET_KIND } from '../agones.js';

export const FLEET_DEFINITION: KindDefinition = {
  kind: FLEET_KIND,
  listKind: 'FleetList',
  group: 'agones.dev',
  version: 'v1',
  plural: 'fleets',
  singular: 'fleet',
  shortNames: ['flt'],
  namespaced: true,
  customResource: true,
  verbs: ALL_VERBS,
  subresources: SCALABLE_SUBRESOURCES,
  printerColumns: [...SETS_COLUMNS],
  schema: fleetSchema,
  defaults: defaultFleet,
  validate: validateFleet,
  commandOf: templateCommand,
  derivedStatus: true,
  memberLabel: FLEET_LABEL,
  ownedKind: GAMESERVERSET_KIND,
};
