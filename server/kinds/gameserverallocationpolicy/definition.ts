import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { gameServerAllocationPolicySchema, validateGameServerAllocationPolicy } from './rules.js';

export const GAMESERVERALLOCATIONPOLICY_DEFINITION: KindDefinition = {
  kind: 'GameServerAllocationPolicy',
  listKind: 'GameServerAllocationPolicyList',
  group: 'multicluster.agones.dev',
  version: 'v1',
  plural: 'gameserverallocationpolicies',
  singular: 'gameserverallocationpolicy',
  shortNames: ['gsap'],
  namespaced: true,
  customResource: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [AGE_COLUMN],
  schema: gameServerAllocationPolicySchema,
  validate: validateGameServerAllocationPolicy,
};
