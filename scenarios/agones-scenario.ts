/**
 * Agones's own allocation load-test scenarios, run against fleetsim so the results compare with
 * Agones's published runs. A scenario file has one stage per line, `duration,clients,intervalMs`
 * (`10m,10,500`: for ten minutes, ten clients each ask for one allocation every 500 ms); blank
 * lines and `#` comments are skipped. Each line becomes a stage of one ramping-arrival-rate
 * scenario: a jump to `clients` allocations per `intervalMs`, held for the line's duration,
 * through the allocator service (`POST /gameserverallocation`, as Agones's load test uses the
 * allocator). Every request is tagged with its file line (`line`).
 *
 * TIME_SCALE multiplies every duration (0.01 turns 10m into 6s) so CI can run a whole file in
 * seconds; the rates stay as written.
 *
 * Environment: BASE_URL, TARGET, FLEET, SCENARIO_FILE (absolute path), TIME_SCALE (default 1),
 * VUS (most requests in flight), P99_MS (threshold on the allocation p99, default 500); against a
 * remote cluster: ALLOCATOR_URL, CLIENT_CERT, CLIENT_KEY and NAMESPACE (lib/common.ts).
 */
import exec from 'k6/execution';
import type { Options } from 'k6/options';
import { parseAgonesScenario, stageRate } from '../loadtest/durations.ts';
import { COMMON_OPTIONS, allocationStatusesAreExpected, envNumber, envString, msDuration } from './lib/common.ts';
import { ENDPOINT_ALLOCATOR, allocateThroughAllocator, allocatorBody } from './lib/allocation.ts';

const FILE = __ENV.SCENARIO_FILE;
if (!FILE) throw new Error('SCENARIO_FILE must name a scenario file (lines duration,clients,intervalMs)');
const STAGES = parseAgonesScenario(open(FILE));
const TIME_SCALE = envNumber('TIME_SCALE', 1);
const FLEET = envString('FLEET', 'bench-agones');
const VUS = Math.max(1, envNumber('VUS', 200));
const P99_MS = envNumber('P99_MS', 500);

// k6 wants whole arrival rates per time unit: count per 100 s when a line's rate is fractional.
const PER = STAGES.every((stage) => Number.isInteger(stageRate(stage))) ? 1 : 100;
const TIME_UNIT = PER === 1 ? '1s' : '100s';

/** Each line: a jump to its rate (a 0 s stage), then that rate held for the line's (scaled) duration. */
const stages: Array<{ duration: string; target: number }> = [];
const lineEnds: Array<{ line: number; endSeconds: number }> = [];
let elapsed = 0;
for (const stage of STAGES) {
  const target = Math.max(1, Math.round(stageRate(stage) * PER));
  const seconds = stage.seconds * TIME_SCALE;
  stages.push({ duration: '0s', target }, { duration: msDuration(seconds), target });
  elapsed += seconds;
  lineEnds.push({ line: stage.line, endSeconds: elapsed });
}
const peakClients = Math.max(...STAGES.map((stage) => stage.clients));

/** The file line whose stage is running now, for the `line` tag. */
function currentLine(): string {
  const seconds = (Date.now() - exec.scenario.startTime) / 1000;
  return String((lineEnds.find((l) => seconds < l.endSeconds) ?? lineEnds[lineEnds.length - 1]!).line);
}

export const options: Options = {
  ...COMMON_OPTIONS,
  scenarios: {
    agones: {
      executor: 'ramping-arrival-rate',
      exec: 'allocate',
      startRate: stages[0]!.target,
      timeUnit: TIME_UNIT,
      stages,
      // Agones's clients wait for each answer before the next interval: about `clients` in flight.
      preAllocatedVUs: Math.min(VUS, peakClients),
      maxVUs: Math.min(VUS, Math.max(peakClients * 4, peakClients + 10)),
      gracefulStop: '5s',
    },
  },
  thresholds: {
    [`http_req_duration{endpoint:${ENDPOINT_ALLOCATOR}}`]: [`p(99)<${P99_MS}`],
    http_req_failed: ['rate<0.01'],
    alloc_allocated: ['count>0'],
    alloc_error: ['count<1'],
  },
};

const BODY = allocatorBody(FLEET);

allocationStatusesAreExpected();

export function allocate(): void {
  allocateThroughAllocator(BODY, { line: currentLine() });
}

export default function (): void {
  allocate();
}
