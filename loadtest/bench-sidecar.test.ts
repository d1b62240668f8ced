import { describe, expect, it } from 'vitest';
import { parseWrk } from './bench-sidecar.js';

const OUTPUT = `Running 3s test @ http://127.0.0.1:40123/gameserver
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.46ms    6.80ms  52.30ms   91.07%
    Req/Sec     7.19k     1.02k    8.47k    70.00%
  Latency Distribution
     50%  812.00us
     75%    3.47ms
     90%   10.01ms
     99%    1.02s
  21483 requests in 3.00s, 5.17MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 3
Requests/sec:   7158.42
Transfer/sec:      1.72MB
`;

describe('parseWrk', () => {
  it('reads the rate, the percentiles in their units, and every failure', () => {
    expect(parseWrk(OUTPUT)).toEqual({ requestsPerSecond: 7158.42, p50Ms: 0.812, p99Ms: 1020, requests: 21483, errors: 6 });
  });

  it('refuses output without figures', () => {
    expect(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).toThrow(/wrk printed no figures/);
  });
});
