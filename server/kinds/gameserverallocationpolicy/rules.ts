import { bodySchema, type Schema } from '../../k8s/schema.js';
import { type FieldError, invalid, required } from '../../k8s/validation.js';
import type { KindContext } from '../registry.js';
import type { Resource } from '../resource.js';
import { arrayAt, int32, objectAt } from '../common.js';

/**
 * GameServerAllocationPolicy rules (§6.10 and §8 of the controllers reference). Agones checks this
 * kind with its CRD only (no webhook, no defaults); the one CRD rule the schema subset here cannot
 * express (minItems) is checked by `validateGameServerAllocationPolicy`.
 */

export const GAMESERVERALLOCATIONPOLICY_SPEC_SCHEMA: Schema = {
  type: 'object',
  description: 'Where a multi-cluster allocation may be sent, and how likely.',
  required: ['priority', 'weight'],
  properties: {
    priority: int32(0, undefined, 'Priority of the policy; lower numbers are tried first.'),
    weight: { type: 'integer', minimum: 0, description: 'Relative weight among clusters of the same priority.' },
    connectionInfo: {
      type: 'object',
      description: 'How to reach the cluster.',
      required: ['namespace'],
      properties: {
        clusterName: { type: 'string', description: 'Name of the target cluster.' },
        allocationEndpoints: {
          type: 'array',
          items: { type: 'string' },
          description: 'Allocator endpoints of the target cluster; unset means the local cluster.',
        },
        secretName: { type: 'string', description: 'Secret holding the TLS client certificate for the remote allocator.' },
        namespace: { type: 'string', description: 'Namespace to allocate from in the target cluster.' },
        serverCa: { type: 'string', format: 'byte', description: 'PEM CA (base64) of the remote allocator.' },
      },
    },
  },
};

/** No status: the kind has none. */
export const gameServerAllocationPolicySchema: Schema = bodySchema({ spec: GAMESERVERALLOCATIONPOLICY_SPEC_SCHEMA });

export function validateGameServerAllocationPolicy(object: Resource, _context: KindContext, _old?: Resource): FieldError[] {
  const errs: FieldError[] = [];
  const connection = objectAt(objectAt(object.spec)?.connectionInfo);
  // The namespace is required whether or not connectionInfo was written out.
  if (!connection) return [required('spec.connectionInfo.namespace')];
  const endpoints = arrayAt(connection.allocationEndpoints);
  if (endpoints && endpoints.length < 1) {
    errs.push(invalid('spec.connectionInfo.allocationEndpoints', endpoints, 'spec.connectionInfo.allocationEndpoints in body should have at least 1 items'));
  }
  return errs;
}
