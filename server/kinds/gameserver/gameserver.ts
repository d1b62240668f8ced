import type { ObjectMeta } from '../meta.js';
import type { Int64 } from '../../int64.js';

/**
 * The GameServer kind: its names, states and spec/status types. Its events and reducer are in
 * events.ts, its sidecar wire encoding in sdk-json.ts.
 */

export const GAMESERVER_KIND = 'GameServer';
export const GAMESERVER_API_VERSION = 'agones.dev/v1';

export const GAMESERVER_STATES = [
  'PortAllocation',
  'Creating',
  'Starting',
  'Scheduled',
  'RequestReady',
  'Ready',
  'Shutdown',
  'Error',
  'Unhealthy',
  'Reserved',
  'Allocated',
] as const;
export type GameServerState = (typeof GAMESERVER_STATES)[number];

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
 * fleetsim's own annotations (the command below, the process profile of server/sim/profiles.ts)
 * say what a GameServer's pod runs. Like a pod's command they come with the GameServer when it is
 * created (from its template) and are fixed from then on.
 */
export const FLEETSIM_ANNOTATION_PREFIX = 'fleetsim.dev/';
/** A real command line to run as the game server instead of a simulation (server/controllers/gameserver-processes.ts). */
export const COMMAND_ANNOTATION = `${FLEETSIM_ANNOTATION_PREFIX}command`;

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
/** Agones's hard limit on a list: its capacity and the values it holds (SDK, CRD, allocation actions). */
export const LIST_MAX_CAPACITY = 1000;

export type PortPolicy = 'Dynamic' | 'Static' | 'Passthrough' | 'None';
export type Protocol = 'UDP' | 'TCP' | 'TCPUDP';
export type SchedulingStrategy = 'Packed' | 'Distributed';

export interface GameServerPort {
  name: string;
  portPolicy: PortPolicy;
  range?: string;
  container?: string;
  containerPort?: number;
  hostPort?: number;
  protocol: Protocol;
}

/**
 * With health checking on, the defaults fill every number. With it off Agones defaults nothing,
 * and a number left unset is absent (Go's zero value, which the schema's bounds would refuse).
 */
export interface Health {
  disabled: boolean;
  periodSeconds?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}

export interface CounterStatus {
  count: Int64;
  capacity: Int64;
}

export interface ListStatus {
  capacity: number;
  values: string[];
}

export interface PlayerStatus {
  count: Int64;
  capacity: Int64;
  ids: string[];
}

export interface SdkServer {
  logLevel: string;
  grpcPort: number;
  httpPort: number;
}

export interface GameServerSpec {
  container?: string;
  ports: GameServerPort[];
  health: Health;
  scheduling: SchedulingStrategy;
  sdkServer: SdkServer;
  /** The pod template, kept as given: fleetsim simulates the pod rather than running it. */
  template: Record<string, unknown>;
  players?: { initialCapacity: Int64 };
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  eviction?: { safe: string };
}

export interface NodeAddress {
  type: string;
  address: string;
}

export interface GameServerStatusPort {
  name: string;
  port: number;
}

export interface GameServerStatus {
  state: GameServerState;
  ports: GameServerStatusPort[];
  address: string;
  addresses: NodeAddress[];
  nodeName: string;
  reservedUntil: string | null;
  players?: PlayerStatus;
  counters?: Record<string, CounterStatus>;
  lists?: Record<string, ListStatus>;
  eviction?: { safe: string };
}

export interface GameServer {
  apiVersion: typeof GAMESERVER_API_VERSION;
  kind: typeof GAMESERVER_KIND;
  metadata: ObjectMeta;
  spec: GameServerSpec;
  status: GameServerStatus;
}
