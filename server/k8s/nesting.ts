/**
 * How deep objects and arrays may nest in what the API takes. Real manifests stay under 20 levels
 * (a Fleet's pod template with affinity rules is the deepest); thousands of levels overflow the
 * stack of every recursive walk (event encoding, structured clone), so a deeper document is
 * refused before anything is done with it, as the Kubernetes API server refuses very deep objects.
 */
export const MAX_NESTING_DEPTH = 100;

/** Path segments shown when naming where a document nests too deep. */
const SHOWN_SEGMENTS = 8;

/** The path to the first value nested deeper than the limit; the recursion stops at the limit. */
function deepestPath(value: unknown, depth: number, segments: string[]): string[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_NESTING_DEPTH) return segments.slice();
  const visit = (segment: string, item: unknown): string[] | undefined => {
    if (typeof item !== 'object' || item === null) return undefined;
    segments.push(segment);
    const found = deepestPath(item, depth + 1, segments);
    segments.pop();
    return found;
  };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = visit(`[${i}]`, value[i]);
      if (found) return found;
    }
    return undefined;
  }
  for (const key in value) {
    const found = visit(segments.length ? `.${key}` : key, (value as Record<string, unknown>)[key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Where `document` nests deeper than MAX_NESTING_DEPTH, as a message (`more than 100 levels deep
 * (at spec.template.a.a…)`); undefined when it does not.
 */
export function tooDeeplyNested(document: unknown): string | undefined {
  const segments = deepestPath(document, 1, []);
  if (!segments) return undefined;
  const shown = segments.slice(0, SHOWN_SEGMENTS).join('') + (segments.length > SHOWN_SEGMENTS ? '…' : '');
  return `nests objects and arrays more than ${MAX_NESTING_DEPTH} levels deep${shown === '' ? '' : ` (at ${shown})`}`;
}
