import { describe, expect, it } from 'vitest';
import { goDurationSeconds, parseAllocationload, parseRunscenario } from './agones-load-data.js';

// Output as Agones's tools print it (runs against fleetsim, trimmed to two stages).
const RUNSCENARIO = `

2026-11-26 01:01:36.997521052 +0000 UTC m=+0.002364356 :Running Scenario 1 with 10 clients submitting requests every 500ms for 5s
===================

Finished Scenario 1
Count: 0\t\tError: Unknown
Count: 0\t\tError: NoAvailableGameServer
Count: 0\t\tError: ConnectionRefused


2026-11-26 01:01:42.008256165 +0000 UTC m=+5.013099464
Scenario Failure Count: 0, Allocation Count: 100, Failure rate: 0, allocation rate: 20


2026-11-26 01:01:42.008272666 +0000 UTC m=+5.013115965 :Running Scenario 2 with 40 clients submitting requests every 250ms for 1m30s
===================

Finished Scenario 2
Count: 12\t\tError: NoAvailableGameServer
Count: 0\t\tError: Unknown
Count: 3\t\tError: TooManyConcurrentRequests


2026-11-26 01:03:12.0 +0000 UTC m=+95.0
Scenario Failure Count: 15, Allocation Count: 14400, Failure rate: 0.0010416666666666667, allocation rate: 159.83333333333334

Final Error Totals
Count: 12\t\tError: NoAvailableGameServer
Count: 3\t\tError: TooManyConcurrentRequests
Count: 0\t\tError: StorageError


2026-11-26 01:03:12.1 +0000 UTC m=+95.1
Final Total Failure Count: 15, Total Allocation Count: 14500, Failure rate: 0.0010344827586206897, allocation rate: 152.5263157894737
`;

const ALLOCATIONLOAD = `started: 2026-11-26 01:02:26.438673428 +0000 UTC m=+0.001649087
(failed(client=36,allocation=36): rpc error: code = ResourceExhausted desc = there is no available GameServer to allocate
(failed(client=4,allocation=72): rpc error: code = ResourceExhausted desc = there is no available GameServer to allocate
(failed(client=7,allocation=1): rpc error: code = Unavailable desc = connection error
finished: 2026-11-26 01:02:28.461296567 +0000 UTC m=+2.024272210
`;

describe("Agones's load tools' output", () => {
  it('runscenario: each stage with its counts, rates and non-zero errors, then the totals', () => {
    const result = parseRunscenario(RUNSCENARIO);
    expect(result.stages).toEqual([
      { stage: 1, clients: 10, intervalMs: 500, seconds: 5, allocations: 100, failures: 0, failureRate: 0, allocationRate: 20, errors: {} },
      {
        stage: 2,
        clients: 40,
        intervalMs: 250,
        seconds: 90,
        allocations: 14400,
        failures: 15,
        failureRate: 0.0010416666666666667,
        allocationRate: 159.83333333333334,
        errors: { NoAvailableGameServer: 12, TooManyConcurrentRequests: 3 },
      },
    ]);
    expect(result.total).toEqual({
      allocations: 14500,
      failures: 15,
      failureRate: 0.0010344827586206897,
      allocationRate: 152.5263157894737,
      errors: { NoAvailableGameServer: 12, TooManyConcurrentRequests: 3 },
    });
  });

  it('runscenario cut short (no final totals) is an error, not a report of nothing', () => {
    expect(() => parseRunscenario(RUNSCENARIO.slice(0, RUNSCENARIO.indexOf('Final Error')))).toThrow(/no final totals/);
  });

  it('allocationload: failures by gRPC code, and the successful rate over its started..finished time', () => {
    const result = parseAllocationload(ALLOCATIONLOAD, 40, 100);
    expect(result.failures).toBe(3);
    expect(result.errors).toEqual({ ResourceExhausted: 2, Unavailable: 1 });
    expect(result.seconds).toBeCloseTo(2.022623, 5);
    expect(result.allocationRate).toBeCloseTo(3997 / 2.022623, 3);
  });

  it("reads Go's durations", () => {
    expect(goDurationSeconds('5m0s')).toBe(300);
    expect(goDurationSeconds('1.5s')).toBe(1.5);
    expect(goDurationSeconds('500ms')).toBe(0.5);
    expect(goDurationSeconds('1h2m3s')).toBe(3723);
  });
});
