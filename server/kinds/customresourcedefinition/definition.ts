import { createHash } from 'node:crypto';
import { OPEN_OBJECT, type KindDefinition } from '../registry.js';
import { bodySchema } from '../../k8s/schema.js';
import type { Resource } from '../resource.js';

export const CRD_KIND = 'CustomResourceDefinition';
const CRD_GROUP = 'apiextensions.k8s.io';

/** The CustomResourceDefinitions Agones installs, built from the kinds' own definitions; read-only. */
export const CRD_DEFINITION: KindDefinition = {
  kind: CRD_KIND,
  listKind: 'CustomResourceDefinitionList',
  group: CRD_GROUP,
  version: 'v1',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  namespaced: false,
  categories: ['api-extensions'],
  verbs: ['get', 'list'],
  subresources: { status: false },
  printerColumns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  schema: bodySchema({ spec: OPEN_OBJECT, status: OPEN_OBJECT }),
};

/** A stable uid per CRD name (they are installed with the cluster, not created through the log). */
function uidOf(name: string): string {
  const h = createHash('sha256').update(`crd/${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The CRD that installs `definition`, as `kubectl get crd` shows it: schema, subresources, printer columns. */
export function crdOf(definition: KindDefinition, installedAt: string): Resource {
  const name = `${definition.plural}.${definition.group}`;
  const names = {
    plural: definition.plural,
    singular: definition.singular,
    kind: definition.kind,
    listKind: definition.listKind,
    ...(definition.shortNames.length > 0 && { shortNames: definition.shortNames }),
    ...(definition.categories && { categories: definition.categories }),
  };
  const { status, scale } = definition.subresources;
  const subresources = {
    ...(status && { status: {} }),
    ...(scale && { scale }),
  };
  return {
    apiVersion: `${CRD_GROUP}/v1`,
    kind: CRD_KIND,
    metadata: {
      name,
      namespace: '',
      uid: uidOf(name),
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: installedAt,
      labels: { component: 'crd', app: 'agones' },
      annotations: {},
    },
    spec: {
      group: definition.group,
      names,
      scope: definition.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: definition.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: definition.schema },
          ...(Object.keys(subresources).length > 0 && { subresources }),
          additionalPrinterColumns: definition.printerColumns.map(({ value: _computed, ...column }) => column),
        },
      ],
    },
    status: {
      acceptedNames: names,
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: installedAt },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: installedAt },
      ],
      storedVersions: [definition.version],
    },
  };
}
