import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../loadtest/paths.js';
import { AGONES_E2E_TESTS, type Side, type SuiteTest } from './agones-e2e-tests.js';

/**
 * Agones's e2e suite against fleetsim and against real Agones (the oracle), side by side: the last
 * recorded verdict of each test on each side (conformance/agones-e2e-results.json, written by
 * `npm run conformance:agones-e2e -- --record`) and the table made of them, docs/agones-e2e.md,
 * with the reason for every test where the two differ (from conformance/agones-e2e-tests.ts).
 */

export const E2E_RESULTS_FILE = join(REPO_ROOT, 'conformance', 'agones-e2e-results.json');
export const E2E_TABLE_FILE = join(REPO_ROOT, 'docs', 'agones-e2e.md');

export type Verdict = 'pass' | 'fail' | 'skip' | 'timeout';

export interface SideResults {
  /** The day of the run. */
  recorded: string;
  gates: string;
  results: Record<string, Verdict>;
}

export type E2eResults = Partial<Record<Side, SideResults>>;

/** Keeps a run's verdicts as its side's (a run of some tests replaces those, keeping the rest) and writes the table; returns the files written. */
export function recordE2eRun(side: Side, gates: string, outcomes: readonly { test: string; result: Verdict }[], now = new Date()): string[] {
  const results: E2eResults = existsSync(E2E_RESULTS_FILE) ? (JSON.parse(readFileSync(E2E_RESULTS_FILE, 'utf8')) as E2eResults) : {};
  const kept = results[side]?.results ?? {};
  const merged = { ...kept, ...Object.fromEntries(outcomes.map((o) => [o.test, o.result])) };
  results[side] = { recorded: now.toISOString().slice(0, 10), gates, results: Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b))) };
  writeFileSync(E2E_RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(E2E_TABLE_FILE, e2eTable(results));
  return [E2E_RESULTS_FILE, E2E_TABLE_FILE];
}

export const SHOWN: Record<Verdict, string> = { pass: 'pass', fail: '**fail**', skip: 'skip', timeout: '**timeout**' };

/** Why a test's verdicts differ between the sides, from what conformance/agones-e2e-tests.ts says of each. */
export function reasonFor(test: SuiteTest | undefined, fleetsim: Verdict | undefined, agones: Verdict | undefined): string {
  if (fleetsim === undefined || agones === undefined || fleetsim === agones || (fleetsim !== 'pass' && agones !== 'pass' && fleetsim !== 'skip' && agones !== 'skip')) return '';
  const because = fleetsim !== 'pass' && fleetsim !== 'skip' ? test?.because : agones !== 'pass' && agones !== 'skip' ? test?.agones?.because : (test?.because ?? test?.agones?.because);
  return because ?? '(not yet explained: conformance/agones-e2e-tests.ts should say why)';
}

/** The markdown page: counts per side, then a row per test. */
export function e2eTable(results: E2eResults): string {
  const tests = [...new Set([...Object.keys(results.fleetsim?.results ?? {}), ...Object.keys(results.agones?.results ?? {})])].sort();
  const listed = new Map(AGONES_E2E_TESTS.map((t) => [t.test, t]));
  const count = (side: Side, verdict: Verdict) => Object.values(results[side]?.results ?? {}).filter((v) => v === verdict).length;
  const summary = (side: Side, label: string) => {
    const r = results[side];
    if (!r) return `- ${label}: not recorded yet.`;
    const total = Object.keys(r.results).length;
    return `- ${label} (${r.recorded}, suite flag --feature-gates=${r.gates || '(none)'}): ${total} tests, ${count(side, 'pass')} passed, ${count(side, 'fail')} failed, ${count(side, 'timeout')} timed out, ${count(side, 'skip')} skipped.`;
  };
  const rows = tests.map((test) => {
    const f = results.fleetsim?.results[test];
    const a = results.agones?.results[test];
    const group = listed.get(test)?.group ?? 'unlisted';
    return `| ${test} | ${group} | ${f ? SHOWN[f] : '—'} | ${a ? SHOWN[a] : '—'} | ${reasonFor(listed.get(test), f, a).replace(/\|/g, '\\|')} |`;
  });
  const differing = tests.filter((test) => results.fleetsim?.results[test] !== results.agones?.results[test]).length;
  return [
    "# Agones's e2e suite: fleetsim and real Agones side by side",
    '',
    "Agones's own end-to-end suite (`test/e2e` of its source, built with `-mod=vendor`) run test by test against",
    'fleetsim (`npm run conformance:agones-e2e`, a fresh `fleetsim serve` per test) and against real Agones, the',
    'oracle of [oracle.md](oracle.md) (`npm run oracle -- exec node dist/conformance/agones-e2e.js --kubeconfig=…`,',
    'one test after another). Each run with `--record` keeps its verdicts in `conformance/agones-e2e-results.json`',
    'and writes this page; why a test does not pass on a side is said in `conformance/agones-e2e-tests.ts`.',
    '',
    summary('fleetsim', 'fleetsim'),
    summary('agones', 'real Agones (the oracle)'),
    `- ${differing} of ${tests.length} tests have different verdicts; the last column says why.`,
    '',
    '| test | needs | fleetsim | real Agones | why they differ |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
