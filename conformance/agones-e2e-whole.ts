import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Verdict } from './agones-e2e-table.js';

/**
 * Agones's e2e suite as Agones's CI runs it (build/e2e-image/e2e.sh running `make test-e2e`,
 * build/Makefile's test-e2e-integration under gotestsum): the whole test/e2e package in one test
 * process against one cluster, its tests side by side (`-parallel=16`) within 45 minutes, once per
 * gate set. Each test's outcome is read from the test binary's own event stream (`go tool
 * test2json`), so tests running side by side cannot mix their lines.
 */


export interface Outcome {
  test: string;
  result: Verdict;
  seconds: number;
  /** The first error the test printed, when it did not pass (its skip message when skipped). */
  cause?: string;
  /** Run again alone after failing beside others. */
  alone?: boolean;
  /** Which run of gotestsum's reruns this outcome is (1 or 2), when the first run failed it. */
  rerun?: number;
}

/**
 * The gate sets Agones's CI runs the suite under, as the suite's --feature-gates: `inverted` is
 * cloudbuild.yaml's featureWithGate (alpha gates on, beta gates off), run first; `default` stands
 * for its run without gates, Agones's defaults: the gates where fleetsim's defaults (the spec's)
 * differ from Agones's are named, so that fleetsim and the suite agree on them.
 */
export const GATE_SETS = {
  default: 'CountsAndLists=true',
  inverted:
    'PlayerAllocationFilter=true&FleetAutoscaleRequestMetaData=false&PlayerTracking=true&CountsAndLists=false&RollingUpdateFix=false&PortRanges=false&PortPolicyNone=false&ScheduledAutoscaler=false&GKEAutopilotExtendedDurationPods=false&SidecarContainers=false&WasmAutoscaler=true&Example=true',
} as const;

export type GateSet = keyof typeof GATE_SETS;

/** Agones's CI flags for the integration run (build/e2e-image/e2e.sh, build/Makefile). */
export const CI_PARALLEL = 16;
export const CI_TIMEOUT_MINUTES = 45;
/**
 * gotestsum's `--rerun-fails=2` in Agones's CI (build/Makefile): a failed test runs again in a new
 * test process, so under a new namespace of the suite's own, until it passes, twice at most; and not
 * at all when more than `--rerun-fails-max-failures` (gotestsum's default, 10) failed at first.
 */
export const CI_RERUN_ATTEMPTS = 2;
export const CI_RERUN_MAX_FAILURES = 10;

/**
 * The line that says why a Go test failed: an assertion's "Error:", else the last line the test
 * wrote through t.Fatal or t.Log before it failed ("file.go:12: …"), else a log at error level.
 */
export function firstCause(output: string): string | undefined {
  const lines = output.split('\n');
  const error = lines.findIndex((l) => /^\s+Error:\s/.test(l));
  if (error >= 0) return lines.slice(error, error + 2).map((l) => l.trim()).join(' ');
  const fatal = lines.filter((l) => /^\s+\w+\.go:\d+: \S/.test(l)).at(-1);
  if (fatal) return fatal.trim();
  return lines.find((l) => /level=(error|fatal)|panic:|--- FAIL/.test(l))?.trim();
}

/** A line of `go tool test2json`. */
interface TestEvent {
  Action?: string;
  Test?: string;
  Output?: string;
  Elapsed?: number;
}

/** The most output kept per test, for its cause: the suite's tests log a great deal while waiting. */
const OUTPUT_KEPT = 200_000;

/**
 * Folds test2json events into an outcome per top-level test (subtests count within their test).
 * A test that started and never ended is a timeout (the binary's -test.timeout panics, naming it);
 * a test of `expected` that never started is one too, the run having ended before it.
 */
export class EventFold {
  private readonly output = new Map<string, string>();
  private readonly ended = new Map<string, Outcome>();
  private packageOutput = '';

  /** Takes a line of the stream; returns the outcome of a test it ends. */
  add(line: string): Outcome | undefined {
    let event: TestEvent;
    try {
      event = JSON.parse(line) as TestEvent;
    } catch {
      this.packageOutput = (this.packageOutput + `${line}\n`).slice(-OUTPUT_KEPT);
      return undefined;
    }
    const test = event.Test?.split('/')[0];
    if (test === undefined) {
      if (event.Action === 'output' && event.Output) this.packageOutput = (this.packageOutput + event.Output).slice(-OUTPUT_KEPT);
      return undefined;
    }
    if (event.Action === 'run' && !this.output.has(test)) this.output.set(test, '');
    if (event.Action === 'output' && event.Output) this.output.set(test, ((this.output.get(test) ?? '') + event.Output).slice(-OUTPUT_KEPT));
    if (event.Test !== test) return undefined;
    const seconds = event.Elapsed ?? 0;
    const output = this.output.get(test) ?? '';
    let outcome: Outcome | undefined;
    if (event.Action === 'pass') outcome = { test, result: 'pass', seconds };
    if (event.Action === 'fail') outcome = { test, result: 'fail', seconds, cause: firstCause(output) ?? output.trim().split('\n').slice(-1)[0] };
    if (event.Action === 'skip') outcome = { test, result: 'skip', seconds, cause: skipMessage(output) };
    if (outcome) this.ended.set(test, outcome);
    return outcome;
  }

  outcomes(expected: readonly string[], why: string): Outcome[] {
    const names = [...new Set([...expected, ...this.output.keys(), ...this.ended.keys()])].sort();
    const panic = firstCause(this.packageOutput);
    return names.map(
      (test) =>
        this.ended.get(test) ?? {
          test,
          result: 'timeout' as const,
          seconds: 0,
          cause: this.output.has(test) ? `did not end: ${panic ?? why}` : `did not start: ${panic ?? why}`,
        },
    );
  }
}

/** What a skipped test said of why (`t.Skip("…")` prints the message before `--- SKIP`). */
function skipMessage(output: string): string | undefined {
  const lines = output.split('\n').map((l) => l.trim());
  const skip = lines.findIndex((l) => l.startsWith('--- SKIP'));
  const said = lines.slice(0, skip < 0 ? undefined : skip).filter((l) => l !== '' && !l.startsWith('=== '));
  return said.at(-1)?.replace(/^\S+_test\.go:\d+:\s*/, '');
}

export interface WholeRun {
  /** The compiled test binary of test/e2e, and its folder (the suite reads files relative to it). */
  binary: string;
  cwd: string;
  kubeconfig: string;
  gates: string;
  /** The -test.run pattern. */
  pattern: string;
  /** The tests the pattern names in the sources, so that one the run never reached is counted. */
  tests: readonly string[];
  /**
   * For a run of some of the package's tests recorded beside the rest: the others that the record
   * says failed. They count toward gotestsum's limit and run again with this run's failures, as in a
   * run of the whole package, so that a merged record says what such a run would.
   */
  recordedFailures?: readonly string[];
  parallel?: number;
  timeoutMinutes?: number;
  /** Each outcome as its test ends. */
  onOutcome?: (o: Outcome) => void;
}

/** Runs the suite as Agones's CI does: in one process, then what failed again as gotestsum reruns it; an outcome per test, its last. */
export async function runWholeAsCi(run: WholeRun, runOnce: (run: WholeRun) => Promise<Outcome[]> = runWhole): Promise<Outcome[]> {
  const outcomes = new Map((await runOnce(run)).map((o) => [o.test, o]));
  const others = (run.recordedFailures ?? []).filter((test) => !outcomes.has(test));
  let failed = [...[...outcomes.values()].filter((o) => o.result === 'fail' || o.result === 'timeout').map((o) => o.test), ...others];
  if (failed.length > CI_RERUN_MAX_FAILURES) return [...outcomes.values()];
  for (let attempt = 1; attempt <= CI_RERUN_ATTEMPTS && failed.length > 0; attempt++) {
    const again = await runOnce({ ...run, pattern: `^(${failed.join('|')})$`, tests: failed, recordedFailures: undefined, onOutcome: (o) => run.onOutcome?.({ ...o, rerun: attempt }) });
    for (const o of again) outcomes.set(o.test, { ...o, rerun: attempt });
    failed = again.filter((o) => o.result === 'fail' || o.result === 'timeout').map((o) => o.test);
  }
  return [...outcomes.values()];
}

/** Runs the suite in one process and returns an outcome per test. */
export async function runWhole(run: WholeRun): Promise<Outcome[]> {
  const minutes = run.timeoutMinutes ?? CI_TIMEOUT_MINUTES;
  const args = ['tool', 'test2json', '-t', '-p', 'e2e', run.binary, '-test.v=test2json', `-test.run=${run.pattern}`, `-test.parallel=${run.parallel ?? CI_PARALLEL}`, `-test.timeout=${minutes}m`];
  args.push(`--kubeconfig=${run.kubeconfig}`, `--feature-gates=${run.gates}`);
  // Some tests run kubectl themselves, which finds the cluster through KUBECONFIG.
  const suite = spawn('go', args, { cwd: run.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: run.kubeconfig } });
  const fold = new EventFold();
  let stderr = '';
  suite.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-10_000)));
  const lines = createInterface({ input: suite.stdout! });
  lines.on('line', (line) => {
    const ended = fold.add(line);
    if (ended) run.onOutcome?.(ended);
  });
  // The binary's own timeout ends it; this one ends a binary that does not (a wedged TestMain).
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    suite.kill('SIGKILL');
  }, (minutes + 5) * 60_000);
  const code = await new Promise<number | null>((done) => suite.once('close', done));
  clearTimeout(timer);
  const why = killed ? `the run was stopped after ${minutes + 5} minutes` : `the suite exited with ${code}${stderr.trim() ? `: ${stderr.trim().split('\n').slice(-1)[0]}` : ''}`;
  return fold.outcomes(run.tests, why);
}
