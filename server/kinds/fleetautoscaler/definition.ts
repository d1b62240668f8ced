import { AGE_COLUMN, ALL_VERBS, type KindDefinition } from '../registry.js';
import { defaultFleetAutoscaler, fleetAutoscalerSchema, validateFleetAutoscaler } from './rules.js';
import { FLEETAUTOSCALER_KIND } from './fleetautoscaler.js';

export const FLEETAUTOSCALER_DEFINITION: KindDefinition = {
  kind: FLEETAUTOSCALER_KIND,
  listKind: 'FleetAutoscalerList',
  group: 'autoscaling.agones.dev',
  version: 'v1',
  plural: 'fleetautoscalers',
  singular: 'fleetautoscaler',
  shortNames: ['fas'],
  namespaced: true,
  customResource: true,
  verbs: ALL_VERBS,
  subresources: { status: true },
  printerColumns: [AGE_COLUMN],
  schema: fleetAutoscalerSchema,
  defaults: defaultFleetAutoscaler,
  validate: validateFleetAutoscaler,
};
