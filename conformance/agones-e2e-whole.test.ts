import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGONES_E2E_TESTS, expectationUnder } from './agones-e2e-tests.js';
import { EventFold, GATE_SETS, type Outcome, type WholeRun, runWholeAsCi } from './agones-e2e-whole.js';
import { WHOLE_RESULTS_FILE, WHOLE_TABLE_FILE, type WholeResults, asExpected, totals, wholeTable } from './agones-e2e-whole-table.js';

const event = (Action: string, Test?: string, Output?: string, Elapsed?: number) => JSON.stringify({ Action, Package: 'e2e', ...(Test && { Test }), ...(Output && { Output }), ...(Elapsed !== undefined && { Elapsed }) });

describe("Agones's e2e suite run whole", () => {
  it('folds interleaved events into an outcome per top-level test, subtests within their test', () => {
    const fold = new EventFold();
    const ended = [
      event('run', 'TestA'),
      event('run', 'TestB'),
      event('output', 'TestA', '=== RUN   TestA\n'),
      event('run', 'TestB/sub'),
      event('output', 'TestB/sub', '    gameserver_test.go:10: \n'),
      event('output', 'TestB/sub', '        \tError:      \tNot equal: \n'),
      event('output', 'TestB/sub', '        \t            \texpected: 1\n'),
      event('fail', 'TestB/sub', undefined, 1),
      event('pass', 'TestA', undefined, 2.5),
      event('output', 'TestC', '    fleet_test.go:5: PlayerTracking is disabled\n'),
      event('output', 'TestC', '--- SKIP: TestC (0.00s)\n'),
      event('skip', 'TestC', undefined, 0),
      event('fail', 'TestB', undefined, 3),
      'not json: a line the binary printed before its first event',
    ].map((line) => fold.add(line));
    expect(ended.filter(Boolean).map((o) => `${o!.test} ${o!.result}`)).toEqual(['TestA pass', 'TestC skip', 'TestB fail']);
    const outcomes = fold.outcomes(['TestA', 'TestB', 'TestC'], 'the suite exited with 2');
    expect(outcomes.find((o) => o.test === 'TestA')).toEqual({ test: 'TestA', result: 'pass', seconds: 2.5 });
    expect(outcomes.find((o) => o.test === 'TestB')!.cause).toBe('Error:      \tNot equal: expected: 1');
    expect(outcomes.find((o) => o.test === 'TestC')!.cause).toBe('PlayerTracking is disabled');
  });

  it("says why a test failed through t.Fatal, where no assertion did", () => {
    const fold = new EventFold();
    fold.add(event('output', 'TestD', '=== RUN   TestD\n'));
    fold.add(event('output', 'TestD', '    helper_func.go:87: Could not copy default allocator client: already exists\n'));
    fold.add(event('output', 'TestD', '--- FAIL: TestD (0.01s)\n'));
    expect(fold.add(event('fail', 'TestD', undefined, 0.01))!.cause).toBe('helper_func.go:87: Could not copy default allocator client: already exists');
  });

  it('counts a test the run never ended, or never reached, as timed out, with the panic that ended it', () => {
    const fold = new EventFold();
    fold.add(event('run', 'TestSlow'));
    fold.add(event('output', undefined, 'panic: test timed out after 45m0s\n'));
    const outcomes = fold.outcomes(['TestSlow', 'TestLater'], 'the suite exited with 2');
    expect(outcomes).toEqual([
      { test: 'TestLater', result: 'timeout', seconds: 0, cause: 'did not start: panic: test timed out after 45m0s' },
      { test: 'TestSlow', result: 'timeout', seconds: 0, cause: 'did not end: panic: test timed out after 45m0s' },
    ]);
  });

  it("runs what failed again as gotestsum does in Agones's CI: a new process, twice at most, not at all past 10 failures", async () => {
    const run: WholeRun = { binary: 'e2e.test', cwd: '.', kubeconfig: 'k', gates: '', pattern: '.*', tests: ['TestA', 'TestB', 'TestC'] };
    const patterns: string[] = [];
    /** TestA passes on its second run, TestB never; each run of the suite is a call. */
    const runs = (failing: number) => async (r: WholeRun): Promise<Outcome[]> => {
      patterns.push(r.pattern);
      const outcome = (test: string, passes: boolean): Outcome => ({ test, result: passes ? 'pass' : 'fail', seconds: 1 });
      if (patterns.length > 1) return r.tests.map((test) => outcome(test, test === 'TestA'));
      return [...[...Array(failing).keys()].map((i) => outcome(`TestF${i}`, false)), ...r.tests.map((test) => outcome(test, test === 'TestC'))];
    };
    const outcomes = await runWholeAsCi(run, runs(0));
    expect(patterns).toEqual(['.*', '^(TestA|TestB)$', '^(TestB)$']);
    expect(outcomes.map((o) => [o.test, o.result, o.rerun])).toEqual([['TestA', 'pass', 1], ['TestB', 'fail', 2], ['TestC', 'pass', undefined]]);

    patterns.length = 0;
    const many = await runWholeAsCi(run, runs(9));
    expect(patterns).toEqual(['.*']);
    expect(many.filter((o) => o.result === 'fail')).toHaveLength(11);
  });

  it("counts and reruns, in a run of some tests, the package's other tests the record says failed, as a run of the whole package would", async () => {
    const patterns: string[] = [];
    /** TestA fails at first and passes on rerun; so does TestOld, recorded failed by a run that had too many failures to rerun. */
    const runOnce = async (r: WholeRun): Promise<Outcome[]> => {
      patterns.push(r.pattern);
      return r.tests.map((test) => ({ test, result: patterns.length > 1 ? 'pass' : 'fail', seconds: 1 }));
    };
    const run: WholeRun = { binary: 'e2e.test', cwd: '.', kubeconfig: 'k', gates: '', pattern: '^TestA$', tests: ['TestA'], recordedFailures: ['TestOld'] };
    const outcomes = await runWholeAsCi(run, runOnce);
    expect(patterns).toEqual(['^TestA$', '^(TestA|TestOld)$']);
    expect(outcomes.map((o) => [o.test, o.result, o.rerun])).toEqual([['TestA', 'pass', 1], ['TestOld', 'pass', 1]]);

    // Past 10 failures with the recorded ones, nothing runs again.
    patterns.length = 0;
    const crowded = await runWholeAsCi({ ...run, recordedFailures: [...Array(10).keys()].map((i) => `TestOld${i}`) }, runOnce);
    expect(patterns).toEqual(['^TestA$']);
    expect(crowded.map((o) => [o.test, o.result])).toEqual([['TestA', 'fail']]);
  });

  it('expects the skip of a test whose gates the set turns the other way, otherwise what the list says', () => {
    const test = { test: 'TestX', group: 'game-server' as const, needs: { SidecarContainers: false }, expect: 'fail' as const, because: 'spec rule' };
    expect(expectationUnder(test, GATE_SETS.default)).toEqual({ expect: 'skip', because: 'skipped by the suite: it needs SidecarContainers=false' });
    expect(expectationUnder(test, GATE_SETS.inverted)).toEqual({ expect: 'fail', because: 'spec rule' });
    expect(expectationUnder({ ...test, needs: { CountsAndLists: true } }, GATE_SETS.inverted).expect).toBe('skip');
    expect(expectationUnder(undefined, GATE_SETS.inverted)).toEqual({ expect: 'pass' });
    expect(asExpected('timeout', 'fail')).toBe(true);
    expect(asExpected('timeout', 'pass')).toBe(false);
  });

  it('says apart in the totals the passes that test nothing in fleetsim', () => {
    const hollow = AGONES_E2E_TESTS.find((t) => t.hollow)!.test;
    expect(totals({ [hollow]: 'pass', TestA: 'pass', TestB: 'fail', TestC: 'skip' })).toBe(`4 tests: 2 passed (1 of them without testing what they test in fleetsim: ${hollow}), 1 failed, 0 timed out, 1 skipped`);
  });

  it('writes a table per gate set with the reason beside what does not pass', () => {
    const results: WholeResults = { default: { recorded: '2026-11-28', gates: 'CountsAndLists=true', parallel: 16, minutes: 12, results: { TestAutoscalerBasicFunctions: 'fail', TestUnlisted: 'fail' } } };
    const page = wholeTable(results);
    expect(page).toContain('## Gate set `inverted`\n\nNot recorded yet.');
    expect(page).toMatch(/\| TestAutoscalerBasicFunctions \| \*\*fail\*\* \| relies on Agones accepting a FleetAutoscaler bound/);
    expect(page).toContain('| TestUnlisted | **fail** (expected pass) | (not in conformance/agones-e2e-tests.ts) |');
  });

  it('keeps docs/agones-e2e-whole.md as the recorded runs make it', () => {
    if (!existsSync(WHOLE_RESULTS_FILE)) return;
    const results = JSON.parse(readFileSync(WHOLE_RESULTS_FILE, 'utf8')) as WholeResults;
    expect(readFileSync(WHOLE_TABLE_FILE, 'utf8')).toBe(wholeTable(results));
  });
});
