/**
 * Allocation requests through both of fleetsim's front doors, and the count of their outcomes.
 *
 *  - the resource API, as kubectl or a Kubernetes client would:
 *    `POST /apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations` -> 201 with
 *    `status.state` Allocated, UnAllocated or Contention;
 *  - the allocator service's REST gateway, as a matchmaker would: `POST /gameserverallocation`
 *    -> 200 (Allocated), 429 (UnAllocated), 409 (Contention). With ALLOCATOR_URL this is a remote
 *    cluster's allocator service over mutual TLS (see common.ts).
 */
import http, { type RefinedResponse, type ResponseType } from 'k6/http';
import { Counter } from 'k6/metrics';
import { allocatorUrl, baseUrl, envString, jsonParams, msDuration } from './common.ts';

export type Outcome = 'Allocated' | 'UnAllocated' | 'Contention' | 'error';

/** One counter per outcome, so `--summary-export` holds each total as its own metric. */
const outcomeCounters: Record<Outcome, Counter> = {
  Allocated: new Counter('alloc_allocated'),
  UnAllocated: new Counter('alloc_unallocated'),
  Contention: new Counter('alloc_contention'),
  error: new Counter('alloc_error'),
};

export const ENDPOINT_RESOURCE_API = 'resource-api';
export const ENDPOINT_ALLOCATOR = 'allocator';

const STATE = /"state":"(\w+)"/;

/** The outcome a response stands for (exported for the harness's own checks of the wording). */
export function outcomeOf(endpoint: string, status: number, body: string): Outcome {
  if (endpoint === ENDPOINT_RESOURCE_API) {
    if (status !== 201) return 'error';
    // The request's selectors say `gameServerState`, so the first `"state":` is the status's.
    const state = STATE.exec(body)?.[1];
    if (state === 'Allocated' || state === 'UnAllocated' || state === 'Contention') return state;
    return 'error';
  }
  if (status === 200) return 'Allocated';
  if (status === 429) return 'UnAllocated';
  if (status === 409) return 'Contention';
  return 'error';
}

/** Counts one allocation's outcome under its endpoint. */
export function countOutcome(outcome: Outcome, endpoint: string): Outcome {
  outcomeCounters[outcome].add(1, { endpoint });
  return outcome;
}

function record(endpoint: string, response: RefinedResponse<ResponseType | undefined>): Outcome {
  const body = typeof response.body === 'string' ? response.body : '';
  return countOutcome(outcomeOf(endpoint, response.status, body), endpoint);
}

export function resourceApiBody(fleet: string): string {
  return JSON.stringify({
    apiVersion: 'allocation.agones.dev/v1',
    kind: 'GameServerAllocation',
    spec: { selectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }] },
  });
}

/** An AllocationRequest for a GameServer of `fleet`, in NAMESPACE (default `default`). */
export function allocatorBody(fleet: string): string {
  const namespace = envString('NAMESPACE', 'default');
  return JSON.stringify({ namespace, gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': fleet } }] });
}

export function allocateThroughResourceApi(body: string, tags: Record<string, string> = {}): Outcome {
  const response = http.post(
    `${baseUrl()}/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations`,
    body,
    jsonParams(ENDPOINT_RESOURCE_API, tags),
  );
  return record(ENDPOINT_RESOURCE_API, response);
}

let allocatorEndpoint: string | undefined;

export function allocateThroughAllocator(body: string, tags: Record<string, string> = {}): Outcome {
  allocatorEndpoint ??= `${allocatorUrl()}/gameserverallocation`;
  const response = http.post(allocatorEndpoint, body, jsonParams(ENDPOINT_ALLOCATOR, tags));
  return record(ENDPOINT_ALLOCATOR, response);
}

/**
 * A rate per second as k6's integer `rate` per `timeUnit`: fractional rates (12.5/s) are kept by
 * counting per 100 s; arrival-rate executors space iterations evenly either way.
 */
export function arrivalRate(perSecond: number): { rate: number; timeUnit: string } {
  if (Number.isInteger(perSecond)) return { rate: perSecond, timeUnit: '1s' };
  return { rate: Math.max(1, Math.round(perSecond * 100)), timeUnit: '100s' };
}

/**
 * A matchmaker's arrivals: `perSecond` reached over the first fifth of `seconds`, then held;
 * at most `vus` requests in flight.
 */
export function rampingArrivals(exec: string, perSecond: number, seconds: number, vus: number) {
  const rate = arrivalRate(perSecond);
  const ramp = seconds / 5;
  return {
    executor: 'ramping-arrival-rate' as const,
    exec,
    startRate: 0,
    timeUnit: rate.timeUnit,
    stages: [
      { duration: msDuration(ramp), target: rate.rate },
      { duration: msDuration(seconds - ramp), target: rate.rate },
    ],
    preAllocatedVUs: Math.min(vus, 20),
    maxVUs: vus,
    gracefulStop: '5s',
  };
}
