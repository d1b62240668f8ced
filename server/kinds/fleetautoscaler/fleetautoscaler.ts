import type { Int64 } from '../../int64.js';

/** What a FleetAutoscaler is: its kind, its spec and status, its sync period. */

export const FLEETAUTOSCALER_KIND = 'FleetAutoscaler';

/** Agones's sync period (seconds) when the spec names none: the default written and the one used. */
export const DEFAULT_SYNC_SECONDS = 30;

/** An int-or-string `bufferSize`: an absolute number, or `"<n>%"`. */
export type BufferSize = Int64 | string;

export interface BufferPolicy {
  maxReplicas: number;
  /** 0 or absent: no minimum. */
  minReplicas?: number;
  bufferSize: BufferSize;
}

/** Counter and List policies share their shape. */
export interface CapacityPolicy {
  key: string;
  maxCapacity: Int64;
  /** 0 or absent: no minimum. */
  minCapacity?: Int64;
  bufferSize: BufferSize;
}

/** When a Schedule policy applies its policy: RFC 3339 bounds, and a recurring period. */
export interface SchedulePolicy {
  between?: { start?: string; end?: string };
  activePeriod?: {
    /** IANA name; empty is UTC. */
    timezone?: string;
    /** Five-field cron expression of each period's start; empty: always active within `between`. */
    startCron?: string;
    /** Go duration (`8h`, `2h45m`); empty: no end. */
    duration?: string;
  };
  policy?: AutoscalerPolicy;
}

/** One entry of a Chain policy: an id and a policy, its fields inline. */
export interface ChainEntry extends AutoscalerPolicy {
  id?: string;
}

/** A policy as stored in a FleetAutoscaler's spec (only the fields the formulas use). */
export interface AutoscalerPolicy {
  type?: string;
  buffer?: BufferPolicy;
  counter?: CapacityPolicy;
  list?: CapacityPolicy;
  webhook?: WebhookConfiguration;
  schedule?: SchedulePolicy;
  chain?: ChainEntry[];
}

/** A Kubernetes service reference (`webhook.service`). */
export interface ServiceReference {
  namespace?: string;
  name?: string;
  path?: string;
  port?: number;
}

/** A Kubernetes WebhookClientConfig as a FleetAutoscaler's `policy.webhook` holds it. */
export interface WebhookConfiguration {
  url?: string;
  service?: ServiceReference;
  /** base64 of a PEM bundle. */
  caBundle?: string;
}

/** The fields of a FleetAutoscaler's spec fleetsim reads. */
export interface FleetAutoscalerSpec {
  fleetName?: string;
  policy?: AutoscalerPolicy;
  sync?: { type?: string; fixedInterval?: { seconds?: number } };
}

/** The status the controller writes (Agones's FleetAutoscalerStatus, as the spec lists it). */
export interface FleetAutoscalerStatus {
  currentReplicas: number;
  desiredReplicas: number;
  /** RFC 3339; null until the autoscaler first scales the fleet. */
  lastScaleTime: string | null;
  ableToScale: boolean;
  scalingLimited: boolean;
  /** The policy type that last applied (`Buffer`…; for a chain `Chain:<id>:<type>`); empty when unable to scale. */
  lastAppliedPolicy: string;
}

/** The sync period in milliseconds: `spec.sync.fixedInterval.seconds`, 30 when absent or not positive. */
export function syncIntervalMs(spec: FleetAutoscalerSpec): number {
  const seconds = spec.sync?.fixedInterval?.seconds;
  return (typeof seconds === 'number' && seconds > 0 ? seconds : DEFAULT_SYNC_SECONDS) * 1000;
}
