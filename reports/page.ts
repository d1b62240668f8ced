/**
 * The HTML building blocks shared by the run page and the comparison page: the page shell with
 * its stylesheet, stat cards, tables and chart figures. Text arguments are escaped here; arguments
 * named `html` or `svg` are markup the caller built (and escaped) already.
 */
import { escapeXml } from './format.js';

/** Colours of run A and run B on a comparison page: its charts and its table of runs. */
export const RUN_A_COLOR = '#2563eb';
export const RUN_B_COLOR = '#ea580c';

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: #1f2937; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 20px 32px; }
h1 { font-size: 24px; line-height: 1.25; margin: 0 0 6px; display: flex; flex-wrap: wrap; align-items: center; gap: 10px; overflow-wrap: anywhere; }
h2 { font-size: 16px; margin: 0 0 10px; }
h2.spaced { margin-top: 18px; }
section { margin-top: 22px; }
.meta { color: #4b5563; margin: 0; }
.meta span + span::before { content: "·"; margin: 0 8px; color: #9ca3af; }
.badge { font-size: 12px; font-weight: 700; letter-spacing: 0.05em; padding: 2px 10px; border-radius: 999px; }
.badge.pass { background: #dcfce7; color: #166534; }
.badge.fail { background: #fee2e2; color: #991b1b; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(168px, 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px 12px; }
.card .label { color: #6b7280; font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; }
.card .value { font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; white-space: nowrap; }
.card .note { color: #6b7280; font-size: 12px; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
figure { margin: 0; background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 12px 6px; min-width: 0; }
figure.wide { grid-column: 1 / -1; }
figcaption { font-weight: 600; margin: 0 0 2px 4px; }
figcaption .note { font-weight: 400; color: #6b7280; margin-left: 6px; }
svg.chart { display: block; width: 100%; height: auto; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; align-items: start; }
table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; overflow: hidden; }
th, td { padding: 5px 12px; border-bottom: 1px solid #f0f1f3; text-align: left; vertical-align: top; }
tbody tr:last-child td { border-bottom: none; }
thead th { background: #f9fafb; color: #374151; font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.good { color: #15803d; }
.bad { color: #b91c1c; font-weight: 600; }
.muted { color: #9ca3af; }
.warning { margin: 14px 0 0; padding: 10px 14px; background: #fef3c7; border: 1px solid #f59e0b; border-radius: 8px; color: #78350f; font-weight: 600; }
.run-a { color: ${RUN_A_COLOR}; font-weight: 700; }
.run-b { color: ${RUN_B_COLOR}; font-weight: 700; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f4f6; padding: 1px 5px; border-radius: 4px; overflow-wrap: anywhere; }
h1 code { font-size: 22px; background: none; padding: 0; }
pre { margin: 0; max-height: 320px; overflow: auto; }
pre code { display: block; background: none; padding: 0; font-size: 12px; }
table.answers { table-layout: fixed; }
.nowrap, .nowrap code { white-space: nowrap; }
footer { margin-top: 28px; color: #9ca3af; font-size: 12px; }
`;

/** A whole page: one self-contained file, styles inline, no scripts and nothing to fetch. */
export function htmlPage(title: string, bodyHtml: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeXml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    bodyHtml,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export function badge(ok: boolean): string {
  return `<span class="badge ${ok ? 'pass' : 'fail'}">${ok ? 'PASS' : 'FAIL'}</span>`;
}

export function code(text: string): string {
  return `<code>${escapeXml(text)}</code>`;
}

/** A line of facts separated by dots; items are markup. */
export function metaLine(htmlItems: readonly string[]): string {
  return `<p class="meta">${htmlItems.map((item) => `<span>${item}</span>`).join('')}</p>`;
}

export interface Card {
  label: string;
  value: string;
  note?: string;
  tone?: 'good' | 'bad';
}

export function cards(list: readonly Card[]): string {
  const items = list.map(
    (card) =>
      `<div class="card"><div class="label">${escapeXml(card.label)}</div>` +
      `<div class="value${card.tone ? ` ${card.tone}` : ''}">${escapeXml(card.value)}</div>` +
      (card.note ? `<div class="note">${escapeXml(card.note)}</div>` : '') +
      '</div>',
  );
  return `<div class="cards">\n${items.join('\n')}\n</div>`;
}

/** A table cell: text (escaped), optionally shown as code or as a link, with CSS classes (`num`, `good`, `bad` …). */
export type Cell = string | { text: string; className?: string; code?: boolean; href?: string };

function cell(tag: 'td' | 'th', value: Cell): string {
  const { text, className, code: asCode, href } = typeof value === 'string' ? { text: value, className: undefined, code: false, href: undefined } : value;
  const shown = asCode ? code(text) : escapeXml(text);
  const content = href === undefined ? shown : `<a href="${escapeXml(href)}">${shown}</a>`;
  return `<${tag}${className ? ` class="${escapeXml(className)}"` : ''}>${content}</${tag}>`;
}

export function htmlTable(headers: readonly Cell[], rows: ReadonlyArray<readonly Cell[]>): string {
  return [
    '<table>',
    `<thead><tr>${headers.map((h) => cell('th', h)).join('')}</tr></thead>`,
    '<tbody>',
    ...rows.map((row) => `<tr>${row.map((c) => cell('td', c)).join('')}</tr>`),
    '</tbody>',
    '</table>',
  ].join('\n');
}

/** A chart with its title; `wide` spans both columns of the chart grid. */
export function chartFigure(title: string, svg: string, options: { wide?: boolean; note?: string } = {}): string {
  const note = options.note ? `<span class="note">${escapeXml(options.note)}</span>` : '';
  return `<figure${options.wide ? ' class="wide"' : ''}>\n<figcaption>${escapeXml(title)}${note}</figcaption>\n${svg}\n</figure>`;
}

/** Drawing widths of charts in the grid at the page's full width (the SVG scales down with it). */
export const WIDE_CHART = 1120;
export const NARROW_CHART = 540;

export interface Chart {
  title: string;
  note?: string;
  wide: boolean;
  /** Draws the chart at the width its place in the grid gives it. */
  draw: (width: number) => string;
}

/** The chart grid: wide charts span the row, narrow ones pair up (a lone last one goes wide). */
export function chartGrid(charts: readonly Chart[]): string {
  const narrow = charts.filter((c) => !c.wide);
  const lastNarrow = narrow.length % 2 === 1 ? narrow[narrow.length - 1] : undefined;
  const figures = charts.map((c) => {
    const wide = c.wide || c === lastNarrow;
    return chartFigure(c.title, c.draw(wide ? WIDE_CHART : NARROW_CHART), { wide, note: c.note });
  });
  return `<div class="charts">\n${figures.join('\n')}\n</div>`;
}

export function section(title: string, html: string): string {
  return `<section>\n<h2>${escapeXml(title)}</h2>\n${html}\n</section>`;
}
