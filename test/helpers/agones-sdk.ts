import type * as grpc from '@grpc/grpc-js';

// The official Node SDK client (@google-cloud/agones-sdk): its shipped typings omit `beta` and the
// underlying `client`s, so the shape the tests use is declared here once.

export type PbMapEntries<V> = [string, V][];

export interface GameServerObject {
  objectMeta: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    generation: number;
    creationTimestamp: number;
    deletionTimestamp: number;
    annotationsMap: PbMapEntries<string>;
    labelsMap: PbMapEntries<string>;
  };
  spec: { health: { disabled: boolean; periodSeconds: number; failureThreshold: number; initialDelaySeconds: number } };
  status: {
    state: string;
    address: string;
    addressesList: { type: string; address: string }[];
    portsList: { name: string; port: number }[];
    players?: { count: number; capacity: number; idsList: string[] };
    countersMap: PbMapEntries<{ count: number; capacity: number }>;
    listsMap: PbMapEntries<{ capacity: number; valuesList: string[] }>;
  };
}

export interface OfficialSdk {
  connect(): Promise<void>;
  close(): void;
  ready(): Promise<unknown>;
  allocate(): Promise<unknown>;
  shutdown(): Promise<unknown>;
  reserve(seconds: number): Promise<unknown>;
  health(errorCallback: (error: unknown) => void): void;
  getGameServer(): Promise<GameServerObject>;
  watchGameServer(callback: (gs: GameServerObject) => void, errorCallback?: (error: grpc.ServiceError) => void): void;
  setLabel(key: string, value: string): Promise<unknown>;
  setAnnotation(key: string, value: string): Promise<unknown>;
  alpha: {
    client: grpc.Client;
    playerConnect(id: string): Promise<boolean>;
    playerDisconnect(id: string): Promise<boolean>;
    setPlayerCapacity(capacity: number): Promise<unknown>;
    getPlayerCapacity(): Promise<number>;
    getPlayerCount(): Promise<number>;
    isPlayerConnected(id: string): Promise<boolean>;
    getConnectedPlayers(): Promise<string[]>;
  };
  beta: {
    client: grpc.Client;
    getCounterCount(key: string): Promise<number>;
    incrementCounter(key: string, amount: number): Promise<void>;
    decrementCounter(key: string, amount: number): Promise<void>;
    setCounterCount(key: string, amount: number): Promise<void>;
    getCounterCapacity(key: string): Promise<number>;
    setCounterCapacity(key: string, amount: number): Promise<void>;
    getListCapacity(key: string): Promise<number>;
    setListCapacity(key: string, amount: number): Promise<void>;
    listContains(key: string, value: string): Promise<boolean>;
    getListLength(key: string): Promise<number>;
    getListValues(key: string): Promise<string[]>;
    appendListValue(key: string, value: string): Promise<void>;
    deleteListValue(key: string, value: string): Promise<void>;
  };
}
