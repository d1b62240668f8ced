import type { Int64 } from '../int64.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import { LIST_MAX_CAPACITY } from '../kinds/gameserver-types.js';

/**
 * The sidecar's own failures. Agones returns most SDK failures as plain errors, which gRPC turns
 * into UNKNOWN (HTTP 500) with the text as message; only input validation is INVALID_ARGUMENT
 * (HTTP 400). The texts are Agones's.
 */
export const sdkErrors = {
  gateOff: (gate: string) => new GrpcError(GrpcCode.UNKNOWN, `${gate} not enabled`),
  counterNotFound: (name: string) => new GrpcError(GrpcCode.UNKNOWN, `counter not found: ${name}`),
  listNotFound: (name: string) => new GrpcError(GrpcCode.UNKNOWN, `list not found: ${name}`),
  /** UpdateList on an unknown list crashes the real sidecar; the local server's text is kept. */
  updateListNotFound: (name: string) => new GrpcError(GrpcCode.UNKNOWN, `not found. ${name} List not found`),
  malformedCounterUpdate: (text: string) =>
    new GrpcError(GrpcCode.UNKNOWN, `invalid argument. Malformed CounterUpdateRequest: ${text}`),
  counterUpdateNil: () => new GrpcError(GrpcCode.UNKNOWN, 'invalid argument. CounterUpdateRequest: <nil> cannot be nil'),
  negativeCapacity: (capacity: Int64) =>
    new GrpcError(
      GrpcCode.UNKNOWN,
      `out of range. Capacity must be greater than or equal to 0. Found Capacity: ${capacity}`,
    ),
  countOutOfRange: (count: Int64, capacity: Int64) =>
    new GrpcError(
      GrpcCode.UNKNOWN,
      `out of range. Count must be within range [0,Capacity]. Found Count: ${count}, Capacity: ${capacity}`,
    ),
  listFull: (capacity: Int64, size: number) =>
    new GrpcError(
      GrpcCode.UNKNOWN,
      `out of range. No available capacity. Current Capacity: ${capacity}, List Size: ${size}`,
    ),
  valueExists: (value: string, list: string) =>
    new GrpcError(GrpcCode.UNKNOWN, `already exists. Value: ${value} already in List: ${list}`),
  valueMissing: (value: string, list: string) =>
    new GrpcError(GrpcCode.UNKNOWN, `not found: value ${value} not in list ${list}`),
  listNil: () => new GrpcError(GrpcCode.UNKNOWN, 'invalid argument. List: <nil> and UpdateMask <nil> cannot be nil'),
  badMask: (paths: string[]) =>
    new GrpcError(
      GrpcCode.UNKNOWN,
      `invalid argument. Field Mask Path(s): [${paths.join(' ')}] are invalid for List. Use valid field name(s): [name capacity values]`,
    ),
  listCapacityOutOfRange: (capacity: Int64) =>
    new GrpcError(GrpcCode.UNKNOWN, `out of range. Capacity must be within range [0,${LIST_MAX_CAPACITY}]. Found Capacity: ${capacity}`),
  listTooLong: (name: string, size: number) =>
    new GrpcError(GrpcCode.UNKNOWN, `out of range. List ${name} may hold at most ${LIST_MAX_CAPACITY} values. Found: ${size}`),
  playersAtCapacity: () => new GrpcError(GrpcCode.UNKNOWN, 'players are already at capacity'),
  invalidLabelKey: (key: string, errors: string[]) =>
    new GrpcError(GrpcCode.INVALID_ARGUMENT, `invalid label key "${key}": ${errors.join(', ')}`),
  invalidLabelValue: (value: string, key: string, errors: string[]) =>
    new GrpcError(GrpcCode.INVALID_ARGUMENT, `invalid label value "${value}" for key "${key}": ${errors.join(', ')}`),
  invalidAnnotationKey: (key: string, errors: string[]) =>
    new GrpcError(GrpcCode.INVALID_ARGUMENT, `invalid annotation key "${key}": ${errors.join(', ')}`),
  gameServerGone: (namespace: string, name: string) =>
    new GrpcError(GrpcCode.NOT_FOUND, `gameservers.agones.dev "${name}" not found in namespace "${namespace}"`),
  sidecarNotRunning: (name: string, state: string) =>
    new GrpcError(
      GrpcCode.UNAVAILABLE,
      `the sidecar of gameserver ${name} is not running yet: its pod has not started (state ${state})`,
    ),
};
