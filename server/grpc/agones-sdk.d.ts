/**
 * Types for the parts of @google-cloud/agones-sdk's generated protobuf code (lib/*_pb.js,
 * lib/*_grpc_pb.js) that the gRPC sidecar uses. The package ships those files untyped; they are
 * loaded with createRequire and cast to the shapes below. Only what is used is declared.
 */
import type { MethodDefinition } from '@grpc/grpc-js';
import type { Int64 } from '../int64.js';

/** Every generated message. */
export interface PbMessage {
  serializeBinary(): Uint8Array;
}

/** A generated message class: constructed empty, filled with setters. */
export interface PbMessageClass<T extends PbMessage> {
  new (): T;
  deserializeBinary(bytes: Uint8Array): T;
  deserializeBinaryFromReader(message: T, reader: unknown): T;
}

/** `jspb.BinaryWriter`, as far as map serialization needs it. */
export interface PbWriter {
  writeMessage<T>(field: number, value: T, write: (value: T, writer: PbWriter) => void): void;
}

/** A `jspb.BinaryWriter.prototype.write…` method, as generated code passes them around. */
export type PbFieldWriter = (this: PbWriter, field: number, value: unknown, callback?: unknown) => void;

/** `jspb.Map`, as returned by the `get…Map()` accessors of map fields. */
export interface PbMap<V> {
  set(key: string, value: V): PbMap<V>;
  get(key: string): V | undefined;
  has(key: string): boolean;
  getLength(): number;
  /** `[key, stored value]`, sorted by key; message values are stored in array form. */
  getEntryList(): [string, unknown][];
  /**
   * What generated serializers call on a non-empty map. google-protobuf 3 had it; 4 does not
   * (protocolbuffers/protobuf-javascript#249).
   */
  serializeBinary?: (
    field: number,
    writer: PbWriter,
    writeKey: PbFieldWriter,
    writeValue: PbFieldWriter,
    valueCallback?: unknown,
  ) => void;
}

/** A service object of a *_grpc_pb.js file: method name -> definition. */
export type PbServiceDefinition<Names extends string> = {
  readonly [name in Names]: MethodDefinition<PbMessage, PbMessage>;
};

// -- well-known types (google-protobuf) --------------------------------------------------------

/**
 * int64 getters return what the reader gave: an exact `Int64` when the request was read by
 * `exactInt64Reader` (sidecar-grpc.ts). Setters take numbers, bigints or decimal strings.
 */
export interface Int64Value extends PbMessage {
  getValue(): Int64;
}

export interface FieldMask extends PbMessage {
  getPathsList(): string[];
}

// -- agones.dev.sdk (lib/sdk_pb.js) ------------------------------------------------------------

export namespace sdk {
  export type Empty = PbMessage;

  export interface KeyValue extends PbMessage {
    getKey(): string;
    getValue(): string;
  }

  export interface Duration extends PbMessage {
    getSeconds(): number;
  }

  export interface ObjectMeta extends PbMessage {
    setName(value: string): ObjectMeta;
    setNamespace(value: string): ObjectMeta;
    setUid(value: string): ObjectMeta;
    setResourceVersion(value: string): ObjectMeta;
    setGeneration(value: Int64): ObjectMeta;
    setCreationTimestamp(value: Int64): ObjectMeta;
    setDeletionTimestamp(value: Int64): ObjectMeta;
    getAnnotationsMap(): PbMap<string>;
    getLabelsMap(): PbMap<string>;
  }

  export interface Health extends PbMessage {
    setDisabled(value: boolean): Health;
    setPeriodSeconds(value: number): Health;
    setFailureThreshold(value: number): Health;
    setInitialDelaySeconds(value: number): Health;
  }

  export interface Spec extends PbMessage {
    setHealth(value: Health): Spec;
  }

  export interface Address extends PbMessage {
    setType(value: string): Address;
    setAddress(value: string): Address;
  }

  export interface Port extends PbMessage {
    setName(value: string): Port;
    setPort(value: number): Port;
  }

  export interface PlayerStatus extends PbMessage {
    setCount(value: Int64): PlayerStatus;
    setCapacity(value: Int64): PlayerStatus;
    setIdsList(value: string[]): PlayerStatus;
  }

  export interface CounterStatus extends PbMessage {
    setCount(value: Int64): CounterStatus;
    setCapacity(value: Int64): CounterStatus;
  }

  export interface ListStatus extends PbMessage {
    setCapacity(value: Int64): ListStatus;
    setValuesList(value: string[]): ListStatus;
  }

  export interface Status extends PbMessage {
    setState(value: string): Status;
    setAddress(value: string): Status;
    setAddressesList(value: Address[]): Status;
    setPortsList(value: Port[]): Status;
    setPlayers(value: PlayerStatus): Status;
    getCountersMap(): PbMap<CounterStatus>;
    getListsMap(): PbMap<ListStatus>;
  }

  export interface GameServer extends PbMessage {
    setObjectMeta(value: ObjectMeta): GameServer;
    setSpec(value: Spec): GameServer;
    setStatus(value: Status): GameServer;
  }

  export interface Module {
    Empty: PbMessageClass<Empty>;
    KeyValue: PbMessageClass<KeyValue>;
    Duration: PbMessageClass<Duration>;
    GameServer: PbMessageClass<GameServer> & {
      ObjectMeta: PbMessageClass<ObjectMeta>;
      Spec: PbMessageClass<Spec> & { Health: PbMessageClass<Health> };
      Status: PbMessageClass<Status> & {
        Address: PbMessageClass<Address>;
        Port: PbMessageClass<Port>;
        PlayerStatus: PbMessageClass<PlayerStatus>;
        CounterStatus: PbMessageClass<CounterStatus>;
        ListStatus: PbMessageClass<ListStatus>;
      };
    };
  }

  export type Methods =
    | 'ready'
    | 'allocate'
    | 'shutdown'
    | 'health'
    | 'getGameServer'
    | 'watchGameServer'
    | 'setLabel'
    | 'setAnnotation'
    | 'reserve';

  export interface GrpcModule {
    'agones.dev.sdk.SDK': PbServiceDefinition<Methods>;
  }
}

// -- agones.dev.sdk.alpha (lib/alpha/alpha_pb.js) ----------------------------------------------

export namespace alpha {
  export type Empty = PbMessage;

  export interface Count extends PbMessage {
    getCount(): Int64;
    setCount(value: Int64): Count;
  }

  export interface Bool extends PbMessage {
    setBool(value: boolean): Bool;
  }

  export interface PlayerID extends PbMessage {
    getPlayerid(): string;
  }

  export interface PlayerIDList extends PbMessage {
    setListList(value: string[]): PlayerIDList;
  }

  export interface Module {
    Empty: PbMessageClass<Empty>;
    Count: PbMessageClass<Count>;
    Bool: PbMessageClass<Bool>;
    PlayerID: PbMessageClass<PlayerID>;
    PlayerIDList: PbMessageClass<PlayerIDList>;
  }

  export type Methods =
    | 'playerConnect'
    | 'playerDisconnect'
    | 'setPlayerCapacity'
    | 'getPlayerCapacity'
    | 'getPlayerCount'
    | 'isPlayerConnected'
    | 'getConnectedPlayers';

  export interface GrpcModule {
    'agones.dev.sdk.alpha.SDK': PbServiceDefinition<Methods>;
  }
}

// -- agones.dev.sdk.beta (lib/beta/beta_pb.js) -------------------------------------------------

export namespace beta {
  export interface Counter extends PbMessage {
    setName(value: string): Counter;
    setCount(value: Int64): Counter;
    setCapacity(value: Int64): Counter;
  }

  export interface CounterUpdateRequest extends PbMessage {
    getName(): string;
    hasCount(): boolean;
    getCount(): Int64Value | undefined;
    hasCapacity(): boolean;
    getCapacity(): Int64Value | undefined;
    getCountdiff(): Int64;
  }

  export interface GetCounterRequest extends PbMessage {
    getName(): string;
  }

  export interface UpdateCounterRequest extends PbMessage {
    hasCounterupdaterequest(): boolean;
    getCounterupdaterequest(): CounterUpdateRequest | undefined;
  }

  export interface List extends PbMessage {
    getName(): string;
    setName(value: string): List;
    getCapacity(): Int64;
    setCapacity(value: Int64): List;
    getValuesList(): string[];
    setValuesList(value: string[]): List;
  }

  export interface GetListRequest extends PbMessage {
    getName(): string;
  }

  export interface UpdateListRequest extends PbMessage {
    hasList(): boolean;
    getList(): List | undefined;
    hasUpdateMask(): boolean;
    getUpdateMask(): FieldMask | undefined;
  }

  export interface AddListValueRequest extends PbMessage {
    getName(): string;
    getValue(): string;
  }

  export interface RemoveListValueRequest extends PbMessage {
    getName(): string;
    getValue(): string;
  }

  export interface Module {
    Counter: PbMessageClass<Counter>;
    List: PbMessageClass<List>;
  }

  export type Methods = 'getCounter' | 'updateCounter' | 'getList' | 'updateList' | 'addListValue' | 'removeListValue';

  export interface GrpcModule {
    'agones.dev.sdk.beta.SDK': PbServiceDefinition<Methods>;
  }
}
