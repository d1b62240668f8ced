/** Small text helpers of the page. */

/** A log or object time, shown in the viewer's time zone to the second. */
export function formatTime(time: string | number | null | undefined): string {
  if (time === null || time === undefined || time === '') return '—';
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toLocaleString(undefined, { hour12: false });
}

export function formatNumber(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—';
}
