/**
 * Allocation throughput: an open-model arrival rate of GameServerAllocations through both of
 * fleetsim's front doors at once, against a fleet that a Buffer FleetAutoscaler keeps topped up
 * while allocated game servers shut down after their session (the harness's ProcessProfile), so
 * the fleet churns the whole time.
 *
 *  - `resource_api`: constant-arrival-rate through the resource API (kubectl's way in);
 *  - `allocator`: ramping-arrival-rate through `POST /gameserverallocation` (a matchmaker's),
 *    rising over the first fifth of the run and then held.
 *
 * Environment: BASE_URL, TARGET, FLEET (fleet name), RATE (allocations/s, both endpoints
 * together), RESOURCE_API_SHARE (0..1 of RATE through the resource API, default 0.5), DURATION,
 * VUS (most requests in flight per endpoint), P99_MS (threshold on each endpoint's p99);
 * against a remote cluster (RESOURCE_API_SHARE=0): ALLOCATOR_URL, CLIENT_CERT, CLIENT_KEY and
 * NAMESPACE (lib/common.ts).
 */
import type { Options } from 'k6/options';
import { COMMON_OPTIONS, allocationStatusesAreExpected, durationSeconds, envNumber, envString, msDuration } from './lib/common.ts';
import {
  ENDPOINT_ALLOCATOR,
  ENDPOINT_RESOURCE_API,
  allocateThroughAllocator,
  allocateThroughResourceApi,
  allocatorBody,
  arrivalRate,
  rampingArrivals,
  resourceApiBody,
} from './lib/allocation.ts';

const FLEET = envString('FLEET', 'bench-allocation');
const RATE = envNumber('RATE', 100);
const SHARE = Math.min(1, Math.max(0, envNumber('RESOURCE_API_SHARE', 0.5)));
const DURATION = durationSeconds(envString('DURATION', '30s'));
const VUS = Math.max(2, envNumber('VUS', 100));
const P99_MS = envNumber('P99_MS', 50);

const resourceRate = arrivalRate(RATE * SHARE);
const perEndpointVus = Math.max(1, Math.ceil(VUS / 2));

const scenarios: NonNullable<Options['scenarios']> = {};
if (RATE * SHARE > 0) {
  scenarios.resource_api = {
    executor: 'constant-arrival-rate',
    exec: 'throughResourceApi',
    rate: resourceRate.rate,
    timeUnit: resourceRate.timeUnit,
    duration: msDuration(DURATION),
    preAllocatedVUs: Math.min(perEndpointVus, 20),
    maxVUs: perEndpointVus,
    gracefulStop: '5s',
  };
}
if (RATE * (1 - SHARE) > 0) {
  scenarios.allocator = rampingArrivals('throughAllocator', RATE * (1 - SHARE), DURATION, perEndpointVus);
}

export const options: Options = {
  ...COMMON_OPTIONS,
  scenarios,
  thresholds: {
    [`http_req_duration{endpoint:${ENDPOINT_RESOURCE_API}}`]: [`p(99)<${P99_MS}`],
    [`http_req_duration{endpoint:${ENDPOINT_ALLOCATOR}}`]: [`p(99)<${P99_MS}`],
    // 409 and 429 are outcomes (Contention, UnAllocated); anything else unexpected is a failure.
    http_req_failed: ['rate<0.01'],
    alloc_allocated: ['count>0'],
    alloc_error: [`count<=${Math.max(0, Math.floor(RATE * DURATION * 0.01))}`],
  },
};

const RESOURCE_API_BODY = resourceApiBody(FLEET);
const ALLOCATOR_BODY = allocatorBody(FLEET);

allocationStatusesAreExpected();

export function throughResourceApi(): void {
  allocateThroughResourceApi(RESOURCE_API_BODY);
}

export function throughAllocator(): void {
  allocateThroughAllocator(ALLOCATOR_BODY);
}

export default function (): void {
  throughAllocator();
}
