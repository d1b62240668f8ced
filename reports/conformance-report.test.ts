import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CaseOutcome,
  type ConformanceRun,
  conformanceExitCode,
  conformanceJunit,
  conformanceSummary,
  differences,
  firstDifference,
  tally,
  writeConformanceReport,
} from './conformance-report.js';

const outcomes: CaseOutcome[] = [
  { area: 'lifecycle', name: 'ready', verdict: 'same', reference: { status: 200, body: {} }, target: { status: 200, body: {} } },
  {
    area: 'lifecycle',
    name: 'get after <ready> & "quotes"',
    verdict: 'different',
    reference: { status: 200, body: { state: 'Ready' } },
    target: { status: 200, body: { state: 'Shutdown\u0001' } },
    detail: '$.body.state: "Ready" ≠ "Shutdown"',
  },
  { area: 'counters', name: 'get', verdict: 'known', known: 'counters-path', reference: { status: 200 }, target: { status: 404 } },
];
const run: ConformanceRun = {
  command: 'fleetsim conformance sidecar',
  target: 'http://localhost:9358',
  reference: 'fleetsim sidecar',
  profile: 'agones-local',
  startedAt: '2026-01-01T00:00:00.000Z',
  seconds: 1.5,
  knownDifferences: { 'counters-path': 'Agones serves counters at /v1beta1 only' },
  outcomes,
};

describe('firstDifference', () => {
  it('is undefined for equal values, whatever the key order', () => {
    expect(firstDifference({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBeUndefined();
  });
  it('names the path and both values of the first difference', () => {
    expect(firstDifference({ body: { s: 'Ready' } }, { body: { s: 'Shutdown' } })).toBe('$.body.s: "Ready" ≠ "Shutdown"');
    expect(firstDifference({ h: { 'content-type': 'a' } }, { h: {} })).toBe('$.h["content-type"]: "a" ≠ (missing)');
    expect(firstDifference([1, 2], [1, 2, 3])).toBe('$: 2 items ≠ 3 items');
    expect(firstDifference({ a: '1' }, { a: 1 })).toBe('$.a: "1" ≠ 1');
    expect(firstDifference({ a: null }, { a: {} })).toBe('$.a: null ≠ {}');
  });
  it('lists every difference with its path', () => {
    expect(differences({ a: 1, b: { c: [1, 2], d: 'x' }, e: 1 }, { a: 2, b: { c: [1, 3], d: 'x' } })).toEqual([
      { path: '$.a', text: '$.a: 1 ≠ 2' },
      { path: '$.b.c[1]', text: '$.b.c[1]: 2 ≠ 3' },
      { path: '$.e', text: '$.e: 1 ≠ (missing)' },
    ]);
  });
});

describe('conformance output', () => {
  it('counts verdicts and exits 1 only on an unexpected difference', () => {
    expect(tally(outcomes)).toEqual({ total: 3, same: 1, different: 1, known: 1 });
    expect(conformanceExitCode(outcomes)).toBe(1);
    expect(conformanceExitCode(outcomes.filter((o) => o.verdict !== 'different'))).toBe(0);
  });

  it('prints each unexpected difference with both answers and names the known ones', () => {
    const text = conformanceSummary(run);
    expect(text).toContain('lifecycle          2 cases: 1 same, 0 known, 1 different');
    expect(text).toContain('counters-path: Agones serves counters at /v1beta1 only');
    expect(text).toContain('✗ lifecycle/get after <ready> & "quotes": $.body.state');
    expect(text).toMatch(/reference: \{\n\s+"status": 200/);
    expect(text).toContain('3 cases: 1 same, 1 known differences, 1 unexpected differences in 1.5 s — DIFFERS');
  });

  const dir = mkdtempSync(join(tmpdir(), 'conformance-report-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes index.html, summary.md and run.json', () => {
    writeConformanceReport(dir, run);
    expect(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'))).toEqual(run);
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(html).toContain('DIFFERS');
    expect(html).toContain('get after &lt;ready&gt; &amp; &quot;quotes&quot;');
    expect(html).not.toContain('<ready>');
    const md = readFileSync(join(dir, 'summary.md'), 'utf8');
    expect(md).toContain('| lifecycle | 2 | 1 | 0 | 1 |');
    expect(md).toContain('known: `counters-path`');
  });

  // No XML parser is a dependency of fleetsim; Python's ElementTree is a real one where Python is.
  const python = spawnSync('python3', ['-c', 'import xml.etree.ElementTree'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!python)('writes JUnit XML that an XML parser reads: one testcase per case, a failure with both answers (skipped without python3)', () => {
    const xml = conformanceJunit(run);
    const script = `
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
print(json.dumps({
  "root": root.tag, "attrs": root.attrib,
  "suites": [{"name": s.get("name"), "tests": s.get("tests"), "failures": s.get("failures"),
    "cases": [{"name": c.get("name"), "classname": c.get("classname"),
      "failure": None if c.find("failure") is None else {"message": c.find("failure").get("message"), "text": c.find("failure").text},
      "out": None if c.find("system-out") is None else c.find("system-out").text} for c in s.findall("testcase")]}
    for s in root.findall("testsuite")]}))`;
    const parsed = JSON.parse(execFileSync('python3', ['-c', script], { input: xml, encoding: 'utf8' })) as {
      root: string;
      attrs: Record<string, string>;
      suites: Array<{ name: string; tests: string; failures: string; cases: Array<{ name: string; classname: string; failure: { message: string; text: string } | null; out: string | null }> }>;
    };
    expect(parsed.root).toBe('testsuites');
    expect(parsed.attrs).toMatchObject({ tests: '3', failures: '1' });
    expect(parsed.suites.map((s) => [s.name, s.tests, s.failures])).toEqual([
      ['lifecycle', '2', '1'],
      ['counters', '1', '0'],
    ]);
    const [ready, get] = parsed.suites[0]!.cases;
    expect(ready).toMatchObject({ name: 'ready', failure: null });
    expect(get!.name).toBe('get after <ready> & "quotes"');
    expect(get!.failure!.message).toBe('$.body.state: "Ready" ≠ "Shutdown"');
    expect(get!.failure!.text).toContain('reference: {');
    expect(get!.failure!.text).toContain('"state": "Ready"');
    expect(get!.failure!.text).toContain('"state": "Shutdown\\u0001"');
    expect(parsed.suites[1]!.cases[0]).toMatchObject({ failure: null, out: 'known difference counters-path: Agones serves counters at /v1beta1 only' });
  });
  if (!python) console.warn('conformance-report.test.ts: python3 not found, the JUnit XML parse check is skipped');
});
