import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGONES_E2E_TESTS } from './agones-e2e-tests.js';
import { E2E_RESULTS_FILE, E2E_TABLE_FILE, type E2eResults, e2eTable, reasonFor } from './agones-e2e-table.js';

describe("the table of Agones's e2e suite on both sides", () => {
  const test = { test: 'TestX', group: 'pods' as const, expect: 'fail' as const, because: 'fleetsim runs no images', agones: { expect: 'fail' as const, because: 'the oracle has no such image' } };

  it('gives the reason of the side that does not pass, and none where both sides agree', () => {
    expect(reasonFor(test, 'fail', 'pass')).toBe('fleetsim runs no images');
    expect(reasonFor(test, 'pass', 'fail')).toBe('the oracle has no such image');
    expect(reasonFor(test, 'timeout', 'pass')).toBe('fleetsim runs no images');
    expect(reasonFor(test, 'pass', 'pass')).toBe('');
    expect(reasonFor(test, 'fail', 'timeout')).toBe('');
    expect(reasonFor({ test: 'TestY', group: 'pods' }, 'pass', 'fail')).toMatch(/not yet explained/);
  });

  it('writes a row per test with both verdicts, and counts each side', () => {
    const results: E2eResults = {
      fleetsim: { recorded: '2026-11-28', gates: 'CountsAndLists=true', results: { TestA: 'pass', TestB: 'fail' } },
      agones: { recorded: '2026-11-28', gates: 'CountsAndLists=true', results: { TestA: 'pass', TestB: 'pass', TestC: 'skip' } },
    };
    const page = e2eTable(results);
    expect(page).toContain('- fleetsim (2026-11-28, suite flag --feature-gates=CountsAndLists=true): 2 tests, 1 passed, 1 failed, 0 timed out, 0 skipped.');
    expect(page).toContain('| TestA | unlisted | pass | pass |  |');
    expect(page).toContain('| TestB | unlisted | **fail** | pass | (not yet explained');
    expect(page).toContain('| TestC | unlisted | — | skip |  |');
    expect(page).toContain('- 2 of 3 tests have different verdicts');
  });

  it('keeps docs/agones-e2e.md as the recorded results make it, with every difference explained', () => {
    if (!existsSync(E2E_RESULTS_FILE)) return;
    const results = JSON.parse(readFileSync(E2E_RESULTS_FILE, 'utf8')) as E2eResults;
    expect(readFileSync(E2E_TABLE_FILE, 'utf8')).toBe(e2eTable(results));
    const listed = new Map(AGONES_E2E_TESTS.map((t) => [t.test, t]));
    const unexplained = Object.keys(results.fleetsim?.results ?? {}).filter((name) => reasonFor(listed.get(name), results.fleetsim?.results[name], results.agones?.results[name]).includes('not yet explained'));
    expect(unexplained).toEqual([]);
  });
});
