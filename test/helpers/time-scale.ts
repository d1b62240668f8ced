/**
 * How patient the tests are. Every bound a test puts on waiting (vitest's test and hook timeouts,
 * waitFor, a process's start or exit, kubectl, a fetch, a browser) is written `seconds(n)`, which
 * multiplies it by FLEETSIM_TEST_TIME_SCALE (default 1; a slow or loaded machine sets 2 or 3).
 * Waits end as soon as their condition holds, so the bounds are generous and cost a passing test
 * nothing. Times that are part of the behaviour under test (a reservation of 2 s, a grace period,
 * a server's own timeout) are the server's, not the test's patience: they are never scaled.
 */

export const TIME_SCALE_ENV = 'FLEETSIM_TEST_TIME_SCALE';

/** The scale an environment asks for; a value that is not a number above 0 is an error naming the variable. */
export function timeScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[TIME_SCALE_ENV];
  if (raw === undefined || raw.trim() === '') return 1;
  const scale = Number(raw);
  if (!(Number.isFinite(scale) && scale > 0)) throw new Error(`${TIME_SCALE_ENV}: "${raw}" is not a number above 0 (1 is the default; 2 or 3 on a slow machine)`);
  return scale;
}

const SCALE = timeScale();

/** A bound on waiting, in milliseconds: `n` seconds times the scale. */
export function seconds(n: number): number {
  return Math.round(n * 1000 * SCALE);
}
