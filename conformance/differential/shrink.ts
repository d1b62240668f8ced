/**
 * Delta debugging for a sequence that made two clusters differ: operations are dropped, in halves,
 * then quarters, and so on down to one at a time, while the smaller sequence still differs the same
 * way, until no single operation can go (a sequence minimal in that sense, as Zeller's ddmin
 * finds). An operation that others refer to is dropped with them: a sequence whose SDK call names
 * an allocation that is gone means nothing.
 */

export interface ShrinkItem {
  id: string;
  /** Ids of items this one means nothing without. */
  needs: readonly string[];
}

export interface ShrinkResult<T> {
  items: T[];
  /** Candidates run (each a run on both clusters). */
  tries: number;
}

/**
 * The smallest sequence found that still differs. `differs` runs a candidate (in the order given)
 * and says whether it still shows the difference; it is never asked about the same candidate twice,
 * nor about the whole sequence, which is taken to differ.
 */
export async function shrink<T extends ShrinkItem>(items: readonly T[], differs: (candidate: T[]) => Promise<boolean>, log: (line: string) => void = () => {}): Promise<ShrinkResult<T>> {
  let current = [...items];
  const asked = new Set<string>([key(current)]);
  let tries = 0;
  const tryCandidate = async (candidate: T[]): Promise<boolean> => {
    const k = key(candidate);
    if (candidate.length === 0 || asked.has(k)) return false;
    asked.add(k);
    tries++;
    const result = await differs(candidate);
    log(`  ${result ? 'still differs' : 'same        '} with ${candidate.length} of ${items.length} operations: ${k}`);
    return result;
  };

  let chunks = 2;
  while (current.length >= 2) {
    const size = Math.ceil(current.length / chunks);
    let reduced = false;
    for (let start = 0; start < current.length; start += size) {
      const dropped = new Set(current.slice(start, start + size).map((item) => item.id));
      const candidate = without(current, dropped);
      if (await tryCandidate(candidate)) {
        current = candidate;
        chunks = Math.max(chunks - 1, 2);
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (chunks >= current.length) break;
    chunks = Math.min(chunks * 2, current.length);
  }
  return { items: current, tries };
}

/** `items` without those dropped and without everything that needs them, directly or through others. */
export function without<T extends ShrinkItem>(items: readonly T[], dropped: ReadonlySet<string>): T[] {
  const gone = new Set(dropped);
  const kept: T[] = [];
  for (const item of items) {
    if (gone.has(item.id) || item.needs.some((id) => gone.has(id))) gone.add(item.id);
    else kept.push(item);
  }
  return kept;
}

function key(items: readonly ShrinkItem[]): string {
  return items.map((item) => item.id).join(',');
}
