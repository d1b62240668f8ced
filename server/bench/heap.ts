/**
 * A full garbage collection, when the process runs with --expose-gc (a no-op otherwise): a
 * benchmark takes one before reading the heap, or before timing, so garbage made earlier (a
 * fleet's set-up) is not collected inside what it measures.
 */
export function fullGc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export function gcExposed(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}
