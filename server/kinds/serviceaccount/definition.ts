import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';

const OBJECT_REFERENCES = { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } as const;

/** Stored as given: the identity a pod's processes would run as (fleetsim enforces no RBAC). */
export const SERVICEACCOUNT_DEFINITION: KindDefinition = {
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  group: '',
  version: 'v1',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [AGE_COLUMN],
  schema: bodySchema({
    secrets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          kind: { type: 'string' },
          namespace: { type: 'string' },
          name: { type: 'string' },
          uid: { type: 'string' },
          apiVersion: { type: 'string' },
          resourceVersion: { type: 'string' },
          fieldPath: { type: 'string' },
        },
      },
    },
    imagePullSecrets: OBJECT_REFERENCES,
    automountServiceAccountToken: { type: 'boolean' },
  }),
};
