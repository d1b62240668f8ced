import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../loadtest/paths.js';
import { type Expectation, expectationUnder, listedTest } from './agones-e2e-tests.js';
import { SHOWN, type Verdict } from './agones-e2e-table.js';
import { GATE_SETS, type GateSet, type Outcome } from './agones-e2e-whole.js';

/**
 * Whole runs of Agones's e2e suite (`npm run conformance:agones-e2e -- --whole --record`), one per
 * gate set: the verdicts kept in conformance/agones-e2e-whole.json and the page made of them,
 * docs/agones-e2e-whole.md, a table per gate set with the reason beside every test that does not
 * pass and the passes that test nothing in fleetsim counted apart.
 */

export const WHOLE_RESULTS_FILE = join(REPO_ROOT, 'conformance', 'agones-e2e-whole.json');
export const WHOLE_TABLE_FILE = join(REPO_ROOT, 'docs', 'agones-e2e-whole.md');

export interface WholeRecord {
  /** The day of the run. */
  recorded: string;
  gates: string;
  parallel: number;
  /** How long the suite took, start to end. */
  minutes: number;
  results: Record<string, Verdict>;
}

export type WholeResults = Partial<Record<GateSet, WholeRecord>>;

/** Whether an outcome is the one expected (a timeout counts as the failure expected). */
export function asExpected(result: Verdict, expect: Expectation['expect']): boolean {
  return result === expect || (expect === 'fail' && result === 'timeout');
}

/** The totals of a run, the passes that test nothing in fleetsim said apart. */
export function totals(results: Record<string, Verdict>): string {
  const verdicts = Object.entries(results);
  const n = (v: Verdict) => verdicts.filter(([, r]) => r === v).length;
  const hollow = verdicts.filter(([test, r]) => r === 'pass' && listedTest(test)?.hollow).map(([test]) => test);
  const without = hollow.length > 0 ? ` (${hollow.length} of them without testing what they test in fleetsim: ${hollow.join(', ')})` : '';
  return `${verdicts.length} tests: ${n('pass')} passed${without}, ${n('fail')} failed, ${n('timeout')} timed out, ${n('skip')} skipped`;
}

function readWholeResults(): WholeResults {
  return existsSync(WHOLE_RESULTS_FILE) ? (JSON.parse(readFileSync(WHOLE_RESULTS_FILE, 'utf8')) as WholeResults) : {};
}

/** The package's tests (not the subpackages') that failed in the gate set's recorded run, bar `except`. */
export function recordedPackageFailures(set: GateSet, except: readonly string[]): string[] {
  return Object.entries(readWholeResults()[set]?.results ?? {})
    .filter(([test, verdict]) => !test.includes('/') && !except.includes(test) && (verdict === 'fail' || verdict === 'timeout'))
    .map(([test]) => test);
}

/** Keeps a whole run's verdicts as its gate set's and writes the page (the minutes are the package's, when it ran); returns the files written. */
export function recordWholeRun(set: GateSet, gates: string, parallel: number, minutes: number | undefined, outcomes: readonly Outcome[], now = new Date()): string[] {
  const results = readWholeResults();
  // A run of some tests (a subpackage's) replaces those, keeping the rest.
  const merged = { ...results[set]?.results, ...Object.fromEntries(outcomes.map((o) => [o.test, o.result])) };
  const verdicts = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
  results[set] = { recorded: now.toISOString().slice(0, 10), gates, parallel, minutes: minutes === undefined ? (results[set]?.minutes ?? 0) : Math.round(minutes * 10) / 10, results: verdicts };
  writeFileSync(WHOLE_RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(WHOLE_TABLE_FILE, wholeTable(results));
  return [WHOLE_RESULTS_FILE, WHOLE_TABLE_FILE];
}

/** The markdown page: per gate set, its totals and a row per test. */
export function wholeTable(results: WholeResults): string {
  const section = (set: GateSet): string[] => {
    const run = results[set];
    const title = `## Gate set \`${set}\``;
    if (!run) return [title, '', 'Not recorded yet.', ''];
    const rows = Object.entries(run.results).map(([test, verdict]) => {
      const e = expectationUnder(listedTest(test), run.gates);
      const note = verdict === 'pass' ? (e.hollow ? `passes without testing it: ${e.because ?? ''}` : '') : (e.because ?? (listedTest(test) ? '' : '(not in conformance/agones-e2e-tests.ts)'));
      const surprise = asExpected(verdict, e.expect) ? '' : ` (expected ${e.expect})`;
      return `| ${test} | ${SHOWN[verdict]}${surprise} | ${note.replace(/\|/g, '\\|')} |`;
    });
    return [
      title,
      '',
      `Suite flag \`--feature-gates=${run.gates}\`, given to fleetsim too; recorded ${run.recorded}, \`-test.parallel=${run.parallel}\`, ${run.minutes} minutes.`,
      '',
      `${totals(run.results)}.`,
      '',
      '| test | fleetsim | why, where it does not pass |',
      '| --- | --- | --- |',
      ...rows,
      '',
    ];
  };
  return [
    "# Agones's e2e suite as Agones's CI runs it",
    '',
    "The whole `test/e2e` package of Agones's source in one test process against one `fleetsim serve`, its tests",
    "side by side (`-test.parallel=16`, a 45-minute timeout), once per gate set of Agones's CI: `inverted` is the",
    "`featureWithGate` set of its cloudbuild.yaml (alpha gates on, beta gates off), `default` its defaults. What failed",
    "runs again in a new process, twice at most, unless more than 10 tests failed, as gotestsum's `--rerun-fails=2` does",
    'there. Written by `npm run conformance:agones-e2e -- --whole --gates both --record`; the reasons are',
    "conformance/agones-e2e-tests.ts's.",
    '',
    ...(Object.keys(GATE_SETS) as GateSet[]).flatMap(section),
  ].join('\n');
}
