import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGONES_E2E_TESTS, type Side, type SuiteGroup } from './agones-e2e-tests.js';
import { recordE2eRun } from './agones-e2e-table.js';
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
 *   AGONES_SRC=~/src/agones npm run conformance:agones-e2e [-- REGEXP] [-- --rebuild] [-- --jobs=N] [-- --feature-gates=A=true&B=false] [-- --kubeconfig=FILE] [-- --record]
 */

const CLI = fileURLToPath(new URL('../../bin/fleetsim.js', import.meta.url));
const OUT = fileURLToPath(new URL('../../reports/out/', import.meta.url));
const PER_TEST_TIMEOUT_MS = Number(process.env.AGONES_E2E_TIMEOUT_MS ?? 180_000);

interface Outcome {
  test: string;
  result: 'pass' | 'fail' | 'skip' | 'timeout';
  seconds: number;
  /** The first error the test printed, when it did not pass. */
  cause?: string;
  /** Run again alone after failing beside others. */
  alone?: boolean;
}

function build(src: string, rebuild: boolean): string {
  const binary = join(src, '.fleetsim', 'agones-e2e.test');
  if (existsSync(binary) && !rebuild) return binary;
  mkdirSync(join(src, '.fleetsim'), { recursive: true });
  console.log(`building Agones's e2e suite in ${src} (go test -c -mod=vendor ./test/e2e)…`);
  execFileSync('go', ['test', '-c', '-mod=vendor', '-o', binary, './test/e2e'], { cwd: src, stdio: 'inherit' });
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
async function startServe(worker: number, gates: string): Promise<{ child: ChildProcess; host: string; port: number }> {
  const hostPorts = `${7000 + worker * 1000}-${7999 + worker * 1000}`;
  const sdkPorts = `${20000 + worker * 500}-${20499 + worker * 500}`;
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

/** The first line that says why a Go test failed: an assertion's "Error:" or a log at error level. */
function firstCause(output: string): string | undefined {
  const lines = output.split('\n');
  const error = lines.findIndex((l) => /^\s+Error:\s/.test(l));
  if (error >= 0) return lines.slice(error, error + 2).map((l) => l.trim()).join(' ');
  return lines.find((l) => /level=(error|fatal)|panic:|--- FAIL/.test(l))?.trim();
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
 * tests of gates it is told are off). By default the gates Agones's own defaults turn on beyond
 * fleetsim's (the spec has CountsAndLists off; Agones, and so its suite, has it on).
 */
function gatesOf(args: string[]): string {
  const flag = args.find((a) => a.startsWith('--feature-gates='));
  return flag ? flag.slice('--feature-gates='.length) : 'CountsAndLists=true';
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
  const binary = build(root, args.includes('--rebuild'));
  const cwd = join(root, 'test', 'e2e');
  const pattern = args.find((a) => !a.startsWith('--')) ?? '.*';
  const tests = listTests(cwd, pattern);
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-agones-e2e-'));
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
    for (const test of tests.filter((t) => ['fail', 'timeout'].includes(byName.get(t)!.result) && expectationOf(t, side).expect === 'pass')) {
      const outcome = { ...(await runOne(binary, cwd, test, dir, 0, gates, cluster)), alone: true };
      byName.set(test, outcome);
      print(outcome, ' alone');
    }
  }
  rmSync(dir, { recursive: true, force: true });

  const outcomes = tests.map((t) => ({ ...byName.get(t)!, ...expectationOf(t, side) }));
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

/** What conformance/agones-e2e-tests.ts expects of a test on a side; a test it does not list is expected to pass. */
function expectationOf(test: string, side: Side): { group: SuiteGroup | 'unlisted'; expect: 'pass' | 'fail' | 'skip'; because?: string } {
  const listed = AGONES_E2E_TESTS.find((t) => t.test === test);
  if (!listed) return { group: 'unlisted', expect: 'pass' };
  // The suite's own skips (its gates) are the same against either.
  const expected = side === 'fleetsim' ? listed : (listed.agones ?? (listed.expect === 'skip' ? listed : {}));
  return { group: listed.group, expect: expected.expect ?? 'pass', ...(expected.because && { because: expected.because }) };
}

await main();
