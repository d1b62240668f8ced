/**
 * The output of the `fleetsim conformance …` commands: a list of case outcomes (the same request
 * sent to a reference fleetsim and to the target, both answers normalized) turned into a terminal
 * summary, a JUnit XML file for CI, and a report folder (index.html, summary.md, run.json) beside
 * the load-test reports. One module for every conformance command, so they all read alike.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeXml, markdownCode, markdownText } from './format.js';
import { cards, code, htmlPage, htmlTable, metaLine, section } from './page.js';

export interface CaseOutcome {
  /** e.g. 'lifecycle', 'counters', 'bad-input' (cluster: the scenario name). */
  area: string;
  /** Unique within its area. */
  name: string;
  verdict: 'same' | 'different' | 'known';
  /** Id of the known difference when verdict === 'known' (several: joined by ', '). */
  known?: string;
  /** The reference's normalized answer. */
  reference: unknown;
  /** The target's normalized answer. */
  target: unknown;
  /** One line: the first difference (JSON path), when the answers differ. */
  detail?: string;
}

export interface ConformanceRun {
  /** The command, e.g. 'fleetsim conformance sidecar'. */
  command: string;
  /** What was checked, e.g. 'http://localhost:9358 (gRPC localhost:9357)'. */
  target: string;
  /** What it was compared with, e.g. 'fleetsim sidecar on 127.0.0.1:41233'. */
  reference: string;
  /** The behaviour the target is expected to have, when the command has profiles. */
  profile?: string;
  startedAt: string;
  seconds: number;
  /** Known differences by id: one sentence each, shown beside the cases that met them. */
  knownDifferences: Record<string, string>;
  outcomes: CaseOutcome[];
}

export const CONFORMANCE_REPORT_FILES = ['index.html', 'summary.md', 'run.json'] as const;

export interface Tally {
  total: number;
  same: number;
  different: number;
  known: number;
}

export function tally(outcomes: readonly CaseOutcome[]): Tally {
  const count = (verdict: CaseOutcome['verdict']) => outcomes.filter((o) => o.verdict === verdict).length;
  return { total: outcomes.length, same: count('same'), different: count('different'), known: count('known') };
}

/** 1 when any difference is unexpected, else 0 (2, bad flags, is the CLI's). */
export function conformanceExitCode(outcomes: readonly CaseOutcome[]): 0 | 1 {
  return outcomes.some((o) => o.verdict === 'different') ? 1 : 0;
}

export interface Difference {
  /** JSON path of the place, e.g. `$.body.status.state`. */
  path: string;
  /** One line: the path and both values, e.g. `$.body.status.state: "Ready" ≠ "Shutdown"`. */
  text: string;
}

/**
 * Every place two JSON values differ, in document order, each as a JSON path with both values.
 * Object keys are compared as sets, so key order never matters; array order does (arrays of
 * different lengths are one difference, at the array).
 */
export function differences(reference: unknown, target: unknown, path = '$', into: Difference[] = []): Difference[] {
  if (Object.is(reference, target)) return into;
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(reference) !== kind(target) || typeof reference !== 'object' || reference === null) {
    into.push({ path, text: `${path}: ${shown(reference)} ≠ ${shown(target)}` });
    return into;
  }
  if (Array.isArray(reference)) {
    const other = target as unknown[];
    if (reference.length !== other.length) {
      into.push({ path, text: `${path}: ${reference.length} items ≠ ${other.length} items` });
      return into;
    }
    reference.forEach((item, i) => differences(item, other[i], `${path}[${i}]`, into));
    return into;
  }
  const a = reference as Record<string, unknown>;
  const b = target as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    if (!Object.hasOwn(b, key)) into.push({ path: at, text: `${at}: ${shown(a[key])} ≠ (missing)` });
    else if (!Object.hasOwn(a, key)) into.push({ path: at, text: `${at}: (missing) ≠ ${shown(b[key])}` });
    else differences(a[key], b[key], at, into);
  }
  return into;
}

/** The first difference of `differences`, as its one line, or undefined when the values are equal. */
export function firstDifference(reference: unknown, target: unknown): string | undefined {
  return differences(reference, target)[0]?.text;
}

function shown(value: unknown, max = 80): string {
  const text = value === undefined ? '(missing)' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const pretty = (value: unknown) => (value === undefined ? '(nothing)' : JSON.stringify(value, null, 2));

/** The terminal summary: counts per area, every unexpected difference with both answers, the known ones named. */
export function conformanceSummary(run: ConformanceRun): string {
  const t = tally(run.outcomes);
  const areas = [...new Set(run.outcomes.map((o) => o.area))];
  const lines = [
    `${run.command}: ${run.target}${run.profile ? ` (profile ${run.profile})` : ''} against ${run.reference}`,
    ...areas.map((area) => {
      const a = tally(run.outcomes.filter((o) => o.area === area));
      return `  ${area.padEnd(16)} ${String(a.total).padStart(3)} cases: ${a.same} same, ${a.known} known, ${a.different} different`;
    }),
  ];
  const known = run.outcomes.filter((o) => o.verdict === 'known');
  if (known.length > 0) {
    lines.push('', 'Known differences:');
    for (const id of [...new Set(known.flatMap((o) => knownIds(o)))]) {
      const cases = known.filter((o) => knownIds(o).includes(id)).map((o) => `${o.area}/${o.name}`);
      lines.push(`  ${id}: ${run.knownDifferences[id] ?? ''}`, `    ${cases.join(', ')}`);
    }
  }
  const different = run.outcomes.filter((o) => o.verdict === 'different');
  if (different.length > 0) {
    lines.push('', 'Unexpected differences:');
    for (const o of different) {
      lines.push(`  ✗ ${o.area}/${o.name}: ${o.detail ?? 'the answers differ'}`);
      lines.push(indent(`reference: ${pretty(o.reference)}`, 6), indent(`target:    ${pretty(o.target)}`, 6));
    }
  }
  lines.push(
    '',
    `${t.total} cases: ${t.same} same, ${t.known} known differences, ${t.different} unexpected differences in ${run.seconds.toFixed(1)} s` +
      ` — ${t.different === 0 ? 'CONFORMS' : 'DIFFERS'}`,
  );
  return lines.join('\n');
}

const knownIds = (o: CaseOutcome) => (o.known ? o.known.split(', ') : []);
const indent = (text: string, by: number) => text.replace(/^/gm, ' '.repeat(by));

/**
 * JUnit XML: a testsuite per area, a testcase per case; an unexpected difference is a failure
 * carrying both answers, a known one is a passing case whose system-out names the difference.
 */
export function conformanceJunit(run: ConformanceRun): string {
  const t = tally(run.outcomes);
  const attr = (value: string) => escapeXml(value);
  const text = (value: string) => escapeXml(value.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/gu, '\uFFFD'));
  const suites = [...new Set(run.outcomes.map((o) => o.area))].map((area) => {
    const cases = run.outcomes.filter((o) => o.area === area);
    const failures = cases.filter((o) => o.verdict === 'different').length;
    const body = cases.map((o) => {
      const open = `    <testcase classname="${attr(`${run.command}.${area}`)}" name="${attr(o.name)}" time="0"`;
      if (o.verdict === 'same') return `${open}/>`;
      if (o.verdict === 'known') {
        const about = knownIds(o).map((id) => `known difference ${id}: ${run.knownDifferences[id] ?? ''}`);
        return `${open}>\n      <system-out>${text(about.join('\n'))}</system-out>\n    </testcase>`;
      }
      const message = o.detail ?? 'the answers differ';
      return (
        `${open}>\n      <failure message="${attr(message)}" type="difference">` +
        `${text(`${message}\nreference: ${pretty(o.reference)}\ntarget: ${pretty(o.target)}`)}</failure>\n    </testcase>`
      );
    });
    return [`  <testsuite name="${attr(area)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">`, ...body, '  </testsuite>'].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(run.command)}" tests="${t.total}" failures="${t.different}" errors="0" time="${run.seconds.toFixed(3)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

const VERDICT_CLASS: Record<CaseOutcome['verdict'], string> = { same: 'good', known: 'muted', different: 'bad' };

/** Writes index.html, summary.md and run.json into `dir` (which must exist). */
export function writeConformanceReport(dir: string, run: ConformanceRun): void {
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(join(dir, 'index.html'), conformancePage(run));
  writeFileSync(join(dir, 'summary.md'), conformanceMarkdown(run));
}

function conformancePage(run: ConformanceRun): string {
  const t = tally(run.outcomes);
  const answer = (value: unknown) => `<pre><code>${escapeXml(pretty(value))}</code></pre>`;
  const areas = [...new Set(run.outcomes.map((o) => o.area))];
  const rows = (o: CaseOutcome) =>
    `<tr><td>${escapeXml(o.name)}</td><td class="${VERDICT_CLASS[o.verdict]}">${o.verdict}${o.known ? ` (${code(o.known)})` : ''}` +
    `${o.detail ? `<br><small>${escapeXml(o.detail)}</small>` : ''}</td><td>${answer(o.reference)}</td><td>${o.verdict === 'same' ? '<span class="muted">same</span>' : answer(o.target)}</td></tr>`;
  const metIds = [...new Set(run.outcomes.flatMap(knownIds))];
  const body = [
    `<h1>${escapeXml(run.command)} <span class="badge ${t.different === 0 ? 'pass' : 'fail'}">${t.different === 0 ? 'CONFORMS' : 'DIFFERS'}</span></h1>`,
    metaLine([`target ${code(run.target)}`, `reference ${code(run.reference)}`, ...(run.profile ? [`profile ${code(run.profile)}`] : []), `started ${escapeXml(run.startedAt)}`]),
    cards([
      { label: 'cases', value: String(t.total) },
      { label: 'same', value: String(t.same), tone: 'good' },
      { label: 'known differences', value: String(t.known) },
      { label: 'unexpected differences', value: String(t.different), tone: t.different === 0 ? 'good' : 'bad' },
    ]),
    ...(metIds.length > 0 ? [section('Known differences met', htmlTable(['id', 'what differs'], metIds.map((id) => [{ text: id, code: true }, run.knownDifferences[id] ?? '']))) ] : []),
    ...areas.map((area) =>
      section(
        area,
        '<table><thead><tr><th>case</th><th>verdict</th><th>reference</th><th>target</th></tr></thead><tbody>\n' +
          run.outcomes.filter((o) => o.area === area).map(rows).join('\n') +
          '\n</tbody></table>',
      ),
    ),
    '<footer>Also in this folder: summary.md, run.json (every case with both normalized answers).</footer>',
  ].join('\n');
  return htmlPage(`${run.command}: ${run.target}`, body);
}

function conformanceMarkdown(run: ConformanceRun): string {
  const t = tally(run.outcomes);
  const areas = [...new Set(run.outcomes.map((o) => o.area))];
  const lines = [
    `# ${markdownText(run.command)}: ${t.different === 0 ? 'conforms' : 'differs'}`,
    '',
    `Target ${markdownCode(run.target)}${run.profile ? `, profile ${markdownCode(run.profile)}` : ''}, against ${markdownCode(run.reference)}; started ${run.startedAt}, ${run.seconds.toFixed(1)} s.`,
    '',
    '| area | cases | same | known | different |',
    '|---|---|---|---|---|',
    ...areas.map((area) => {
      const a = tally(run.outcomes.filter((o) => o.area === area));
      return `| ${markdownText(area)} | ${a.total} | ${a.same} | ${a.known} | ${a.different} |`;
    }),
    `| **all** | ${t.total} | ${t.same} | ${t.known} | ${t.different} |`,
    '',
  ];
  const notSame = run.outcomes.filter((o) => o.verdict !== 'same');
  if (notSame.length > 0) {
    lines.push('| case | verdict | first difference |', '|---|---|---|');
    for (const o of notSame) {
      const verdict = o.verdict === 'known' ? `known: ${markdownCode(o.known!, true)}` : '**different**';
      lines.push(`| ${markdownText(`${o.area}/${o.name}`)} | ${verdict} | ${o.detail ? markdownCode(o.detail, true) : ''} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
