import { OPEN_OBJECT, type KindDefinition } from '../registry.js';
import { EVENT_KIND } from './event.js';

/** Kubernetes Events, recorded with Agones's reasons; read-only through the API. */
export const EVENT_DEFINITION: KindDefinition = {
  kind: EVENT_KIND,
  listKind: 'EventList',
  group: '',
  version: 'v1',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
  subresources: { status: false },
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.type' },
    { name: 'Reason', type: 'string', jsonPath: '.reason' },
    { name: 'Object', type: 'string', jsonPath: '.involvedObject.name' },
    { name: 'Message', type: 'string', jsonPath: '.message' },
  ],
  schema: OPEN_OBJECT,
};
