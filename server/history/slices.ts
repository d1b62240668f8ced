/**
 * Long work (an explanation, the encoding of a long answer) done a few milliseconds at a time, so
 * the server answers other requests meanwhile. Work calls `await nextSlice()` between two steps:
 * it goes on at once while the current slice has time left; otherwise it waits for a slice of its
 * own. All such work shares one slice per turn of the event loop, first come first served: ten
 * explanations at once still hold the loop for one slice at a time, not ten.
 */

/** How long one slice runs. */
export const SLICE_MS = 4;

const waiting: Array<() => void> = [];
let sliceStart = performance.now();
let scheduled = false;

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    const resume = waiting.shift();
    if (resume === undefined) return;
    sliceStart = performance.now();
    resume();
    if (waiting.length > 0) schedule();
  });
}

export function nextSlice(): Promise<void> | undefined {
  if (performance.now() - sliceStart < SLICE_MS) return undefined;
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}
