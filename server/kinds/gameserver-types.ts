import type { ObjectMeta } from './meta.js';
import type { Int64 } from '../int64.js';
import type { GAMESERVER_API_VERSION, GAMESERVER_KIND } from './agones.js';

/**
 * The GameServer object as the kinds that hold one see it: a GameServer itself, the template of a
 * set or fleet, an allocation's status, the pod built from it.
 */

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
