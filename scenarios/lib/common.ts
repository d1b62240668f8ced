/**
 * Helpers shared by the k6 scenarios. The harness (`fleetsim bench`, loadtest/) passes every
 * setting as an environment variable (`k6 run -e NAME=value`), so each script can also be run by
 * hand against any fleetsim:
 *
 *   k6 run -e BASE_URL=http://127.0.0.1:8080 -e RATE=50 -e DURATION=10s scenarios/allocation-throughput.ts
 *
 * The allocation scripts can also allocate from a real cluster's allocator service over mutual
 * TLS instead (`fleetsim bench --target-allocator`): ALLOCATOR_URL, CLIENT_CERT and CLIENT_KEY
 * (files), and the server's CA through SSL_CERT_FILE in k6's environment (k6 has no option for a
 * CA of its own; Go reads that variable for its roots). Packed as a k6 archive for the k6 operator,
 * leave CLIENT_CERT out (the archive freezes these options, key included) and give k6 the
 * certificate in its configuration file (K6_CONFIG): loadtest/README.md.
 */
import http from 'k6/http';
import { SharedArray } from 'k6/data';
import type { Options } from 'k6/options';

/** `http://127.0.0.1:PORT`: fleetsim or the baseline server. Load tests target loopback only. */
export function baseUrl(): string {
  const url = (__ENV.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  if (!/^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(url)) {
    throw new Error(`BASE_URL must be a loopback address (127.0.0.0/8, localhost or [::1]), not "${url}"`);
  }
  return url;
}

/**
 * Where allocation requests go: a remote allocator service (ALLOCATOR_URL, `https://HOST:PORT`,
 * chosen by whoever runs the load against their own cluster) or the target's own REST gateway.
 */
export function allocatorUrl(): string {
  const remote = (__ENV.ALLOCATOR_URL ?? '').replace(/\/+$/, '');
  if (remote === '') return baseUrl();
  if (!/^https:\/\/[^/?#]+$/.test(remote)) throw new Error(`ALLOCATOR_URL must be https://HOST:PORT, not "${remote}"`);
  return remote;
}

/**
 * The client certificate k6 presents (CLIENT_CERT and CLIENT_KEY, PEM files) for the allocator's
 * mutual TLS; no domains, so k6 offers it to whichever server asks for one.
 */
function clientCertificate(): Pick<Options, 'tlsAuth'> {
  const cert = __ENV.CLIENT_CERT;
  const key = __ENV.CLIENT_KEY;
  if (!cert && !key) return {};
  if (!cert || !key) throw new Error('CLIENT_CERT and CLIENT_KEY go together');
  return { tlsAuth: [{ cert: open(cert), key: open(key) }] };
}

/** `ws://…` for the same server. */
export function wsUrl(): string {
  return baseUrl().replace(/^http/, 'ws');
}

export function envNumber(name: string, fallback: number): number {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${name}: "${raw}" is not a number`);
  return value;
}

export function envString(name: string, fallback: string): string {
  const raw = __ENV[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** Seconds in a k6-style duration: the harness's parser (a plain module k6 loads as it is). */
export { parseDuration as durationSeconds } from '../../loadtest/durations.ts';

/** A duration for k6's options, in whole milliseconds. */
export function msDuration(seconds: number): string {
  return `${Math.max(1, Math.round(seconds * 1000))}ms`;
}

/** Which server this run talks to; every sample is tagged with it. */
export function target(): string {
  return envString('TARGET', 'fleetsim');
}

/**
 * GameServer names the harness wrote (one per line) to the file named by NAMES_FILE. A
 * SharedArray keeps one copy for all VUs however many there are.
 */
export function gameServerNames(): string[] {
  const file = __ENV.NAMES_FILE;
  return new SharedArray<string>('gameserver-names', () => {
    if (!file) return [];
    return open(file)
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  });
}

/** JSON request parameters, tagged by endpoint (and anything else given). */
export function jsonParams(endpoint: string, extraTags: Record<string, string> = {}): { headers: Record<string, string>; tags: Record<string, string> } {
  return { headers: { 'Content-Type': 'application/json' }, tags: { endpoint, ...extraTags } };
}

/**
 * Allocation answers that are outcomes, not failures: 429 (UnAllocated from the allocator
 * service) and 409 (Contention) are what Agones sends when there is nothing to allocate.
 */
export function allocationStatusesAreExpected(): void {
  http.setResponseCallback(http.expectedStatuses({ min: 200, max: 299 }, 409, 429));
}

/** The Content-Length-independent size of a body, for checks. */
export function bodyText(body: unknown): string {
  return typeof body === 'string' ? body : '';
}

/**
 * Options every scenario shares: fewer system tags (k6's JSON output holds one line per sample,
 * and the URL tags alone would double it), the percentiles the harness reads from
 * `--summary-export`, and the target as a tag on every sample. (The harness also passes
 * `--no-usage-report`: load tests talk to loopback only.)
 */
export const COMMON_OPTIONS: Options = {
  systemTags: ['status', 'method', 'scenario', 'expected_response', 'error_code'],
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  tags: { target: target() },
  ...clientCertificate(),
};
