/**
 * Allocation over gRPC: an open-model arrival rate of `allocation.AllocationService/Allocate`
 * calls to the allocator's TLS port with the client certificate of its Secret (mutual TLS), as a
 * matchmaker built on Agones's gRPC client would, against a fleet that a Buffer FleetAutoscaler
 * keeps topped up while allocated game servers shut down after their session. It rises over the
 * first fifth of the run, then holds. Each VU keeps one connection, as a gRPC client does.
 *
 * Outcomes by gRPC status: OK is Allocated, ResourceExhausted UnAllocated, Aborted Contention,
 * anything else an error.
 *
 * Environment: TARGET, FLEET, RATE (calls/s), DURATION, VUS (most calls in flight), P99_MS,
 * ALLOCATOR_ADDRESS (host:port), CLIENT_CERT, CLIENT_KEY, CA_CERT (PEM files), PROTO_DIR (the
 * folder of allocation.proto).
 */
import grpc from 'k6/net/grpc';
import type { Options } from 'k6/options';
import { COMMON_OPTIONS, durationSeconds, envNumber, envString } from './lib/common.ts';
import { type Outcome, countOutcome, rampingArrivals } from './lib/allocation.ts';

export const ENDPOINT_ALLOCATOR_GRPC = 'allocator-grpc';

const FLEET = envString('FLEET', 'bench-grpc');
const RATE = envNumber('RATE', 100);
const DURATION = durationSeconds(envString('DURATION', '30s'));
const VUS = Math.max(1, envNumber('VUS', 100));
const P99_MS = envNumber('P99_MS', 50);
const ADDRESS = envString('ALLOCATOR_ADDRESS', '');
if (!ADDRESS) throw new Error('ALLOCATOR_ADDRESS must name the allocator (host:port)');

const TLS = { cert: open(envString('CLIENT_CERT', '')), key: open(envString('CLIENT_KEY', '')), cacerts: [open(envString('CA_CERT', ''))] };
const client = new grpc.Client();
client.load([envString('PROTO_DIR', '')], 'allocation.proto');

const REQUEST = { namespace: 'default', gameServerSelectors: [{ matchLabels: { 'agones.dev/fleet': FLEET } }] };

export const options: Options = {
  ...COMMON_OPTIONS,
  scenarios: {
    allocator_grpc: rampingArrivals('throughGrpc', RATE, DURATION, VUS),
  },
  thresholds: {
    [`grpc_req_duration{endpoint:${ENDPOINT_ALLOCATOR_GRPC}}`]: [`p(99)<${P99_MS}`],
    alloc_allocated: ['count>0'],
    alloc_error: [`count<=${Math.max(0, Math.floor(RATE * DURATION * 0.01))}`],
  },
};

let connected = false;

function outcomeOf(status: number): Outcome {
  if (status === grpc.StatusOK) return 'Allocated';
  if (status === grpc.StatusResourceExhausted) return 'UnAllocated';
  if (status === grpc.StatusAborted) return 'Contention';
  return 'error';
}

export function throughGrpc(): void {
  if (!connected) {
    client.connect(ADDRESS, { tls: TLS, timeout: '10s' });
    connected = true;
  }
  const response = client.invoke('allocation.AllocationService/Allocate', REQUEST, {
    tags: { endpoint: ENDPOINT_ALLOCATOR_GRPC },
    discardResponseMessage: true,
  });
  countOutcome(outcomeOf(response.status), ENDPOINT_ALLOCATOR_GRPC);
}

export default function (): void {
  throughGrpc();
}
