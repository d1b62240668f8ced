/**
 * What Agones's own allocation load tools (test/load/allocation in the Agones repository:
 * `allocationload` and `runscenario`) report, read from their output as they print it, for
 * `fleetsim bench agones-load`'s report.
 */

/** One stage of runscenario: a line of its scenario file and what the tool counted for it. */
export interface ScenarioStageResult {
  stage: number;
  clients: number;
  intervalMs: number;
  seconds: number;
  /** Allocation calls made, and those that failed (the tool's counts). */
  allocations: number;
  failures: number;
  /** The tool's own figures: failures / allocations, and successful allocations per second. */
  failureRate: number;
  allocationRate: number;
  /** Failures by the tool's error kinds (NoAvailableGameServer, TooManyConcurrentRequests…), the non-zero ones. */
  errors: Record<string, number>;
}

export interface RunscenarioResult {
  tool: 'runscenario';
  stages: ScenarioStageResult[];
  total: { allocations: number; failures: number; failureRate: number; allocationRate: number; errors: Record<string, number> };
}

export interface AllocationloadResult {
  tool: 'allocationload';
  clients: number;
  perClient: number;
  allocations: number;
  failures: number;
  /** Failures by gRPC code (ResourceExhausted, Unavailable…). */
  errors: Record<string, number>;
  /** From the tool's `started:` to its `finished:` line. */
  seconds: number;
  /** Successful allocations per second over that time. */
  allocationRate: number;
}

export type AgonesLoadResult = RunscenarioResult | AllocationloadResult;

export interface AgonesLoadRun {
  version: 1;
  startedAt: string;
  agonesSource: string;
  command: string[];
  fleetSize: number;
  session: number;
  allocatorModel: string;
  scenarioFile?: string;
  timeScale?: number;
  result: AgonesLoadResult;
  /** fleetsim's side: events committed while the tool ran, and its fleet at the end. */
  eventsCommitted: number;
  fleetAtEnd?: { replicas: number; ready: number; allocated: number };
  exitCode: number | null;
}

const STAGE_HEADER = /:Running Scenario (\d+) with (\d+) clients submitting requests every (\d+)ms for (\S+)/;
const ERROR_COUNT = /^Count: (\d+)\s+Error: (\w+)$/;
const STAGE_TOTALS = /^Scenario Failure Count: (\d+), Allocation Count: (\d+), Failure rate: (\S+), allocation rate: (\S+)$/;
const FINAL_TOTALS = /^Final Total Failure Count: (\d+), Total Allocation Count: (\d+), Failure rate: (\S+), allocation rate: (\S+)$/;

/** Go's float formatting as the tools print it ("NaN" when nothing was counted). */
function goFloat(text: string): number {
  const value = Number(text);
  return Number.isFinite(value) ? value : 0;
}

/** A Go duration as runscenario prints it (`5m0s`, `1.5s`, `500ms`) in seconds. */
export function goDurationSeconds(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, 'µs': 1e-6, us: 1e-6, ns: 1e-9 };
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|µs|us|ns)/g)) total += Number(m[1]) * units[m[2]!]!;
  return total;
}

/** runscenario's output: a header, error counts and totals per stage, then the final totals. */
export function parseRunscenario(output: string): RunscenarioResult {
  const stages: ScenarioStageResult[] = [];
  let errors: Record<string, number> = {};
  let total: RunscenarioResult['total'] | undefined;
  let current: ScenarioStageResult | undefined;
  for (const line of output.split('\n').map((l) => l.trim())) {
    const header = STAGE_HEADER.exec(line);
    if (header) {
      current = {
        stage: Number(header[1]),
        clients: Number(header[2]),
        intervalMs: Number(header[3]),
        seconds: goDurationSeconds(header[4]!),
        allocations: 0,
        failures: 0,
        failureRate: 0,
        allocationRate: 0,
        errors: {},
      };
      errors = {};
      continue;
    }
    const count = ERROR_COUNT.exec(line);
    if (count) {
      if (Number(count[1]) > 0) errors[count[2]!] = Number(count[1]);
      continue;
    }
    const stageTotals = STAGE_TOTALS.exec(line);
    if (stageTotals && current) {
      stages.push({
        ...current,
        failures: Number(stageTotals[1]),
        allocations: Number(stageTotals[2]),
        failureRate: goFloat(stageTotals[3]!),
        allocationRate: goFloat(stageTotals[4]!),
        errors,
      });
      current = undefined;
      errors = {};
      continue;
    }
    const finalTotals = FINAL_TOTALS.exec(line);
    if (finalTotals) {
      total = {
        failures: Number(finalTotals[1]),
        allocations: Number(finalTotals[2]),
        failureRate: goFloat(finalTotals[3]!),
        allocationRate: goFloat(finalTotals[4]!),
        errors,
      };
    }
  }
  if (!total) throw new Error('runscenario printed no final totals (did it finish?)');
  return { tool: 'runscenario', stages, total };
}

const GO_TIME = /^(started|finished): (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?) ([+-]\d{4})/;
const FAILED = /^\(failed\(client=\d+,allocation=\d+\): rpc error: code = (\w+) desc = /;

function goTimeMs(date: string, time: string, zone: string): number {
  const [whole, fraction = ''] = time.split('.');
  const ms = Date.parse(`${date}T${whole}${zone.slice(0, 3)}:${zone.slice(3)}`);
  return ms + Number(`0.${fraction || '0'}`) * 1000;
}

/** allocationload's output: `started:`, a line per failed call, `finished:`. */
export function parseAllocationload(output: string, clients: number, perClient: number): AllocationloadResult {
  let started: number | undefined;
  let finished: number | undefined;
  const errors: Record<string, number> = {};
  let failures = 0;
  for (const line of output.split('\n').map((l) => l.trim())) {
    const time = GO_TIME.exec(line);
    if (time) {
      const at = goTimeMs(time[2]!, time[3]!, time[4]!);
      if (time[1] === 'started') started = at;
      else finished = at;
      continue;
    }
    if (line.startsWith('(failed(')) {
      failures++;
      const code = FAILED.exec(line)?.[1] ?? 'other';
      errors[code] = (errors[code] ?? 0) + 1;
    }
  }
  if (started === undefined || finished === undefined) throw new Error('allocationload printed no started/finished lines (did it finish?)');
  const seconds = Math.max(0.001, (finished - started) / 1000);
  const allocations = clients * perClient;
  return { tool: 'allocationload', clients, perClient, allocations, failures, errors, seconds, allocationRate: (allocations - failures) / seconds };
}
