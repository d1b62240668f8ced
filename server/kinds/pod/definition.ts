import { AGE_COLUMN, OPEN_OBJECT, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';
import { POD_KIND, podReady, podRestarts, podStatusText } from './pod.js';
import { createdPodDefaults, validateCreatedPod } from './created-pod.js';

/**
 * Pods: one per GameServer, projected from it (server/kinds/pod/pod.ts), and stored ones: Agones's
 * own in agones-system (server/resources/control-plane.ts) and those clients create
 * (created-pod.ts); read, watched, created, deleted, never updated.
 */
export const POD_DEFINITION: KindDefinition = {
  kind: POD_KIND,
  listKind: 'PodList',
  group: '',
  version: 'v1',
  plural: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  namespaced: true,
  categories: ['all'],
  verbs: ['create', 'delete', 'get', 'list', 'watch'],
  projected: true,
  alsoStored: true,
  subresources: { status: false, log: true, eviction: true },
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.containerStatuses', value: podReady, description: 'Ready containers of all' },
    { name: 'Status', type: 'string', jsonPath: '.status.phase', value: podStatusText },
    { name: 'Restarts', type: 'integer', jsonPath: '.status.containerStatuses', value: podRestarts },
    AGE_COLUMN,
    { name: 'IP', type: 'string', jsonPath: '.status.podIP', priority: 1 },
    { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', priority: 1 },
  ],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
  defaults: (object, context) => createdPodDefaults(object, context.now),
  validate: (object) => validateCreatedPod(object),
};
