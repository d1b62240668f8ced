import { seconds } from './time-scale.js';

/**
 * Polls until a condition holds, instead of sleeping for a guessed time. `probe` returns the
 * value waited for, or `undefined`/`false` (or throws) while the condition does not hold yet.
 * `timeoutMs` is the test's patience: give it as `seconds(n)` (time-scale.ts).
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const { timeoutMs = seconds(10), intervalMs = 10, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
