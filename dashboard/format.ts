/** Small text helpers of the page. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to put in HTML (object names come from users). */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A log or object time, shown in the viewer's time zone to the second. */
export function formatTime(time: string | number | null | undefined): string {
  if (time === null || time === undefined || time === '') return '—';
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toLocaleString(undefined, { hour12: false });
}

export function formatNumber(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—';
}
