import type { GameServer, GameServerState } from '../gameserver-types.js';

/**
 * The GameServer kind: its states and finalizers. Its name and the object's types are on the kinds'
 * floor (agones.ts, gameserver-types.ts), shared with the kinds that hold a GameServer; its events
 * and reducer are in events.ts, its sidecar wire encoding in sdk-json.ts.
 */

/** States in which the pod, and so the sidecar, is running. */
export const SIDECAR_RUNNING_STATES: ReadonlySet<GameServerState> = new Set([
  'Scheduled',
  'RequestReady',
  'Ready',
  'Reserved',
  'Allocated',
]);
/** States nothing recovers from. */
export const TERMINAL_STATES: ReadonlySet<GameServerState> = new Set(['Shutdown', 'Error', 'Unhealthy']);

/**
 * The finalizer Agones's GameServer controller puts on every GameServer and takes off once its pod
 * has gone (`agones.dev`, older releases' name, is taken off too).
 */
export const GAMESERVER_FINALIZER = 'agones.dev/controller';
const AGONES_FINALIZERS: ReadonlySet<string> = new Set([GAMESERVER_FINALIZER, 'agones.dev']);

/** A GameServer's finalizers other than Agones's own: what holds it once its pod has gone. */
export function foreignFinalizers(gs: GameServer): string[] {
  return (gs.metadata.finalizers ?? []).filter((f) => !AGONES_FINALIZERS.has(f));
}

/** Prefix of every label and annotation written through the SDK. */
export const SDK_METADATA_PREFIX = 'agones.dev/sdk-';
export const LAST_ALLOCATED_ANNOTATION = 'agones.dev/last-allocated';
