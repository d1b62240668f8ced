import { Module, createRequire } from 'node:module';
import type { Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { ServerSurfaceCall } from '@grpc/grpc-js/build/src/server-call.js';
import type { Subscription } from 'rxjs';
import { type RequestCause, requestCause } from '../log/cause.js';
import type { SdkGameServer } from '../kinds/gameserver/sdk-json.js';
import { type Int64, toInt64 } from '../int64.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import type { Counter, CounterUpdate, List } from '../sidecar/counts-and-lists.js';
import type { Sidecar } from '../sidecar/sidecar.js';
import { StreamRegistry } from '../sidecar/stream-registry.js';
import type { ConnectionGuard } from '../connections.js';
import type { PbMap, PbMessage, PbMessageClass, PbServiceDefinition, alpha, beta, sdk } from './agones-sdk.js';

/**
 * The Agones SDK sidecar over gRPC: the services `agones.dev.sdk.SDK`, `agones.dev.sdk.alpha.SDK`
 * and `agones.dev.sdk.beta.SDK`, with descriptors and message classes taken from the official
 * @google-cloud/agones-sdk package (its generated serializers check `instanceof`, so responses
 * must be built from those very classes). Every RPC is a thin adapter over a `Sidecar` method.
 */

/** The gRPC services, on connections handed in (sidecar-grpc-port.ts listens, and loads this module at the first connection). */
export interface SidecarGrpcConnections {
  /** Serves gRPC on an accepted connection, given what it has sent so far. */
  inject(socket: Socket): void;
  /** Ends open watch streams cleanly, then shuts down (forcibly if calls linger). */
  close(): Promise<void>;
}

/** How long `close` lets in-flight calls finish before cancelling them. */
const SHUTDOWN_GRACE_MS = 500;

const require = createRequire(import.meta.url);

/**
 * The proto files' option extensions the generated modules require: Google's HTTP and field
 * annotations and the OpenAPI ones, with descriptor.proto under them (three copies of OpenAPI's,
 * one per package). They only add extensions to the global `proto` namespace; no message or
 * service uses them, and loaded they were half of what the gRPC path added to an idle sidecar's
 * memory (5 MiB). Each resolves to an empty module instead, unless something loaded it already.
 */
const OPTION_EXTENSIONS = ['', 'alpha/', 'beta/'].flatMap((dir) => [`${dir}google/api/annotations_pb.js`, `${dir}protoc-gen-openapiv2/options/annotations_pb.js`]).concat(
  ['client_pb.js', 'field_behavior_pb.js', 'resource_pb.js'].map((file) => `beta/google/api/${file}`),
);
function skipOptionExtensions(): void {
  for (const file of OPTION_EXTENSIONS) {
    const path = require.resolve(`@google-cloud/agones-sdk/lib/${file}`);
    if (require.cache[path]) continue;
    const empty = new Module(path);
    empty.filename = path;
    empty.loaded = true;
    require.cache[path] = empty;
  }
  // The namespace the first of them would have made (goog.exportSymbol), which the others extend.
  (globalThis as { proto?: object }).proto ??= {};
}
skipOptionExtensions();

const sdkPb = require('@google-cloud/agones-sdk/lib/sdk_pb.js') as sdk.Module;
const sdkGrpc = require('@google-cloud/agones-sdk/lib/sdk_grpc_pb.js') as sdk.GrpcModule;
const alphaPb = require('@google-cloud/agones-sdk/lib/alpha/alpha_pb.js') as alpha.Module;
const alphaGrpc = require('@google-cloud/agones-sdk/lib/alpha/alpha_grpc_pb.js') as alpha.GrpcModule;
const betaPb = require('@google-cloud/agones-sdk/lib/beta/beta_pb.js') as beta.Module;
const betaGrpc = require('@google-cloud/agones-sdk/lib/beta/beta_grpc_pb.js') as beta.GrpcModule;
const jspb = require('google-protobuf') as { BinaryReader: new (bytes: Uint8Array) => Int64Reader };

interface Int64Reader {
  readInt64(): Int64;
  readInt64String(): string;
}

/**
 * The generated code reads int64 fields with `readInt64`, a double that rounds past 2^53. A
 * request is read by a reader whose `readInt64` gives the exact value (an `Int64`) instead.
 */
function exactInt64Reader(bytes: Uint8Array): Int64Reader {
  const reader = new jspb.BinaryReader(bytes);
  reader.readInt64 = () => toInt64(BigInt(reader.readInt64String()));
  return reader;
}

/** A service definition whose requests are read with `exactInt64Reader`. */
function exactRequests<Names extends string>(service: PbServiceDefinition<Names>): PbServiceDefinition<Names> {
  const out: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(service) as Array<[string, PbServiceDefinition<Names>[Names]]>) {
    const type = (method as { requestType?: PbMessageClass<PbMessage> }).requestType;
    out[name] = type
      ? { ...method, requestDeserialize: (bytes: Buffer) => type.deserializeBinaryFromReader(new type(), exactInt64Reader(bytes)) }
      : method;
  }
  return out as PbServiceDefinition<Names>;
}

// -- errors --------------------------------------------------------------------------------------

/** An GrpcError keeps its code and text; anything else is INTERNAL. */
function toServiceError(error: unknown): grpc.ServerErrorResponse {
  const code = error instanceof GrpcError ? error.code : GrpcCode.INTERNAL;
  const details = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

// -- messages ------------------------------------------------------------------------------------

/**
 * The generated sdk_pb.js writes a non-empty map field by calling `jspb.Map#serializeBinary`,
 * which the google-protobuf 4 runtime the package depends on no longer has
 * (protocolbuffers/protobuf-javascript#249): any GameServer with an annotation, label, counter or
 * list would fail to serialize with "f.serializeBinary is not a function". Maps filled here get
 * the method back on the instance (the global prototype is left alone), writing each entry as
 * the wire format defines it: a sub-message with the key as field 1 and the value as field 2.
 */
function serializable<V>(map: PbMap<V>): PbMap<V> {
  if (typeof map.serializeBinary === 'function') return map;
  const serializeBinary: NonNullable<PbMap<V>['serializeBinary']> = function (
    this: PbMap<V>,
    field,
    writer,
    writeKey,
    writeValue,
    valueCallback,
  ) {
    for (const [key] of this.getEntryList()) {
      // `get` returns the message wrapper for message values, the value itself otherwise.
      const value = this.get(key);
      writer.writeMessage(field, value, (_, entry) => {
        writeKey.call(entry, 1, key);
        if (valueCallback === undefined) writeValue.call(entry, 2, value);
        else writeValue.call(entry, 2, value, valueCallback);
      });
    }
  };
  Object.defineProperty(map, 'serializeBinary', { value: serializeBinary, configurable: true, writable: true });
  return map;
}

/** int64 fields travel as strings in the JSON shape; the generated setters take exact values. */
function int64(text: string): Int64 {
  return /^-?\d+$/.test(text) ? toInt64(BigInt(text)) : 0;
}

/** `SdkGameServer` (Agones's JSON shape) -> `agones.dev.sdk.GameServer`. */
export function toGameServerMessage(gs: SdkGameServer): sdk.GameServer {
  const { GameServer } = sdkPb;
  const { object_meta: om, spec, status } = gs;

  const meta = new GameServer.ObjectMeta()
    .setName(om.name)
    .setNamespace(om.namespace)
    .setUid(om.uid)
    .setResourceVersion(om.resource_version)
    .setGeneration(int64(om.generation))
    .setCreationTimestamp(int64(om.creation_timestamp))
    .setDeletionTimestamp(int64(om.deletion_timestamp));
  const annotations = serializable(meta.getAnnotationsMap());
  for (const [key, value] of Object.entries(om.annotations)) annotations.set(key, value);
  const labels = serializable(meta.getLabelsMap());
  for (const [key, value] of Object.entries(om.labels)) labels.set(key, value);

  const health = new GameServer.Spec.Health()
    .setDisabled(spec.health.disabled)
    .setPeriodSeconds(spec.health.period_seconds)
    .setFailureThreshold(spec.health.failure_threshold)
    .setInitialDelaySeconds(spec.health.initial_delay_seconds);

  const { Status } = GameServer;
  const statusMessage = new Status()
    .setState(status.state)
    .setAddress(status.address)
    .setAddressesList(status.addresses.map((a) => new Status.Address().setType(a.type).setAddress(a.address)))
    .setPortsList(status.ports.map((p) => new Status.Port().setName(p.name).setPort(p.port)));
  if (status.players) {
    statusMessage.setPlayers(
      new Status.PlayerStatus()
        .setCount(int64(status.players.count))
        .setCapacity(int64(status.players.capacity))
        .setIdsList([...status.players.ids]),
    );
  }
  const counters = serializable(statusMessage.getCountersMap());
  for (const [name, c] of Object.entries(status.counters)) {
    counters.set(name, new Status.CounterStatus().setCount(int64(c.count)).setCapacity(int64(c.capacity)));
  }
  const lists = serializable(statusMessage.getListsMap());
  for (const [name, l] of Object.entries(status.lists)) {
    lists.set(name, new Status.ListStatus().setCapacity(int64(l.capacity)).setValuesList([...l.values]));
  }

  return new GameServer()
    .setObjectMeta(meta)
    .setSpec(new GameServer.Spec().setHealth(health))
    .setStatus(statusMessage);
}

function counterMessage(counter: Counter): beta.Counter {
  return new betaPb.Counter().setName(counter.name).setCount(counter.count).setCapacity(counter.capacity);
}

function listMessage(list: List): beta.List {
  return new betaPb.List().setName(list.name).setCapacity(list.capacity).setValuesList([...list.values]);
}

/** Absent request -> undefined; absent Int64Value wrapper -> property left out. */
function counterUpdate(request: beta.UpdateCounterRequest): CounterUpdate | undefined {
  const update = request.hasCounterupdaterequest() ? request.getCounterupdaterequest() : undefined;
  if (!update) return undefined;
  const count = update.hasCount() ? update.getCount() : undefined;
  const capacity = update.hasCapacity() ? update.getCapacity() : undefined;
  return {
    name: update.getName(),
    ...(count && { count: count.getValue() }),
    ...(capacity && { capacity: capacity.getValue() }),
    countDiff: update.getCountdiff(),
  };
}

function listUpdate(request: beta.UpdateListRequest): [List | undefined, string[] | undefined] {
  const list = request.hasList() ? request.getList() : undefined;
  const mask = request.hasUpdateMask() ? request.getUpdateMask() : undefined;
  return [
    list && { name: list.getName(), capacity: list.getCapacity(), values: [...list.getValuesList()] },
    // Present but empty stays `[]`: the Node SDK's setListCapacity sends exactly that.
    mask && [...mask.getPathsList()],
  ];
}

/** A gRPC call as a cause: the method's path, the peer, and the `x-request-id` metadata if sent. */
function grpcCallCause(call: ServerSurfaceCall): RequestCause {
  const id = call.metadata.get('x-request-id')[0];
  return requestCause({
    method: 'GRPC',
    path: call.getPath(),
    client: call.getPeer(),
    requestId: typeof id === 'string' ? id : undefined,
  });
}

// -- handlers ------------------------------------------------------------------------------------

/** The sidecar answering one call, told which call it is (recorded as the cause of what it changes). */
type Resolve = (call: ServerSurfaceCall) => Sidecar;

/** A unary RPC: resolve the sidecar, run, answer; a throw or rejection becomes the status. */
function unary<Req extends PbMessage, Res extends PbMessage>(
  resolve: Resolve,
  run: (sidecar: Sidecar, request: Req) => Res | Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => run(resolve(call), call.request))
      .then(
        (response) => callback(null, response),
        (error: unknown) => callback(toServiceError(error)),
      );
  };
}

/** Health: one ping per message received; `Empty` once the client half-closes. */
function healthHandler(resolve: Resolve): grpc.handleClientStreamingCall<sdk.Empty, sdk.Empty> {
  return (call, callback) => {
    let done = false;
    const finish = (error: unknown) => {
      if (done) return;
      done = true;
      if (error === undefined) callback(null, new sdkPb.Empty());
      else callback(toServiceError(error));
    };
    call.on('data', () => {
      if (done) return;
      try {
        resolve(call).health(1);
      } catch (error) {
        finish(error);
      }
    });
    call.on('end', () => finish(undefined));
    call.on('cancelled', () => {
      done = true;
    });
  };
}

/** WatchGameServer: one message per emission, OK when the observable completes or the server closes. */
function watchHandler(
  resolve: Resolve,
  watches: StreamRegistry,
): grpc.handleServerStreamingCall<sdk.Empty, sdk.GameServer> {
  return (call) => {
    let subscription: Subscription | undefined;
    let finished = false;
    let unregister: () => void = () => {};
    /** Stops the subscription exactly once; true for the caller that got to finish. */
    const finish = (): boolean => {
      if (finished) return false;
      finished = true;
      unregister();
      subscription?.unsubscribe();
      return true;
    };
    const fail = (error: unknown) => {
      if (finish()) call.emit('error', toServiceError(error));
    };
    unregister = watches.add(() => {
      if (finish()) call.end();
    });
    call.on('cancelled', () => finish());

    try {
      subscription = resolve(call)
        .watchGameServer()
        .subscribe({
          next: (gs) => {
            if (finished) return;
            let message: sdk.GameServer;
            try {
              message = toGameServerMessage(gs);
            } catch (error) {
              fail(error);
              return;
            }
            call.write(message);
          },
          error: fail,
          complete: () => {
            if (finish()) call.end();
          },
        });
    } catch (error) {
      fail(error);
    }
    // The observable may have finished during subscribe, before `subscription` was assigned.
    if (finished) subscription?.unsubscribe();
  };
}

function sdkService(resolve: Resolve, watches: StreamRegistry): Record<sdk.Methods, grpc.UntypedHandleCall> {
  const empty = () => new sdkPb.Empty();
  return {
    ready: unary<sdk.Empty, sdk.Empty>(resolve, async (s) => {
      await s.ready();
      return empty();
    }),
    allocate: unary<sdk.Empty, sdk.Empty>(resolve, async (s) => {
      await s.allocate();
      return empty();
    }),
    shutdown: unary<sdk.Empty, sdk.Empty>(resolve, async (s) => {
      await s.shutdown();
      return empty();
    }),
    reserve: unary<sdk.Duration, sdk.Empty>(resolve, async (s, req) => {
      await s.reserve(req.getSeconds());
      return empty();
    }),
    health: healthHandler(resolve),
    getGameServer: unary<sdk.Empty, sdk.GameServer>(resolve, async (s) => toGameServerMessage(await s.getGameServer())),
    watchGameServer: watchHandler(resolve, watches),
    setLabel: unary<sdk.KeyValue, sdk.Empty>(resolve, async (s, req) => {
      await s.setLabel(req.getKey(), req.getValue());
      return empty();
    }),
    setAnnotation: unary<sdk.KeyValue, sdk.Empty>(resolve, async (s, req) => {
      await s.setAnnotation(req.getKey(), req.getValue());
      return empty();
    }),
  };
}

function alphaService(resolve: Resolve): Record<alpha.Methods, grpc.UntypedHandleCall> {
  const bool = (value: boolean) => new alphaPb.Bool().setBool(value);
  const count = (value: Int64) => new alphaPb.Count().setCount(value);
  return {
    playerConnect: unary<alpha.PlayerID, alpha.Bool>(resolve, async (s, req) =>
      bool(await s.playerConnect(req.getPlayerid())),
    ),
    playerDisconnect: unary<alpha.PlayerID, alpha.Bool>(resolve, async (s, req) =>
      bool(await s.playerDisconnect(req.getPlayerid())),
    ),
    setPlayerCapacity: unary<alpha.Count, alpha.Empty>(resolve, async (s, req) => {
      await s.setPlayerCapacity(req.getCount());
      return new alphaPb.Empty();
    }),
    getPlayerCapacity: unary<alpha.Empty, alpha.Count>(resolve, async (s) => count(await s.getPlayerCapacity())),
    getPlayerCount: unary<alpha.Empty, alpha.Count>(resolve, async (s) => count(await s.getPlayerCount())),
    isPlayerConnected: unary<alpha.PlayerID, alpha.Bool>(resolve, async (s, req) =>
      bool(await s.isPlayerConnected(req.getPlayerid())),
    ),
    getConnectedPlayers: unary<alpha.Empty, alpha.PlayerIDList>(resolve, async (s) =>
      new alphaPb.PlayerIDList().setListList(await s.getConnectedPlayers()),
    ),
  };
}

function betaService(resolve: Resolve): Record<beta.Methods, grpc.UntypedHandleCall> {
  return {
    getCounter: unary<beta.GetCounterRequest, beta.Counter>(resolve, async (s, req) =>
      counterMessage(await s.getCounter(req.getName())),
    ),
    updateCounter: unary<beta.UpdateCounterRequest, beta.Counter>(resolve, async (s, req) =>
      counterMessage(await s.updateCounter(counterUpdate(req))),
    ),
    getList: unary<beta.GetListRequest, beta.List>(resolve, async (s, req) => listMessage(await s.getList(req.getName()))),
    updateList: unary<beta.UpdateListRequest, beta.List>(resolve, async (s, req) =>
      listMessage(await s.updateList(...listUpdate(req))),
    ),
    addListValue: unary<beta.AddListValueRequest, beta.List>(resolve, async (s, req) =>
      listMessage(await s.addListValue(req.getName(), req.getValue())),
    ),
    removeListValue: unary<beta.RemoveListValueRequest, beta.List>(resolve, async (s, req) =>
      listMessage(await s.removeListValue(req.getName(), req.getValue())),
    ),
  };
}

// -- server --------------------------------------------------------------------------------------

/** A call holds its connection busy (so the guard never takes it for an idle one) until its status is sent or it is cancelled. */
function busyWhileCalled(connections: ConnectionGuard): grpc.ServerInterceptor {
  return (_method, call) => {
    const done = connections.begin(call.getConnectionInfo());
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: done }),
      sendStatus: (status, next) => {
        done();
        next(status);
      },
    });
  };
}

/**
 * The services answering with `sidecar`, resolved per call (it may throw a GrpcError: the
 * GameServer is gone); their calls keep their connections busy in `connections`.
 */
export function sidecarGrpcConnections(sidecar: (cause: () => RequestCause) => Sidecar, connections: ConnectionGuard): SidecarGrpcConnections {
  // A connection with no call open is closed after http2IdleMs, as any HTTP/2 connection of the process.
  const server = new grpc.Server({ 'grpc.max_connection_idle_ms': connections.timeouts.http2IdleMs, interceptors: [busyWhileCalled(connections)] });
  const watches = new StreamRegistry();
  const resolve: Resolve = (call) => sidecar(() => grpcCallCause(call));

  server.addService(exactRequests(sdkGrpc['agones.dev.sdk.SDK']), sdkService(resolve, watches));
  server.addService(exactRequests(alphaGrpc['agones.dev.sdk.alpha.SDK']), alphaService(resolve));
  server.addService(exactRequests(betaGrpc['agones.dev.sdk.beta.SDK']), betaService(resolve));
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((done) => {
      watches.endAll();
      const fallback = setTimeout(() => {
        server.forceShutdown();
        done();
      }, SHUTDOWN_GRACE_MS);
      server.tryShutdown(() => {
        clearTimeout(fallback);
        done();
      });
    });
    return closing;
  };

  return { inject: (socket) => injector.injectConnection(socket), close };
}
