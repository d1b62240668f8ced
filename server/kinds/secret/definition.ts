import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import type { Resource } from '../resource.js';
import { bodySchema } from '../../k8s/schema.js';

export const SECRET_DEFINITION: KindDefinition = {
  kind: 'Secret',
  listKind: 'SecretList',
  group: '',
  version: 'v1',
  plural: 'secrets',
  singular: 'secret',
  shortNames: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: { status: false },
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.type' },
    AGE_COLUMN,
  ],
  schema: bodySchema({
    type: { type: 'string' },
    data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    stringData: { type: 'object', additionalProperties: { type: 'string' } },
    immutable: { type: 'boolean' },
  }),
  // stringData is write-only: it is merged into data (base64), as the API server does.
  defaults: (object) => {
    const stringData = object.stringData as Record<string, string> | undefined;
    if (!stringData) return object.type ? object : { ...object, type: 'Opaque' };
    const data = { ...((object.data as Record<string, string> | undefined) ?? {}) };
    for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(value, 'utf8').toString('base64');
    const { stringData: _written, ...rest } = object;
    return { ...rest, type: (object.type as string | undefined) ?? 'Opaque', data } as Resource;
  },
};
