import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';
import { isDNS1123Label, invalid } from '../../k8s/validation.js';
import { NAMESPACE_FINALIZER, NAMESPACE_KIND } from './namespace.js';
import type { Resource } from '../resource.js';
import { NAMESPACE_DELETION } from './deletion.js';

export const NAMESPACE_DEFINITION: KindDefinition = {
  kind: NAMESPACE_KIND,
  listKind: 'NamespaceList',
  group: '',
  version: 'v1',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, AGE_COLUMN],
  schema: bodySchema({
    spec: { type: 'object', properties: { finalizers: { type: 'array', items: { type: 'string' } } } },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string', enum: ['Active', 'Terminating'] },
        conditions: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    },
  }),
  // The API server owns the phase and the finalizer, and labels each namespace with its name.
  defaults: (object: Resource, _context, old?: Resource) => ({
    ...object,
    metadata: { ...object.metadata, labels: { ...object.metadata.labels, 'kubernetes.io/metadata.name': object.metadata.name } },
    spec: old ? object.spec : { finalizers: [NAMESPACE_FINALIZER] },
    status: old ? old.status : { phase: 'Active' },
  }),
  // A namespace's name becomes a DNS label (`svc.<ns>.svc.cluster.local`): 63 characters at most.
  validate: (object) => isDNS1123Label(object.metadata.name).map((e) => invalid('metadata.name', object.metadata.name, e)),
  deletion: NAMESPACE_DELETION,
};
