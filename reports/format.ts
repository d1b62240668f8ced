/**
 * Text escaping and number formatting for the report pages, charts and Markdown. Every number a
 * reader sees goes through one of these, so a figure looks the same wherever it appears.
 */

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML or SVG: safe in element content and in quoted attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}

/** Text for Markdown prose or a table cell: punctuation that Markdown or HTML would act on is escaped. */
export function markdownText(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').replace(/[\\`*_[\]<>|#]/g, (c) => `\\${c}`);
}

/**
 * Text as a Markdown code span: shown literally (no emphasis, links or raw HTML), on one line.
 * `inTable` also escapes `|`, which GitHub tables split cells on even inside code spans.
 */
export function markdownCode(text: string, inTable = false): string {
  let body = text.replace(/\s*[\r\n]+\s*/g, ' ');
  if (inTable) body = body.replace(/\|/g, '\\|');
  const longestRun = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** Placeholder for a figure that is missing or not a number. */
export const NO_VALUE = '—';

/**
 * `n` with about `digits` significant digits, trailing zeros dropped and thousands separated:
 * 1234.5 -> "1,235", 12.345 -> "12.3", 0.04567 -> "0.0457". Integer digits are never rounded away.
 */
export function formatSignificant(n: number, digits = 3): string {
  if (Number.isNaN(n)) return NO_VALUE;
  if (!Number.isFinite(n)) return n > 0 ? '∞' : '-∞';
  if (n === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(n)));
  const decimals = Math.min(20, Math.max(0, digits - 1 - magnitude));
  const text = n.toLocaleString('en-US', { maximumFractionDigits: decimals, useGrouping: true });
  return text === '-0' ? '0' : text;
}

const COMPACT_UNITS: Array<[number, string]> = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/**
 * A number that must stay short (axis ticks, bar labels): 950 -> "950", 12345 -> "12.3k".
 * Numbers from `compactFrom` up get a unit suffix; smaller ones are written out.
 */
export function formatCompact(n: number, compactFrom = 10_000): string {
  const size = Math.abs(n);
  if (size >= compactFrom) {
    for (const [scale, suffix] of COMPACT_UNITS) {
      if (size >= scale) return `${formatSignificant(n / scale, 3)}${suffix}`;
    }
  }
  return formatSignificant(n, 3);
}

/** A count of things: exact below a million (12,345), compact above (1.23M). */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return formatSignificant(n);
  return Math.abs(n) < 1e6 ? Math.round(n).toLocaleString('en-US') : formatCompact(n);
}

/** Milliseconds: "0.42 ms", "12.3 ms", "1.25 s". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return formatSignificant(ms);
  return Math.abs(ms) >= 1000 ? `${formatSignificant(ms / 1000)} s` : `${formatSignificant(ms)} ms`;
}

/** Something per second: "1,234/s", "12.3k/s". */
export function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return formatSignificant(perSecond);
  return `${formatCompact(perSecond)}/s`;
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** The binary unit that suits a byte count: 512 MiB of bytes -> { unit: "MiB", scale: 2^20 }. */
export function byteUnit(bytes: number): { unit: string; scale: number } {
  let index = 0;
  while (index < BYTE_UNITS.length - 1 && Math.abs(bytes) >= 1024 ** (index + 1)) index++;
  return { unit: BYTE_UNITS[index]!, scale: 1024 ** index };
}

/** Bytes in binary units: "312 MiB", "1.2 GiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return formatSignificant(bytes);
  const { unit, scale } = byteUnit(bytes);
  return `${formatSignificant(bytes / scale)} ${unit}`;
}

/** A span of time given in seconds: "0.5s", "45s", "2m", "1m 30s", "1h 5m". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return formatSignificant(seconds);
  const sign = seconds < 0 ? '-' : '';
  const size = Math.abs(seconds);
  if (size < 60) return `${sign}${formatSignificant(size)}s`;
  const whole = Math.round(size);
  const [big, small, bigUnit, smallUnit] =
    whole < 3600 ? [Math.floor(whole / 60), whole % 60, 'm', 's'] : [Math.floor(whole / 3600), Math.round((whole % 3600) / 60), 'h', 'm'];
  return `${sign}${big}${bigUnit}${small > 0 ? ` ${small}${smallUnit}` : ''}`;
}

/** A fraction as a percentage: 0.987 -> "98.7%". */
export function formatPercent(fraction: number): string {
  return `${formatSignificant(fraction * 100, 3)}%`;
}

/** A ratio of two rates: 0.8512 -> "0.85×". */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return formatSignificant(ratio);
  return `${ratio.toFixed(2)}×`;
}

/** A timestamp as it reads in a report: "2025-03-01 14:05:09 UTC"; unparseable text is kept. */
export function formatTimestamp(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  return `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
