import type { FleetStrategy, IntOrString } from '../server/kinds/fleet/fleet.js';

/**
 * How a Fleet moves its replicas from old GameServerSets to the active one (Agones's
 * applyDeploymentStrategy, rollingUpdateActive and rollingUpdateRest; reference §5.3–5.4).
 * Pure: the controller passes what it read, applies the returned sizes and records the events.
 */

/** The part of a GameServerSet's status the strategy reads. */
export interface SetCounts {
  replicas: number;
  readyReplicas: number;
  reservedReplicas: number;
  allocatedReplicas: number;
  shutdownReplicas: number;
}

export interface SetView {
  name: string;
  /** spec.replicas */
  replicas: number;
  status: SetCounts;
}

export interface FleetView {
  /** spec.replicas */
  replicas: number;
  strategy?: FleetStrategy;
  /** status.readyReplicas */
  readyReplicas: number;
}

/** One write of an inactive set's spec.replicas ("Scaling inactive GameServerSet <name> from <from> to <to>"). */
export interface ScaleStep {
  name: string;
  from: number;
  to: number;
}

export interface DeploymentDecision {
  /** The active set's new spec.replicas (negative is possible, as in Agones; the API would refuse it). */
  activeReplicas: number;
  /** Writes to inactive sets, in the order Agones makes them. */
  restScales: ScaleStep[];
}

export interface StrategyOptions {
  /** The RollingUpdateFix feature gate (on by default). */
  rollingUpdateFix?: boolean;
}

export const DEFAULT_MAX_SURGE = '25%';
export const DEFAULT_MAX_UNAVAILABLE = '25%';

/**
 * Kubernetes's GetValueFromIntOrPercent: an integer as is; `"p%"` of `total`, rounded up or
 * down. Throws on anything else (validation keeps such values out of a Fleet).
 */
export function resolveIntOrPercent(value: IntOrString, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const percent = /^(-?\d+)%$/.exec(value);
  if (percent) {
    const scaled = (total * Number(percent[1])) / 100;
    return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
  }
  if (/^-?\d+$/.test(value)) return Number(value);
  throw new Error(`invalid value for IntOrString: invalid value "${value}"`);
}

function sum(sets: readonly SetView[], pick: (set: SetView) => number): number {
  let total = 0;
  for (const set of sets) total += pick(set);
  return total;
}

/** The new spec.replicas of the active set during a rolling update (surge-limited). */
export function rollingUpdateActive(fleet: FleetView, active: SetView, rest: readonly SetView[]): number {
  let replicas = active.replicas;
  const sumAllocated = sum(rest, (s) => s.status.allocatedReplicas);
  // The previous step is still being carried out.
  if (active.replicas !== active.status.replicas) return replicas;
  if (fleet.replicas === 0) return 0;
  if (active.replicas >= fleet.replicas - sumAllocated) return fleet.replicas - sumAllocated;
  const surge = resolveIntOrPercent(fleet.strategy?.rollingUpdate?.maxSurge ?? DEFAULT_MAX_SURGE, fleet.replicas, true);
  const maxTotal = fleet.replicas + surge;
  replicas = Math.min(replicas + surge, fleet.replicas);
  const total = sum(rest, (s) => s.status.replicas) + replicas;
  if (total > maxTotal) replicas = Math.max(0, replicas - (total - maxTotal));
  if (replicas + sumAllocated > fleet.replicas) replicas = Math.max(0, fleet.replicas - sumAllocated);
  return replicas;
}

/** The writes that shrink the inactive sets, keeping enough servers available. */
export function rollingUpdateRest(
  fleet: FleetView,
  active: SetView,
  rest: readonly SetView[],
  options: StrategyOptions = {},
): ScaleStep[] {
  if (rest.length === 0) return [];
  const fix = options.rollingUpdateFix ?? true;
  const maxUnavailable = fleet.strategy?.rollingUpdate?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE;
  // With RollingUpdateFix (Agones's gate, on unless options say otherwise), maxUnavailable is measured against the servers Ready now.
  let unavailable = resolveIntOrPercent(maxUnavailable, fix ? fleet.readyReplicas : fleet.replicas, false);
  if (unavailable === 0) unavailable = 1;
  if (unavailable > fleet.replicas) unavailable = fleet.replicas;

  const all = [...rest, active];
  const readyAll = sum(all, (s) => s.status.readyReplicas);
  let minAvailable: number;
  let maxScaledDown: number;
  if (fix) {
    minAvailable = Math.min(fleet.readyReplicas - unavailable, fleet.replicas);
    const s = active.status;
    const newUnavailable = active.replicas - (s.readyReplicas + s.reservedReplicas + s.allocatedReplicas + s.shutdownReplicas);
    maxScaledDown = readyAll - minAvailable - newUnavailable;
  } else {
    minAvailable = fleet.replicas - unavailable;
    const newUnavailable = active.replicas - active.status.readyReplicas - active.status.allocatedReplicas;
    maxScaledDown = sum(all, (s) => s.replicas) - minAvailable - newUnavailable;
  }
  if (maxScaledDown <= 0) return [];

  const steps: ScaleStep[] = [];
  const replicas = new Map(rest.map((s) => [s.name, s.replicas]));

  // First shrink old sets by the servers they hold that are not serving (starting, unhealthy).
  let cleaned = 0;
  for (const set of rest) {
    if (cleaned >= maxScaledDown) break;
    const current = replicas.get(set.name)!;
    const s = set.status;
    const healthy = fix ? s.readyReplicas + s.allocatedReplicas + s.reservedReplicas : s.readyReplicas;
    if (current === 0 || current <= healthy) continue;
    const n = Math.min(maxScaledDown - cleaned, current - healthy);
    replicas.set(set.name, current - n);
    steps.push({ name: set.name, from: current, to: current - n });
    cleaned += n;
  }

  // Then scale old sets down while enough servers stay available.
  if (readyAll <= minAvailable) return steps;
  const totalScaleDown = readyAll - minAvailable;
  let scaledDown = 0;
  for (const set of rest) {
    if (scaledDown >= totalScaleDown) break;
    const current = replicas.get(set.name)!;
    if (current <= 0) continue;
    // Still shrinking from an earlier step (or the cleanup above): wait for it.
    if (current !== set.status.replicas) break;
    if (set.status.shutdownReplicas !== 0) continue;
    const n = Math.min(current, totalScaleDown - scaledDown);
    let next = current - n;
    // Only Allocated servers are left: nothing more will become available, so let go of the set.
    if (fix && set.status.replicas === set.status.allocatedReplicas) next = 0;
    else if (next === current) continue;
    replicas.set(set.name, next);
    steps.push({ name: set.name, from: current, to: next });
    scaledDown += n;
  }
  return steps;
}

/** The active set's size and the inactive sets' writes under the Fleet's strategy. */
export function applyDeploymentStrategy(
  fleet: FleetView,
  active: SetView,
  rest: readonly SetView[],
  options: StrategyOptions = {},
): DeploymentDecision {
  if (rest.length === 0) return { activeReplicas: fleet.replicas, restScales: [] };
  if (sum(rest, (s) => s.replicas) === 0) {
    const held = sum(rest, (s) => s.status.reservedReplicas + s.status.allocatedReplicas);
    return { activeReplicas: Math.max(0, fleet.replicas - held), restScales: [] };
  }
  if (fleet.strategy?.type === 'Recreate') {
    const restScales = rest.filter((s) => s.replicas !== 0).map((s) => ({ name: s.name, from: s.replicas, to: 0 }));
    // As coded in Agones: only Allocated is subtracted here, not Reserved.
    const held = sum(rest, (s) => s.status.allocatedReplicas);
    return { activeReplicas: Math.max(0, fleet.replicas - held), restScales };
  }
  const activeReplicas = rollingUpdateActive(fleet, active, rest);
  return { activeReplicas, restScales: rollingUpdateRest(fleet, active, rest, options) };
}
