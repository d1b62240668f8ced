/**
 * Reads the reports' inline SVG charts as a reader sees them: the text drawn (legends, axis titles,
 * tick and marker labels), the stroked lines with their colour and dash, the bars.
 */

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);
}

function attribute(element: string, name: string): string | undefined {
  const value = element.match(new RegExp(`\\s${name}="([^"]*)"`))?.[1];
  return value === undefined ? undefined : unescapeXml(value);
}

/** Each `<svg>…</svg>` of a page, keyed by its aria-label. */
export function chartsOf(html: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of html.matchAll(/<svg\b[^>]*>[\s\S]*?<\/svg>/g)) found.set(attribute(match[0], 'aria-label') ?? '', match[0]);
  return found;
}

/** Every piece of text the chart shows, in drawing order. */
export function textsOf(svg: string): string[] {
  return [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) => unescapeXml(m[1]!));
}

export interface Stroke {
  color: string;
  width: number;
  /** The dash pattern, "7,4"; empty for a solid stroke. */
  dash: string;
  /** How many separate pieces the path draws: a gap in the data starts a new one. */
  pieces: number;
}

/** The series' lines and markers, without the legend's swatches (which are moved into place). */
export function plottedStrokes(svg: string): Stroke[] {
  return [...svg.matchAll(/<path\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((path) => attribute(path, 'fill') === 'none' && attribute(path, 'stroke-width') !== undefined && attribute(path, 'transform') === undefined)
    .map((path) => ({
      color: attribute(path, 'stroke')!,
      width: Number(attribute(path, 'stroke-width')),
      dash: attribute(path, 'stroke-dasharray') ?? '',
      pieces: (attribute(path, 'd')!.match(/M/g) ?? []).length,
    }));
}

/** The 2-px lines of line series, in series order. */
export function linesOf(svg: string): Stroke[] {
  return plottedStrokes(svg).filter((stroke) => stroke.width === 2);
}

/** The bars: each one's series (by index) and colour. */
export function barsOf(svg: string): Array<{ series: number; color: string }> {
  return [...svg.matchAll(/<path\b[^>]*ecmeta_ssr_type="chart"[^>]*>/g)]
    .map((m) => m[0])
    .filter((path) => /Z"/.test(path))
    .map((path) => ({ series: Number(attribute(path, 'ecmeta_series_index')), color: attribute(path, 'fill')! }));
}
