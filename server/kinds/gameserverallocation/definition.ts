import { OBJECT_META_SCHEMA, type Schema } from '../../k8s/schema.js';
import type { KindDefinition } from '../registry.js';
import { ALLOCATION_GROUP, GAMESERVERALLOCATION_KIND } from './gameserverallocation.js';

/**
 * GameServerAllocation through the resource API: create-only and never stored (as Agones's
 * aggregated API), with a schema so unknown fields are refused like any other kind's.
 */
const int: Schema = { type: 'integer', format: 'int64' };
const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };

const LABEL_SELECTOR_PROPERTIES: Record<string, Schema> = {
  matchLabels: stringMap,
  matchExpressions: {
    type: 'array',
    items: {
      type: 'object',
      properties: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } },
    },
  },
};

const SELECTOR: Schema = {
  type: 'object',
  properties: {
    ...LABEL_SELECTOR_PROPERTIES,
    gameServerState: { type: 'string', description: 'Ready (default) or Allocated, to re-allocate an Allocated server.' },
    players: { type: 'object', properties: { minAvailable: int, maxAvailable: int } },
    counters: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { minCount: int, maxCount: int, minAvailable: int, maxAvailable: int } },
    },
    lists: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { containsValue: { type: 'string' }, minAvailable: int, maxAvailable: int } },
    },
  },
};

const PRIORITY: Schema = {
  type: 'object',
  properties: { type: { type: 'string' }, key: { type: 'string' }, order: { type: 'string' } },
};

export const GAMESERVERALLOCATION_SCHEMA: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: OBJECT_META_SCHEMA,
    spec: {
      type: 'object',
      description: 'Which GameServer to allocate and what to change on it.',
      properties: {
        multiClusterSetting: {
          type: 'object',
          properties: { enabled: { type: 'boolean' }, policySelector: { type: 'object', properties: LABEL_SELECTOR_PROPERTIES } },
        },
        required: SELECTOR,
        preferred: { type: 'array', items: SELECTOR },
        selectors: { type: 'array', items: SELECTOR },
        priorities: { type: 'array', items: PRIORITY },
        scheduling: { type: 'string' },
        metadata: { type: 'object', properties: { labels: stringMap, annotations: stringMap } },
        counters: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { action: { type: 'string' }, amount: int, capacity: int } },
        },
        lists: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: {
              addValues: { type: 'array', items: { type: 'string' } },
              deleteValues: { type: 'array', items: { type: 'string' } },
              capacity: int,
            },
          },
        },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

export const GAMESERVERALLOCATION_DEFINITION: KindDefinition = {
  kind: GAMESERVERALLOCATION_KIND,
  listKind: 'GameServerAllocationList',
  group: ALLOCATION_GROUP,
  version: 'v1',
  plural: 'gameserverallocations',
  singular: 'gameserverallocation',
  shortNames: ['gsa'],
  namespaced: true,
  verbs: ['create'],
  subresources: { status: false },
  printerColumns: [
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'GameServer', type: 'string', jsonPath: '.status.gameServerName' },
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
  ],
  schema: GAMESERVERALLOCATION_SCHEMA,
};
