import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Side, type SuiteGroup, expectationUnder, listedTest } from './agones-e2e-tests.js';
import { recordE2eRun } from './agones-e2e-table.js';
import { CI_PARALLEL, GATE_SETS, type GateSet, type Outcome, firstCause, runWholeAsCi } from './agones-e2e-whole.js';
import { asExpected, recordedPackageFailures, recordWholeRun, totals } from './agones-e2e-whole-table.js';
import { kubeconfigText } from '../server/k8s/kubeconfig.js';

/**
 * `npm run conformance:agones-e2e`: Agones's own end-to-end suite (test/e2e in the Agones
 * repository) against `fleetsim serve`, one test at a time, each against a fresh server. Needs
 * AGONES_SRC, the path of an extracted Agones tree (it ships a Go vendor/ folder, so the suite
 * builds offline). Prints a line per test and a summary, and writes them to
 * `reports/out/agones-e2e.json`. A conformance run, like the benchmarks: not part of `npm test`.
 *
 * With `--kubeconfig=FILE` the suite runs against that cluster instead, real Agones (the oracle:
 * `npm run oracle -- exec node dist/conformance/agones-e2e.js --kubeconfig=…`), one test after
 * another, its outcomes judged against what conformance/agones-e2e-tests.ts expects of Agones and
 * written to `reports/out/agones-e2e-agones.json`. `--record` keeps a run's verdicts in
 * conformance/agones-e2e-results.json and writes the table of both sides, docs/agones-e2e.md.
 *
 * With `--whole` the package runs as Agones's CI runs it: in one process against one fleetsim, under
 * `--gates default`, `inverted` or `both` (conformance/agones-e2e-whole.ts), a table per gate set;
 * `--subpackages` runs test/e2e/allocator, controller and extensions after it against the same
 * fleetsim, one test at a time, as the CI does.
 *
 *   AGONES_SRC=~/src/agones npm run conformance:agones-e2e [-- REGEXP] [-- --rebuild] [-- --jobs=N] [-- --feature-gates=A=true&B=false] [-- --kubeconfig=FILE] [-- --record]
 *   AGONES_SRC=~/src/agones npm run conformance:agones-e2e -- --whole [--subpackages] [--gates default|inverted|both] [--record] [REGEXP]
 */

const CLI = fileURLToPath(new URL('../../bin/fleetsim.js', import.meta.url));
const OUT = fileURLToPath(new URL('../../reports/out/', import.meta.url));
const PER_TEST_TIMEOUT_MS = Number(process.env.AGONES_E2E_TIMEOUT_MS ?? 180_000);

/** The test binary of test/e2e, or of one of its subpackages, built once. */
function build(src: string, rebuild: boolean, subpackage?: string): string {
  const binary = join(src, '.fleetsim', subpackage ? `agones-e2e-${subpackage}.test` : 'agones-e2e.test');
  if (existsSync(binary) && !rebuild) return binary;
  mkdirSync(join(src, '.fleetsim'), { recursive: true });
  const pkg = subpackage ? `./test/e2e/${subpackage}` : './test/e2e';
  console.log(`building Agones's e2e suite in ${src} (go test -c -mod=vendor ${pkg})…`);
  execFileSync('go', ['test', '-c', '-mod=vendor', '-o', binary, pkg], { cwd: src, stdio: 'inherit' });
  return binary;
}

/** The suite's tests, read from its sources (listing them through the binary would need a cluster: TestMain sets one up). */
function listTests(cwd: string, pattern: string): string[] {
  const match = new RegExp(pattern);
  const tests = new Set<string>();
  for (const file of readdirSync(cwd).filter((f) => f.endsWith('_test.go'))) {
    for (const m of readFileSync(join(cwd, file), 'utf8').matchAll(/^func (Test\w+)\(t \*testing\.T\)/gm)) {
      if (m[1] !== 'TestMain' && match.test(m[1]!)) tests.add(m[1]!);
    }
  }
  return [...tests].sort();
}

/**
 * The loopback address and allocator port of a worker's server. Agones's allocator tests find the
 * allocator through its Service (ingress address, port) but one of them, TestAllocatorCrossNamespace,
 * names the address alone in a GameServerAllocationPolicy, which Agones dials on 443: where this
 * process may bind 443, each worker's server listens on an address of its own (127.0.0.2, .3…)
 * with the allocator on 443; elsewhere on 127.0.0.1 with the allocator on any free port.
 */
function addressOf(worker: number): { host: string; allocatorPort: number } {
  let unprivileged = 1024;
  try {
    unprivileged = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
  } catch {
    // Not Linux: only root binds 443.
  }
  const may443 = process.getuid?.() === 0 || unprivileged <= 443;
  return may443 ? { host: `127.0.0.${worker + 2}`, allocatorPort: 443 } : { host: '127.0.0.1', allocatorPort: 0 };
}

/**
 * Starts `fleetsim serve` on a free port with an empty in-memory cluster and its allocator as
 * Agones installs it (--allocator-tls auto: the Service and Secrets of agones-system). Each of the
 * parallel workers gets its own host port ranges: the simulated game servers listen on their
 * ports. Allocation through the resource API stays open (--allocator-plain-allowed), as in a
 * cluster, where the API server authenticates that client.
 */
async function startServe(worker: number, gates: string, ranges?: { hostPorts: string; sdkPorts: string }): Promise<{ child: ChildProcess; host: string; port: number }> {
  const hostPorts = ranges?.hostPorts ?? `${7000 + worker * 1000}-${7999 + worker * 1000}`;
  const sdkPorts = ranges?.sdkPorts ?? `${20000 + worker * 500}-${20499 + worker * 500}`;
  const { host, allocatorPort } = addressOf(worker);
  const args = ['serve', '--host', host, '--port', '0', '--db', ':memory:', '--no-default-fleet', '--port-range', hostPorts, '--sdk-port-range', sdkPorts, '--feature-gates', gates];
  args.push('--allocator-tls', 'auto', '--allocator-port', String(allocatorPort), '--allocator-plain-allowed');
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((ok, fail) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /serving on http:\/\/\S+:(\d+)/.exec(out);
      if (m) ok(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`fleetsim serve exited with ${code}`)));
  });
  child.stderr!.resume();
  return { child, host, port };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function runOne(binary: string, cwd: string, test: string, dir: string, worker: number, gates: string, cluster: string | undefined): Promise<Outcome> {
  const started = Date.now();
  // A cluster of the user's, or a fresh fleetsim of the test's own.
  if (cluster !== undefined) await laterSecond();
  const serve = cluster === undefined ? await startServe(worker, gates) : undefined;
  const kubeconfig = cluster ?? join(dir, `${test}.kubeconfig`);
  if (serve) writeFileSync(kubeconfig, kubeconfigText(`http://${serve.host}:${serve.port}`));
  try {
    const suiteArgs = [`-test.run=^${test}$`, '-test.v', `--kubeconfig=${kubeconfig}`, `--feature-gates=${gates}`];
    // Some tests run kubectl themselves, which finds the cluster through KUBECONFIG.
    const suite = spawn(binary, suiteArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: kubeconfig } });
    let output = '';
    suite.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
    suite.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      suite.kill('SIGKILL');
    }, PER_TEST_TIMEOUT_MS);
    await new Promise((done) => suite.once('close', done));
    clearTimeout(timer);
    const seconds = (Date.now() - started) / 1000;
    if (timedOut) return { test, result: 'timeout', seconds, cause: `no result after ${PER_TEST_TIMEOUT_MS / 1000} s` };
    if (new RegExp(`--- PASS: ${test} `).test(output)) return { test, result: 'pass', seconds };
    if (new RegExp(`--- SKIP: ${test} `).test(output)) return { test, result: 'skip', seconds, cause: firstCause(output) };
    return { test, result: 'fail', seconds, cause: firstCause(output) ?? output.trim().split('\n').slice(-1)[0] };
  } finally {
    if (serve) await stop(serve.child);
    lastTestSecond = Math.floor(Date.now() / 1000);
  }
}

let lastTestSecond = 0;

/**
 * The suite names its test namespace after the second it starts (a Unix timestamp), and the
 * previous test's namespace is still being deleted when the next test begins: on a cluster, each
 * test starts in a later second than the one the test before it ended in.
 */
async function laterSecond(): Promise<void> {
  while (Math.floor(Date.now() / 1000) <= lastTestSecond) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * `--jobs=N`: tests run at once (default 3; each has its own server and port ranges). Against a
 * cluster, one: the suite's TestMain deletes every e2e namespace it finds, another test's too.
 */
function jobsOf(args: string[], cluster: string | undefined): number {
  const flag = args.find((a) => a.startsWith('--jobs='));
  const jobs = flag ? Number(flag.slice('--jobs='.length)) : cluster === undefined ? 3 : 1;
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 20) throw new Error('--jobs must be a whole number from 1 to 20');
  if (cluster !== undefined && jobs > 1) throw new Error("--jobs: one at a time against a cluster (the suite's TestMain deletes the e2e namespaces of the tests running beside it)");
  return jobs;
}

/** `--kubeconfig=FILE`: the cluster the suite runs against instead of fleetsim (a path to a readable file). */
function clusterOf(args: string[]): string | undefined {
  const flag = args.find((a) => a.startsWith('--kubeconfig='));
  if (flag === undefined) return undefined;
  const file = resolve(flag.slice('--kubeconfig='.length));
  if (!existsSync(file)) throw new Error(`--kubeconfig: no file ${file}`);
  return file;
}

/**
 * `--feature-gates=A=true&B=false`, given to fleetsim and to the suite alike (the suite skips the
 * tests of gates it is told are off), or `--gates default|inverted`, a gate set of Agones's CI
 * (conformance/agones-e2e-whole.ts). By default the gates Agones's own defaults turn on beyond
 * fleetsim's (the spec has CountsAndLists off; Agones, and so its suite, has it on).
 */
function gatesOf(args: string[]): string {
  const flag = args.find((a) => a.startsWith('--feature-gates='));
  if (flag) return flag.slice('--feature-gates='.length);
  const sets = gateSetsOf(args);
  if (sets.length > 1) throw new Error('--gates both: only with --whole');
  return GATE_SETS[sets[0]!];
}

/** A flag's value, as `--flag=value` or `--flag value`. */
function valueOf(args: string[], flag: string): string | undefined {
  const i = args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i < 0) return undefined;
  return args[i] === flag ? args[i + 1] : args[i]!.slice(flag.length + 1);
}

/** `--gates default|inverted|both`: the gate sets of Agones's CI to run under (default: default). */
function gateSetsOf(args: string[]): GateSet[] {
  const value = valueOf(args, '--gates') ?? 'default';
  if (value === 'both') return ['inverted', 'default'];
  if (!Object.prototype.hasOwnProperty.call(GATE_SETS, value)) throw new Error(`--gates: "${value}" is not default, inverted or both`);
  return [value as GateSet];
}

/** The port ranges of the one fleetsim of a whole run: Agones's default host port range, SDK ports for every test side by side. */
const WHOLE_RANGES = { hostPorts: '7000-8000', sdkPorts: '20000-29999' };

/** The subpackages of test/e2e, run after it as Agones's CI runs them: one test at a time, go test's default timeout. */
const SUBPACKAGES = ['allocator', 'controller', 'extensions'] as const;

interface WholeOptions {
  src: string;
  rebuild: boolean;
  /** The package's test binary and the -test.run pattern, when it runs (`--whole`). */
  suite?: { binary: string; pattern: string; tests: string[] };
  /** `--subpackages`: run them too. */
  subpackages: boolean;
  dir: string;
  record: boolean;
}

/**
 * `--whole`: the suite in one process against one fleetsim per gate set, as Agones's CI runs it,
 * then with `--subpackages` the subpackages against the same fleetsim; prints each outcome as it
 * ends, then the gate set's table and totals, and writes the run to
 * reports/out/agones-e2e-whole-<set>.json (with `--record`, to conformance/agones-e2e-whole.json and
 * docs/agones-e2e-whole.md too). Returns whether every outcome is the one expected.
 */
async function runWholeUnder(set: GateSet, o: WholeOptions): Promise<boolean> {
  const gates = GATE_SETS[set];
  console.log(`\nAgones's e2e suite as its CI runs it, gate set ${set} (--feature-gates=${gates}), one fleetsim…`);
  const serve = await startServe(0, gates, WHOLE_RANGES);
  const kubeconfig = join(o.dir, `whole-${set}.kubeconfig`);
  writeFileSync(kubeconfig, kubeconfigText(`http://${serve.host}:${serve.port}`));
  const started = new Date();
  const print = (prefix: string) => (r: Outcome) => console.log(`${r.result.padEnd(7)} ${prefix}${r.test} (${r.seconds.toFixed(1)} s)${r.rerun ? ` on rerun ${r.rerun}` : ''}`);
  const outcomes: Outcome[] = [];
  let minutes: number | undefined;
  try {
    if (o.suite) {
      // Recorded beside the rest, a run of some tests reruns as the whole package's run would.
      const partial = o.record && o.suite.pattern !== '.*';
      const recordedFailures = partial ? recordedPackageFailures(set, o.suite.tests) : undefined;
      outcomes.push(...(await runWholeAsCi({ ...o.suite, cwd: join(o.src, 'test', 'e2e'), kubeconfig, gates, recordedFailures, onOutcome: print('') })));
      // Only a run of the whole package says how long the package takes: some tests' run keeps the recorded figure.
      if (o.suite.pattern === '.*') minutes = (Date.now() - started.getTime()) / 60_000;
    }
    for (const sub of o.subpackages ? SUBPACKAGES : []) {
      const cwd = join(o.src, 'test', 'e2e', sub);
      const run = { binary: build(o.src, o.rebuild, sub), cwd, kubeconfig, gates, pattern: '.*', tests: listTests(cwd, '.*'), parallel: 1, timeoutMinutes: 10, onOutcome: print(`${sub}/`) };
      outcomes.push(...(await runWholeAsCi(run)).map((r) => ({ ...r, test: `${sub}/${r.test}` })));
    }
  } finally {
    await stop(serve.child);
  }
  const judged = outcomes.map((r) => ({ ...r, ...expectationUnder(listedTest(r.test), gates) }));
  console.log(`\ngate set ${set}:`);
  for (const r of judged) {
    const surprise = asExpected(r.result, r.expect) ? '' : ` UNEXPECTED (expected ${r.expect})`;
    // Where the outcome is the one expected, the list says why; where not, the test does.
    const said = surprise ? r.cause : (r.because ?? r.cause);
    const why = r.result === 'pass' ? (r.hollow ? ' (passes without testing it)' : '') : `: ${said ?? (r.result === 'skip' ? 'skipped by the suite, without a message' : '')}`;
    console.log(`  ${r.result.padEnd(7)} ${r.test}${r.rerun ? ` (on rerun ${r.rerun})` : ''}${surprise}${why}`);
  }
  console.log(`gate set ${set}: ${totals(Object.fromEntries(outcomes.map((r) => [r.test, r.result])))}`);
  const unexpected = judged.filter((r) => !asExpected(r.result, r.expect));
  console.log(unexpected.length === 0 ? 'every outcome is the one expected (conformance/agones-e2e-tests.ts)' : `${unexpected.length} unexpected`);
  mkdirSync(OUT, { recursive: true });
  const run = { mode: 'whole', gateSet: set, gates, parallel: CI_PARALLEL, subpackages: o.subpackages, started: started.toISOString(), minutes, outcomes: judged };
  writeFileSync(join(OUT, `agones-e2e-whole-${set}.json`), JSON.stringify(run, null, 2));
  if (o.record) console.log(`recorded: ${recordWholeRun(set, gates, CI_PARALLEL, minutes, outcomes).join(', ')}`);
  return unexpected.length === 0;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const src = process.env.AGONES_SRC;
  if (!src || !existsSync(join(src, 'test', 'e2e'))) {
    console.error('AGONES_SRC must name an extracted Agones tree (with test/e2e and vendor/): e.g. AGONES_SRC=~/src/agones npm run conformance:agones-e2e');
    process.exitCode = 2;
    return;
  }
  const root = resolve(src);
  const whole = args.includes('--whole');
  const subpackages = args.includes('--subpackages');
  const cwd = join(root, 'test', 'e2e');
  const gatesValue = valueOf(args, '--gates');
  const pattern = args.find((a, i) => !a.startsWith('--') && !(a === gatesValue && args[i - 1] === '--gates')) ?? '.*';
  const tests = listTests(cwd, pattern);
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-agones-e2e-'));
  const rebuild = args.includes('--rebuild');
  if (whole || subpackages) {
    const suite = whole ? { binary: build(root, rebuild), pattern, tests } : undefined;
    let expected = true;
    for (const set of gateSetsOf(args)) expected = (await runWholeUnder(set, { src: root, rebuild, suite, subpackages, dir, record: args.includes('--record') })) && expected;
    rmSync(dir, { recursive: true, force: true });
    if (!expected) process.exitCode = 1;
    return;
  }
  const binary = build(root, rebuild);
  const cluster = clusterOf(args);
  const side: Side = cluster === undefined ? 'fleetsim' : 'agones';
  const jobs = jobsOf(args, cluster);
  const gates = gatesOf(args);
  const byName = new Map<string, Outcome>();
  const print = (o: Outcome, note = '') =>
    console.log(`${o.result.padEnd(7)} ${o.test} (${o.seconds.toFixed(1)} s)${note}${o.cause ? `: ${o.cause}` : ''}`);
  const queue = [...tests];
  // Each test has its own server, so several run at once; most of their time is waiting.
  const worker = async (index: number) => {
    for (let test = queue.shift(); test !== undefined; test = queue.shift()) {
      const outcome = await runOne(binary, cwd, test, dir, index, gates, cluster);
      byName.set(test, outcome);
      print(outcome);
    }
  };
  await Promise.all(Array.from({ length: jobs }, (_, i) => worker(i)));
  // Tests that share the machine can collide where a cluster would spread them over nodes (a
  // static host port): what failed beside others runs again alone, and says so.
  if (jobs > 1 && !args.includes('--no-retry')) {
    for (const test of tests.filter((t) => ['fail', 'timeout'].includes(byName.get(t)!.result) && expectationOf(t, side, gates).expect === 'pass')) {
      const outcome = { ...(await runOne(binary, cwd, test, dir, 0, gates, cluster)), alone: true };
      byName.set(test, outcome);
      print(outcome, ' alone');
    }
  }
  rmSync(dir, { recursive: true, force: true });

  const outcomes = tests.map((t) => ({ ...byName.get(t)!, ...expectationOf(t, side, gates) }));
  const unexpected = outcomes.filter((o) => !(o.result === o.expect || (o.expect === 'fail' && o.result === 'timeout')));
  console.log('');
  for (const group of ['resource-api', 'game-server', 'pods', 'allocator-service', 'unlisted'] as const) {
    const inGroup = outcomes.filter((o) => o.group === group);
    if (inGroup.length === 0) continue;
    const n = (r: Outcome['result']) => inGroup.filter((o) => o.result === r).length;
    console.log(`${group.padEnd(17)} ${inGroup.length} tests: ${n('pass')} passed, ${n('fail')} failed, ${n('timeout')} timed out, ${n('skip')} skipped`);
  }
  const count = (r: Outcome['result']) => outcomes.filter((o) => o.result === r).length;
  console.log(`${tests.length} tests: ${count('pass')} passed, ${count('fail')} failed, ${count('timeout')} timed out, ${count('skip')} skipped`);
  if (unexpected.length === 0) console.log(`every outcome is the one expected of ${side} (conformance/agones-e2e-tests.ts)`);
  for (const o of unexpected) console.log(`UNEXPECTED ${o.test}: ${o.result}, expected ${o.expect}${o.because ? ` (${o.because})` : ''}`);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, side === 'fleetsim' ? 'agones-e2e.json' : 'agones-e2e-agones.json'), JSON.stringify({ side, pattern, gates, outcomes }, null, 2));
  if (args.includes('--record')) console.log(`recorded: ${recordE2eRun(side, gates, outcomes).join(', ')}`);
  if (unexpected.length > 0) process.exitCode = 1;
}

/** What conformance/agones-e2e-tests.ts expects of a test on a side under the run's gates; a test it does not list is expected to pass. */
function expectationOf(test: string, side: Side, gates: string): { group: SuiteGroup | 'unlisted'; expect: 'pass' | 'fail' | 'skip'; because?: string } {
  const listed = listedTest(test);
  const { expect = 'pass', because } = expectationUnder(listed, gates, side);
  return { group: listed?.group ?? 'unlisted', expect, ...(because && { because }) };
}

await main();
