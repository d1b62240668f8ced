import { type IncomingHttpHeaders, type ServerHttp2Stream, constants } from 'node:http2';
import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { AllocationService } from '../allocation/allocation-service.js';
import { type AllocationResponseJson, unallocatedGrpcCode } from '../allocation/allocation-request.js';
import { GrpcCode, GrpcError, type GrpcStreamHandler, allocatorErrorOf } from '../grpc-status.js';
import { requestCause } from '../log/cause.js';

/**
 * The allocator service over gRPC: `allocation.AllocationService/Allocate`, a unary call, served
 * on an HTTP/2 stream of the allocator's TLS listener (which also serves REST, as Agones's
 * allocator does on its one port). The message types come from server/grpc/allocation.proto; a
 * request is decoded to protojson's shape and goes through the very handler the REST endpoint
 * uses, and the response is the same AllocationResponse, encoded.
 *
 * The framing is gRPC's over HTTP/2: each message is a 5-byte prefix (compressed flag, big-endian
 * length) then the bytes; the answer is headers, one message, then trailers with `grpc-status`,
 * or for an error the headers alone carrying the status ("trailers-only"). What grpc-go (Agones's
 * server) answers for what goes wrong is followed: a message larger than 4 MiB is
 * RESOURCE_EXHAUSTED, bytes that do not decode are INTERNAL, unknown fields are skipped, an
 * unknown method is UNIMPLEMENTED, a compressed message is UNIMPLEMENTED (no decompressor).
 */

/** grpc-go's default largest message a server receives. */
export const GRPC_MAX_RECEIVE_BYTES = 4 * 1024 * 1024;
export const ALLOCATE_METHOD = '/allocation.AllocationService/Allocate';
/** The .proto file, beside this module's source (built, this module is in dist/server/grpc/). */
export const ALLOCATION_PROTO = [new URL('allocation.proto', import.meta.url), new URL('../../../server/grpc/allocation.proto', import.meta.url)]
  .map((url) => fileURLToPath(url))
  .find((path) => existsSync(path))!;

const root = protobuf.loadSync(ALLOCATION_PROTO);
const REQUEST = root.lookupType('allocation.AllocationRequest');
const RESPONSE = root.lookupType('allocation.AllocationResponse');

// -- messages --------------------------------------------------------------------------------------

/** A wrapper message (google.protobuf.StringValue, Int64Value…): protojson writes its bare value. */
function isWrapper(type: protobuf.Type): boolean {
  return type.fullName.startsWith('.google.protobuf.') && type.fullName.endsWith('Value');
}

/** `toObject`'s output in protojson's shape: each wrapper replaced by its value (unset inside: the zero value). */
function unwrapValues(type: protobuf.Type, object: Record<string, unknown>): Record<string, unknown> {
  for (const field of type.fieldsArray) {
    const value = object[field.name];
    const fieldType = field.resolvedType;
    if (value === undefined || !(fieldType instanceof protobuf.Type)) continue;
    const convert = (item: unknown): unknown => {
      const message = item as Record<string, unknown>;
      if (!isWrapper(fieldType)) return unwrapValues(fieldType, message);
      return message.value ?? (fieldType.name === 'StringValue' ? '' : fieldType.name === 'BoolValue' ? false : '0');
    };
    if (field.map) object[field.name] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, convert(v)]));
    else if (field.repeated) object[field.name] = (value as unknown[]).map(convert);
    else object[field.name] = convert(value);
  }
  return object;
}

/** An AllocationRequest's bytes as protojson would read them (64-bit integers as decimal strings). */
export function decodeAllocationRequest(bytes: Uint8Array): unknown {
  let message: protobuf.Message;
  try {
    // A plain Uint8Array: protobufjs's reader for Buffers lets a string run past the end of the message.
    message = REQUEST.decode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    throw new GrpcError(GrpcCode.INTERNAL, `grpc: error unmarshalling request: ${(error as Error).message}`);
  }
  return unwrapValues(REQUEST, REQUEST.toObject(message, { longs: String, enums: Number }));
}

/** The AllocationResponse the REST endpoint writes as JSON, as protobuf bytes. */
export function encodeAllocationResponse(response: AllocationResponseJson): Uint8Array {
  const int64Value = (value: string) => ({ value });
  const object = {
    ...response,
    metadata: response.metadata ?? undefined,
    counters: Object.fromEntries(
      Object.entries(response.counters).map(([key, c]) => [key, { count: int64Value(c.count), capacity: int64Value(c.capacity) }]),
    ),
    lists: Object.fromEntries(Object.entries(response.lists).map(([key, l]) => [key, { values: l.values, capacity: int64Value(l.capacity) }])),
  };
  return RESPONSE.encode(RESPONSE.fromObject(object)).finish();
}

// -- framing -----------------------------------------------------------------------------------------

/** `grpc-message` is percent-encoded: bytes outside printable ASCII, and `%` itself. */
function grpcMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Once a call is answered, what the client may still be sending is refused: grpc-go resets a
 * stream the client has not half-closed (RST_STREAM, NO_ERROR) after the answer's trailers. Called
 * once the trailers are submitted, the reset waits for the session to have sent them (as Node
 * closes a stream itself): submitted at once, it overtakes them and the answer is lost.
 */
function refuseTheRest(stream: ServerHttp2Stream): void {
  setImmediate(() => {
    if (!stream.destroyed && !stream.closed && stream.state.remoteClose === 0) stream.close(constants.NGHTTP2_NO_ERROR);
  });
}

/** An error as trailers-only: the status in the response headers, and the stream ended. */
function respondError(stream: ServerHttp2Stream, error: GrpcError): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(error.code), 'grpc-message': grpcMessage(error.message) },
    { endStream: true },
  );
  refuseTheRest(stream);
}

/** A unary call's answer: headers, the one message, then trailers with status OK. */
export function respondMessage(stream: ServerHttp2Stream, bytes: Uint8Array): void {
  if (stream.destroyed) return;
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => {
    stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' });
    refuseTheRest(stream);
  });
  stream.end(frame);
}

/**
 * Reads the one message of a unary call as grpc-go's server does: the 5-byte prefix, then the
 * length it declares, and not a byte more (what the client sends after it is left unread; the
 * answer resets the stream). Undefined when the stream ends before a message begins. A message
 * over `limit` is refused as soon as its prefix says so, without reading it.
 */
function readUnaryMessage(body: Readable, limit: number, encoding: string): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    let head: Buffer = Buffer.alloc(0);
    /** The declared length, once the prefix is in; the message's bytes so far (gathered, then joined once). */
    let length = -1;
    const parts: Buffer[] = [];
    let filled = 0;
    const settle = (finish: () => void) => {
      body.off('data', onData);
      body.off('end', onEnd);
      // Held, not drained: flow control stops the client until the stream is closed.
      body.pause();
      finish();
    };
    const onData = (chunk: Buffer) => {
      let rest = chunk;
      if (length < 0) {
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        if (head.length < 5) return;
        length = head.readUInt32BE(1);
        if (head[0] !== 0) {
          const error =
            encoding === '' || encoding === 'identity'
              ? new GrpcError(GrpcCode.INTERNAL, 'grpc: compressed flag set with identity or empty encoding')
              : new GrpcError(GrpcCode.UNIMPLEMENTED, `grpc: Decompressor is not installed for grpc-encoding "${encoding}"`);
          return settle(() => reject(error));
        }
        if (length > limit) {
          return settle(() => reject(new GrpcError(GrpcCode.RESOURCE_EXHAUSTED, `grpc: received message larger than max (${length} vs. ${limit})`)));
        }
        rest = head.subarray(5);
      }
      const taken = rest.subarray(0, length - filled);
      parts.push(taken);
      filled += taken.length;
      if (filled === length) settle(() => resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, length)));
    };
    const onEnd = () => {
      if (head.length === 0) return resolve(undefined);
      reject(new GrpcError(GrpcCode.INTERNAL, 'grpc: error unmarshalling request: unexpected EOF'));
    };
    body.on('data', onData);
    body.once('end', onEnd);
    // Kept once settled: a stream the client resets later errors, and an error nobody hears is thrown.
    body.once('error', reject);
  });
}

/** The allocator's gRPC calls, served from `service` (the handler REST uses); UnAllocated is Agones's default 429's code. */
export function allocationGrpc(service: AllocationService): GrpcStreamHandler {
  const unallocated = unallocatedGrpcCode(429);
  const serve = async (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, client: string): Promise<void> => {
    const path = headers[':path'] ?? '';
    if (headers[':method'] !== 'POST') throw new GrpcError(GrpcCode.UNIMPLEMENTED, `invalid gRPC request method "${headers[':method']}"`);
    if (path !== ALLOCATE_METHOD) {
      const service = path.slice(1, path.lastIndexOf('/'));
      throw new GrpcError(
        GrpcCode.UNIMPLEMENTED,
        service === 'allocation.AllocationService' ? `unknown method ${path.slice(path.lastIndexOf('/') + 1)} for service ${service}` : `unknown service ${service}`,
      );
    }
    const encoding = headers['grpc-encoding'];
    const bytes = await readUnaryMessage(stream, GRPC_MAX_RECEIVE_BYTES, typeof encoding === 'string' ? encoding : '');
    if (!bytes) throw new GrpcError(GrpcCode.UNKNOWN, 'EOF');
    const id = headers['x-request-id'];
    const cause = requestCause({ method: 'POST', path, client, requestId: Array.isArray(id) ? id[0] : id });
    // Every byte as text: requests that differ in any way are prepared apart.
    const received = { via: 'allocator-grpc', body: bytes.toString('latin1'), read: () => decodeAllocationRequest(bytes) } as const;
    const response = await service.allocateRequest(received, unallocated, cause);
    respondMessage(stream, encodeAllocationResponse(response));
  };
  return (stream, headers, client) => {
    serve(stream, headers, client).catch((error: unknown) => respondError(stream, allocatorErrorOf(error)));
  };
}
