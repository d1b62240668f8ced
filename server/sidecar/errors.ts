import type { Int64 } from '../kinds/int64.js';
import { stringifyJsonExact } from '../log/json.js';

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
 * An error the sidecar answers with. Agones returns most SDK failures as plain errors, which gRPC
 * turns into UNKNOWN (HTTP 500) with the text as message; only input validation is
 * INVALID_ARGUMENT (HTTP 400). The texts below are Agones's.
 */
export class SdkError extends Error {
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

export const sdkErrors = {
  gateOff: (gate: string) => new SdkError(GrpcCode.UNKNOWN, `${gate} not enabled`),
  counterNotFound: (name: string) => new SdkError(GrpcCode.UNKNOWN, `counter not found: ${name}`),
  listNotFound: (name: string) => new SdkError(GrpcCode.UNKNOWN, `list not found: ${name}`),
  /** UpdateList on an unknown list crashes the real sidecar; the local server's text is kept. */
  updateListNotFound: (name: string) => new SdkError(GrpcCode.UNKNOWN, `not found. ${name} List not found`),
  malformedCounterUpdate: (text: string) =>
    new SdkError(GrpcCode.UNKNOWN, `invalid argument. Malformed CounterUpdateRequest: ${text}`),
  counterUpdateNil: () => new SdkError(GrpcCode.UNKNOWN, 'invalid argument. CounterUpdateRequest: <nil> cannot be nil'),
  negativeCapacity: (capacity: Int64) =>
    new SdkError(
      GrpcCode.UNKNOWN,
      `out of range. Capacity must be greater than or equal to 0. Found Capacity: ${capacity}`,
    ),
  countOutOfRange: (count: Int64, capacity: Int64) =>
    new SdkError(
      GrpcCode.UNKNOWN,
      `out of range. Count must be within range [0,Capacity]. Found Count: ${count}, Capacity: ${capacity}`,
    ),
  listFull: (capacity: Int64, size: number) =>
    new SdkError(
      GrpcCode.UNKNOWN,
      `out of range. No available capacity. Current Capacity: ${capacity}, List Size: ${size}`,
    ),
  valueExists: (value: string, list: string) =>
    new SdkError(GrpcCode.UNKNOWN, `already exists. Value: ${value} already in List: ${list}`),
  valueMissing: (value: string, list: string) =>
    new SdkError(GrpcCode.UNKNOWN, `not found: value ${value} not in list ${list}`),
  listNil: () => new SdkError(GrpcCode.UNKNOWN, 'invalid argument. List: <nil> and UpdateMask <nil> cannot be nil'),
  badMask: (paths: string[]) =>
    new SdkError(
      GrpcCode.UNKNOWN,
      `invalid argument. Field Mask Path(s): [${paths.join(' ')}] are invalid for List. Use valid field name(s): [name capacity values]`,
    ),
  listCapacityOutOfRange: (capacity: Int64) =>
    new SdkError(GrpcCode.UNKNOWN, `out of range. Capacity must be within range [0,1000]. Found Capacity: ${capacity}`),
  listTooLong: (name: string, size: number) =>
    new SdkError(GrpcCode.UNKNOWN, `out of range. List ${name} may hold at most 1000 values. Found: ${size}`),
  playersAtCapacity: () => new SdkError(GrpcCode.UNKNOWN, 'players are already at capacity'),
  invalidLabelKey: (key: string, errors: string[]) =>
    new SdkError(GrpcCode.INVALID_ARGUMENT, `invalid label key "${key}": ${errors.join(', ')}`),
  invalidLabelValue: (value: string, key: string, errors: string[]) =>
    new SdkError(GrpcCode.INVALID_ARGUMENT, `invalid label value "${value}" for key "${key}": ${errors.join(', ')}`),
  invalidAnnotationKey: (key: string, errors: string[]) =>
    new SdkError(GrpcCode.INVALID_ARGUMENT, `invalid annotation key "${key}": ${errors.join(', ')}`),
  gameServerGone: (namespace: string, name: string) =>
    new SdkError(GrpcCode.NOT_FOUND, `gameservers.agones.dev "${name}" not found in namespace "${namespace}"`),
  sidecarNotRunning: (name: string, state: string) =>
    new SdkError(
      GrpcCode.UNAVAILABLE,
      `the sidecar of gameserver ${name} is not running yet: its pod has not started (state ${state})`,
    ),
};
