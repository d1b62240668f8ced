import { AGE_COLUMN, OPEN_OBJECT, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';
import { DEPLOYMENT_KIND, deploymentReady } from './deployment.js';

/** Agones's control-plane Deployments in agones-system (deployment.ts): read and watched, never written. */
export const DEPLOYMENT_DEFINITION: KindDefinition = {
  kind: DEPLOYMENT_KIND,
  listKind: 'DeploymentList',
  group: 'apps',
  version: 'v1',
  plural: 'deployments',
  singular: 'deployment',
  shortNames: ['deploy'],
  namespaced: true,
  categories: ['all'],
  verbs: ['get', 'list', 'watch'],
  subresources: { status: false },
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.readyReplicas', value: deploymentReady, description: 'Ready of desired replicas' },
    { name: 'Up-to-date', type: 'integer', jsonPath: '.status.updatedReplicas' },
    { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
    AGE_COLUMN,
  ],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
};
