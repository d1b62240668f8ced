import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFeatureGates } from '../../server/features.js';
import { FlagError, type FlagSpec, flagsHelp, parseDuration, parseFlags, runScript } from '../../server/flags.js';
import { runFolder } from '../../loadtest/paths.js';
import { type CaseOutcome, differences } from '../../reports/conformance-report.js';
import { oraclePaths } from '../../oracle/paths.js';
import { rerunInOracle } from '../../oracle/rerun.js';
import { type KnownContext, type KnownDifference, knownDifferenceFor } from '../sidecar/cases.js';
import { CLUSTER_KNOWN_FILE, checkReachable, knownDifferences, referencePortRangeOf, startReference } from '../cluster/command.js';
import { KubectlCluster } from '../cluster/kubectl.js';
import { runScenarios } from '../cluster/run-scenarios.js';
import { DIFFERENTIAL_CASES_DIR, writeCase } from './cases.js';
import { type Operation, generateSequence, sequenceName, sequenceScenario } from './generate.js';
import { shrink } from './shrink.js';

/**
 * `npm run conformance:differential -- --sequences N --seed S`: the randomized differential tester.
 * Each sequence (generate.ts) runs on a reference fleetsim and on the target (by default the oracle,
 * `npm run oracle -- up`: the command then runs itself inside the oracle's namespace, where the
 * GameServers' addresses are), step by step, compared as `conformance cluster` compares. A sequence
 * that differs in a way conformance/cluster-known.yaml does not name is run again (a difference
 * that does not come back is reported as unsteady), shrunk to the fewest operations that still
 * differ the same way, and saved with the oracle's outcomes as a regression case, which `npm test`
 * replays against fleetsim.
 */

const SELF = fileURLToPath(import.meta.url);

const FLAGS: FlagSpec[] = [
  { name: 'sequences', type: 'number', default: 10, help: 'sequences to generate and run' },
  { name: 'seed', type: 'number', help: 'the seed (a whole number; default: one drawn and printed, to run again)' },
  { name: 'first', type: 'number', default: 0, help: 'the index of the first sequence (a seed names sequences 0, 1, 2…)' },
  { name: 'length', type: 'number', default: 8, help: 'operations per sequence' },
  { name: 'kubeconfig', type: 'string', help: "the target cluster's kubeconfig (default: the oracle's, run inside its namespace)" },
  { name: 'feature-gates', type: 'string', default: 'CountsAndLists=true', help: "the reference's gates: the target's (Agones's defaults have CountsAndLists on)" },
  { name: 'no-shrink', type: 'boolean', default: false, help: 'report differing sequences without shrinking or saving them' },
  { name: 'save', type: 'string', help: `folder the shrunk cases are written to (default ${DIFFERENTIAL_CASES_DIR})` },
  { name: 'timeout', type: 'string', default: '2m', help: 'the longest a step waits for both clusters to settle' },
  { name: 'reference-port-range', type: 'string', default: '27000-27999', help: "host ports of the reference's simulated game servers" },
  { name: 'out', alias: 'o', type: 'string', help: 'run folder for run.json (default reports/out/<time>-differential)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

const USAGE = `npm run conformance:differential -- [--sequences N] [--seed S] [--length L] [--kubeconfig FILE]
  generates sequences of operations from the seed, runs each on a reference fleetsim and on the target
  (default: the oracle, npm run oracle -- up), compares every step, and shrinks and saves each sequence
  that differs unexpectedly; exit 0 when none did, 1 when one did, 2 on bad flags

${flagsHelp(FLAGS)}`;

interface Settings {
  sequences: number;
  seed: number;
  first: number;
  length: number;
  kubeconfig: string;
  featureGates: string;
  shrink: boolean;
  save: string;
  waitTimeoutMs: number;
  referencePortRange: string;
  out: string;
}

/** A difference as the shrinker looks for it again: at this step, at this path of its outcome. */
interface Signature {
  step: string;
  path: string;
  text: string;
}

interface SequenceReport {
  name: string;
  operations: string[];
  steps: number;
  seconds: number;
  verdict: 'same' | 'known' | 'different' | 'unsteady';
  difference?: Signature;
  shrunk?: { operations: string[]; tries: number; case: string };
}

async function main(argv: string[]): Promise<number> {
  const { values, positional, given } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument "${positional[0]}"`);
  if (!given.has('kubeconfig')) return inOracle(argv);
  const settings = settingsOf(values);
  const known = knownDifferences(CLUSTER_KNOWN_FILE);
  const context: KnownContext = { profile: 'agones', gatesGiven: new Set(settings.featureGates.split('&').filter(Boolean).map((pair) => pair.split('=')[0]!)) };
  const target = new KubectlCluster('target', settings.kubeconfig, 'default');
  await checkReachable(target, `--kubeconfig ${settings.kubeconfig}`);
  mkdirSync(settings.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'fleetsim-differential-'));
  const reference = await startReference({ ...settings, namespace: 'default', work, log: join(settings.out, 'reference-serve.log') });
  const started = Date.now();
  const reports: SequenceReport[] = [];
  let leftBehind: string[] = [];
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error('stopping after this sequence (once more to leave at once)…');
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  console.log(`differential: seed ${settings.seed}, sequences ${settings.first}-${settings.first + settings.sequences - 1}, ${settings.length} operations each; target ${settings.kubeconfig}, reference fleetsim serve on ${reference.fleetsim.baseUrl}`);

  /** Runs operations as one scenario on both clusters; the outcomes, and the first unexpected difference. */
  const runOnce = async (name: string, operations: readonly Operation[], log: (line: string) => void) => {
    const runId = `df${randomBytes(3).toString('hex')}`;
    const result = await runScenarios([sequenceScenario(name, operations, runId)], {
      reference: reference.cluster,
      target,
      runId,
      waitTimeoutMs: settings.waitTimeoutMs,
      known,
      knownContext: context,
      log,
    });
    leftBehind = [...leftBehind, ...result.leftBehind];
    return { outcomes: result.outcomes, unexpected: unexpectedIn(result.outcomes, known, context) };
  };

  try {
    for (let index = settings.first; index < settings.first + settings.sequences && !stopping; index++) {
      const sequence = generateSequence(settings.seed, index, { length: settings.length, countsAndLists: parseFeatureGates(settings.featureGates).CountsAndLists });
      const name = sequenceName(sequence);
      const sequenceStarted = Date.now();
      console.log(`\n${name}: ${sequence.operations.map((operation) => `${operation.id} ${operation.summary}`).join('; ')}`);
      const first = await runOnce(name, sequence.operations, (line) => console.log(line));
      const report: SequenceReport = {
        name,
        operations: sequence.operations.map((operation) => `${operation.id} ${operation.summary}`),
        steps: first.outcomes.length,
        seconds: 0,
        verdict: first.unexpected ? 'different' : first.outcomes.some((outcome) => outcome.verdict === 'known') ? 'known' : 'same',
        ...(first.unexpected && { difference: first.unexpected }),
      };
      if (first.unexpected && !stopping) {
        const signature = first.unexpected;
        console.log(`${name}: differs at "${signature.step}": ${signature.text}; running it again`);
        const again = await runOnce(name, sequence.operations, () => {});
        if (!sameDifference(again.unexpected, again.outcomes, signature, known, context)) {
          report.verdict = 'unsteady';
          console.log(`${name}: UNSTEADY, the difference did not come back (${again.unexpected ? `another did: "${again.unexpected.step}": ${again.unexpected.text}` : 'all the same'})`);
        } else if (settings.shrink) {
          console.log(`${name}: it comes back; shrinking ${sequence.operations.length} operations`);
          const lastRun = new Map<string, CaseOutcome[]>([[key(sequence.operations), again.outcomes]]);
          const shrunk = await shrink(
            sequence.operations,
            async (candidate) => {
              const result = await runOnce(name, candidate, () => {});
              const found = sameDifference(result.unexpected, result.outcomes, signature, known, context);
              if (found) lastRun.set(key(candidate), result.outcomes);
              return found;
            },
            (line) => console.log(line),
          );
          const caseName = `${name}-${shrunk.items.map((operation) => operation.id).join('-')}`;
          const file = writeCase(settings.save, caseName, {
            description: caseDescription(settings, sequence.operations.length, shrunk.items, signature),
            featureGates: settings.featureGates,
            operations: shrunk.items,
            recorded: await oracleVersion(target),
            outcomes: lastRun.get(key(shrunk.items))!,
          });
          report.shrunk = { operations: shrunk.items.map((operation) => `${operation.id} ${operation.summary}`), tries: shrunk.tries, case: file };
          console.log(`${name}: shrunk to ${shrunk.items.length} operation${shrunk.items.length === 1 ? '' : 's'} in ${shrunk.tries} tries: ${report.shrunk.operations.join('; ')}\n  saved ${file}`);
        }
      }
      report.seconds = (Date.now() - sequenceStarted) / 1000;
      reports.push(report);
    }
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await reference.fleetsim.process.stop();
    rmSync(work, { recursive: true, force: true });
  }

  const seconds = (Date.now() - started) / 1000;
  writeFileSync(join(settings.out, 'run.json'), JSON.stringify({ command: 'conformance:differential', ...settings, seconds, sequences: reports }, null, 2));
  const count = (verdict: SequenceReport['verdict']) => reports.filter((report) => report.verdict === verdict).length;
  const steps = reports.reduce((sum, report) => sum + report.steps, 0);
  console.log(`\n${reports.length} sequences (seed ${settings.seed}), ${steps} steps in ${Math.round(seconds)} s: ${count('same')} the same, ${count('known')} with known differences only, ${count('different')} different, ${count('unsteady')} unsteady`);
  for (const report of reports.filter((r) => r.verdict === 'different' || r.verdict === 'unsteady')) {
    console.log(`  ${report.verdict.toUpperCase()} ${report.name} at "${report.difference!.step}": ${report.difference!.text}${report.shrunk ? `\n    shrunk to ${report.shrunk.operations.length}: ${report.shrunk.case}` : ''}`);
  }
  console.log(`run: ${join(settings.out, 'run.json')}`);
  if (leftBehind.length > 0) {
    console.error(`could not delete on the target (delete by hand):\n  ${[...new Set(leftBehind)].join('\n  ')}`);
    return 1;
  }
  return count('different') + count('unsteady') > 0 ? 1 : 0;
}

/** The first difference of a run that no known difference covers. */
function unexpectedIn(outcomes: readonly CaseOutcome[], known: readonly KnownDifference[], context: KnownContext): Signature | undefined {
  for (const outcome of outcomes) {
    if (outcome.verdict !== 'different') continue;
    const found = differences(outcome.reference, outcome.target).find((d) => !knownDifferenceFor(known, context, outcome.area, outcome.name, d.path));
    if (found) return { step: outcome.name, path: found.path, text: found.text };
  }
  return undefined;
}

/** The run shows the difference again: at the same step and path (not necessarily first: a shrunk sequence may differ earlier too). */
function sameDifference(first: Signature | undefined, outcomes: readonly CaseOutcome[], signature: Signature, known: readonly KnownDifference[], context: KnownContext): boolean {
  if (first === undefined) return false;
  const outcome = outcomes.find((o) => o.name === signature.step);
  return (
    outcome !== undefined &&
    differences(outcome.reference, outcome.target).some((d) => d.path === signature.path && !knownDifferenceFor(known, context, outcome.area, outcome.name, d.path))
  );
}

function key(operations: readonly Operation[]): string {
  return operations.map((operation) => operation.id).join(',');
}

function caseDescription(settings: Settings, from: number, operations: readonly Operation[], signature: Signature): string {
  return [
    `Found by npm run conformance:differential (seed ${settings.seed}), shrunk from ${from} operations to ${operations.length}:`,
    ...operations.map((operation) => `${operation.id} ${operation.summary}.`),
    `At "${signature.step}", fleetsim and Agones answered ${signature.text} (fleetsim first).`,
  ].join(' ');
}

/** Agones's and Kubernetes's versions on the target, as a case records them. */
async function oracleVersion(target: KubectlCluster): Promise<string> {
  const answer = await target.run(['get', 'deployment', 'agones-controller', '-n', 'agones-system', '-o', "jsonpath={.spec.template.spec.containers[0].image}"], '', 30_000);
  const version = await target.run(['version', '-o', 'json'], '', 30_000);
  let kubernetes = '?';
  try {
    kubernetes = (JSON.parse(version.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ?? '?';
  } catch {
    // An answer that is not JSON leaves it unknown.
  }
  const agones = /:([^:]+)$/.exec(answer.stdout.trim())?.[1] ?? '?';
  return `Agones ${agones} on Kubernetes ${kubernetes}, ${new Date().toISOString().slice(0, 10)}`;
}

function settingsOf(values: Record<string, string | number | boolean | undefined>): Settings {
  const whole = (name: string, min: number, max: number): number => {
    const n = values[name] as number;
    if (!Number.isInteger(n) || n < min || n > max) throw new FlagError(`--${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const seed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : whole('seed', 0, 2 ** 32 - 1);
  const featureGates = String(values['feature-gates']);
  try {
    parseFeatureGates(featureGates);
  } catch (error) {
    throw new FlagError(`--feature-gates: ${(error as Error).message}`);
  }
  const kubeconfig = resolve(String(values.kubeconfig));
  if (!existsSync(kubeconfig)) throw new FlagError(`--kubeconfig ${kubeconfig}: no such file`);
  return {
    sequences: whole('sequences', 1, 10_000),
    seed,
    first: whole('first', 0, 1_000_000),
    length: whole('length', 1, 100),
    kubeconfig,
    featureGates,
    shrink: values['no-shrink'] !== true,
    save: values.save === undefined ? DIFFERENTIAL_CASES_DIR : resolve(String(values.save)),
    waitTimeoutMs: parseDuration(String(values.timeout), '--timeout'),
    referencePortRange: referencePortRangeOf(String(values['reference-port-range'])),
    out: values.out === undefined ? runFolder('differential') : resolve(String(values.out)),
  };
}

/**
 * Without --kubeconfig the target is the oracle, whose API server and GameServers are reachable only
 * inside its namespace: this command runs again there, through `npm run oracle -- exec`, with the
 * oracle's kubeconfig.
 */
function inOracle(argv: string[]): Promise<number> {
  const paths = oraclePaths();
  if (!existsSync(paths.kubeconfig)) throw new FlagError('no --kubeconfig, and the oracle is not up (npm run oracle -- up), whose kubeconfig is the default');
  return rerunInOracle(SELF, [...argv, '--kubeconfig', paths.kubeconfig]);
}

runScript(() => main(process.argv.slice(2)));
