import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { stringifyJsonExact } from './log/json.js';
import { ApiError } from './k8s/status.js';

/** gRPC status codes, and the HTTP status Agones's gateway maps each to. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

const HTTP_STATUS: Record<GrpcCode, number> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

/** Longest rendering of a bad value in an error message: a 1 MiB value is not echoed back. */
const SHOWN_VALUE_CHARS = 100;

/** A value as an error message shows it (JSON), cut short when long. */
export function showValue(value: unknown): string {
  const text = value === undefined ? 'undefined' : stringifyJsonExact(value);
  return text.length > SHOWN_VALUE_CHARS ? `${text.slice(0, SHOWN_VALUE_CHARS)}…` : text;
}

export function httpStatusOf(code: GrpcCode): number {
  return HTTP_STATUS[code];
}

/**
 * An error answered as a gRPC status: over gRPC as that status, over HTTP as Agones's gateway
 * renders it (`{code, message, details}` with the mapped HTTP status).
 */
export class GrpcError extends Error {
  constructor(
    readonly code: GrpcCode,
    message: string,
  ) {
    super(message);
  }

  get httpStatus(): number {
    return httpStatusOf(this.code);
  }

  toJSON(): { code: number; message: string; details: [] } {
    return { code: this.code, message: this.message, details: [] };
  }
}

/**
 * An allocation's failure as the allocator service answers it, over REST and gRPC alike: a
 * GrpcError as it is; a resource-API refusal of the request (422 validation, 400 decoding) as
 * INVALID_ARGUMENT with its message; anything else UNKNOWN.
 */
export function allocatorErrorOf(error: unknown): GrpcError {
  if (error instanceof GrpcError) return error;
  if (error instanceof ApiError) {
    const code = error.code === 422 || error.code === 400 ? GrpcCode.INVALID_ARGUMENT : GrpcCode.UNKNOWN;
    return new GrpcError(code, error.status.message);
  }
  return new GrpcError(GrpcCode.UNKNOWN, error instanceof Error ? error.message : String(error));
}

/** Serves one gRPC call on its HTTP/2 stream (headers as received); `client` is who sent it. */
export type GrpcStreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, client: string) => void;
