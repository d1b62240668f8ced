import { AGE_COLUMN, OPEN_OBJECT, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';

/** Simulated nodes: read through the API, and deleted as a lost node is (server/controllers/node-loss.ts). */
export const NODE_DEFINITION: KindDefinition = {
  kind: 'Node',
  listKind: 'NodeList',
  group: '',
  version: 'v1',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  namespaced: false,
  verbs: ['delete', 'get', 'list', 'watch'],
  subresources: { status: false },
  printerColumns: [
    { name: 'Status', type: 'string', jsonPath: '.status.conditions[0].type' },
    { name: 'Internal-IP', type: 'string', jsonPath: '.status.addresses[0].address' },
    AGE_COLUMN,
  ],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
};
