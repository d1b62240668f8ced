/**
 * `fleetsim conformance cluster --kubeconfig FILE`: the same scenarios (creating fleets, scaling,
 * allocating, autoscaling, deleting, bad manifests; reserving through the game server's own port)
 * run through kubectl against the user's cluster and against a reference fleetsim this command
 * starts; the outcomes are compared step by step.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FeatureGate, type FeatureGates, parseFeatureGates } from '../../server/features.js';
import { FlagError, type FlagSpec, flagsHelp, parseDuration, parseFlags } from '../../server/flags.js';
import { readInputFile, whyUnreadable } from '../../server/input-file.js';
import { REPO_ROOT, runFolder } from '../../loadtest/paths.js';
import { type RunningFleetsim, startFleetsim } from '../../loadtest/servers.js';
import { kubeconfigText } from '../../server/k8s/kubeconfig.js';
import { type ConformanceRun, conformanceExitCode, conformanceJunit, conformanceSummary, writeConformanceReport } from '../../reports/conformance-report.js';
import { CaseFileError, type KnownDifference, parseKnownDifferences } from '../sidecar/cases.js';
import { KubectlCluster } from './kubectl.js';
import { runScenarios } from './run-scenarios.js';
import { type Scenario, ScenarioError, loadScenario, scenarioFiles } from './scenario.js';

export const CLUSTER_SCENARIOS_DIR = join(REPO_ROOT, 'conformance', 'cluster-scenarios');
export const CLUSTER_KNOWN_FILE = join(REPO_ROOT, 'conformance', 'cluster-known.yaml');
/** The targets a known difference can name (the sidecar's file names its own). */
const CLUSTER_PROFILES = ['agones'] as const;

const FLAGS: FlagSpec[] = [
  { name: 'kubeconfig', type: 'string', help: "the target cluster's kubeconfig (required; kubectl uses its current context)" },
  { name: 'namespace', alias: 'n', type: 'string', default: 'default', help: 'namespace the scenarios create their objects in (on the target it must exist)' },
  { name: 'scenario', type: 'string', help: 'run only these scenarios (comma-separated names; default all)' },
  { name: 'scenarios', type: 'string', help: 'folder of scenario files (default conformance/cluster-scenarios)' },
  { name: 'known-differences', type: 'string', help: 'file of accepted differences (default conformance/cluster-known.yaml)' },
  { name: 'feature-gates', type: 'string', default: '', help: "the reference's feature gates, A=true&B=false: give the target's" },
  {
    name: 'reference-port-range',
    type: 'string',
    default: '27000-27999',
    help: "host ports the reference's simulated game servers listen on (127.0.0.1): keep them apart from a target on this machine",
  },
  { name: 'timeout', type: 'string', default: '2m', help: 'the longest a wait step polls (a duration: 90s, 2m)' },
  { name: 'junit', type: 'string', help: 'write JUnit XML here (a testcase per step)' },
  { name: 'out', alias: 'o', type: 'string', help: 'report folder (default reports/out/<time>-conformance-cluster)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const CLUSTER_USAGE = `fleetsim conformance cluster --kubeconfig FILE [--namespace NS] [--scenario NAME,…] [--junit FILE] [--out DIR]
  runs the scenarios (conformance/cluster-scenarios/*.yaml) through kubectl on the target cluster and on a
  reference fleetsim serve started for the run, and compares each step's outcome (send steps talk to a
  GameServer's own port: this machine must reach the target's GameServer addresses); exit 0 when all are the
  same or known differences, 1 on an unexpected difference, 2 on bad flags or an unreachable cluster

${flagsHelp(FLAGS)}`;

interface ClusterSettings {
  kubeconfig: string;
  namespace: string;
  scenarios: Scenario[];
  skipped: string[];
  knownFile: string;
  featureGates: string;
  /** The gates --feature-gates names, either way (a known difference may hold only while they are left to their defaults). */
  gatesGiven: Set<string>;
  waitTimeoutMs: number;
  referencePortRange: string;
  junit?: string;
  out: string;
  runId: string;
}

export async function clusterCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(CLUSTER_USAGE);
    return 0;
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument "${positional[0]}" (scenarios are chosen with --scenario NAME,…)`);
  const settings = settingsOf(values);
  const known = knownDifferences(settings.knownFile);
  const target = new KubectlCluster('target', settings.kubeconfig, settings.namespace);
  await checkReachable(target, `--kubeconfig ${settings.kubeconfig}`);

  const started = new Date();
  mkdirSync(settings.out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'fleetsim-conformance-cluster-'));
  let reference: { fleetsim: RunningFleetsim; cluster: KubectlCluster } | undefined;
  // Ctrl-C or SIGTERM: finish the step under way, delete what the run made, then stop.
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.error('stopping: deleting what the run created (once more to leave it as it is)…');
  };
  process.on('SIGINT', stop).on('SIGTERM', stop);
  try {
    reference = await startReference({ ...settings, work, log: join(settings.out, 'reference-serve.log') });
    const referenceCluster = reference.cluster;

    console.log(`fleetsim conformance cluster: run ${settings.runId}, namespace ${settings.namespace}, reference fleetsim serve on ${reference.fleetsim.baseUrl}`);
    for (const skipped of settings.skipped) console.log(`skipped ${skipped}`);
    const result = await runScenarios(settings.scenarios, {
      reference: referenceCluster,
      target,
      runId: settings.runId,
      waitTimeoutMs: settings.waitTimeoutMs,
      known,
      knownContext: { profile: 'agones', gatesGiven: settings.gatesGiven },
      log: (line) => console.log(line),
      stopping: () => stopping,
    });
    const run: ConformanceRun = {
      command: 'fleetsim conformance cluster',
      target: `${settings.kubeconfig} (namespace ${settings.namespace})`,
      reference: `fleetsim serve${settings.featureGates ? ` --feature-gates ${settings.featureGates}` : ''}`,
      startedAt: started.toISOString(),
      seconds: (Date.now() - started.getTime()) / 1000,
      knownDifferences: Object.fromEntries(known.map((entry) => [entry.id, entry.about])),
      outcomes: result.outcomes,
    };
    writeConformanceReport(settings.out, run);
    if (settings.junit) writeFileSync(settings.junit, conformanceJunit(run));
    console.log(`\n${conformanceSummary(run)}\nreport: ${join(settings.out, 'index.html')}${settings.junit ? `, JUnit: ${settings.junit}` : ''}`);
    if (result.leftBehind.length > 0) {
      console.error(`could not delete on the target (delete by hand, namespace ${settings.namespace}):\n  ${result.leftBehind.join('\n  ')}`);
      return 1;
    }
    if (stopping) return 130;
    return conformanceExitCode(result.outcomes);
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await reference?.fleetsim.process.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The reference: a fresh `fleetsim serve` (its log in a file of `work`) with the target's gates, and
 * kubectl pointed at it in `namespace`. Its simulated game servers listen on `referencePortRange`,
 * so send steps reach them as they reach the target's.
 */
export async function startReference(settings: {
  work: string;
  log: string;
  featureGates: string;
  referencePortRange: string;
  namespace: string;
}): Promise<{ fleetsim: RunningFleetsim; cluster: KubectlCluster }> {
  const fleetsim = await startFleetsim({
    dbPath: join(settings.work, 'reference.db'),
    logPath: settings.log,
    nodes: 4,
    maxPods: 110,
    featureGates: settings.featureGates,
    portRange: settings.referencePortRange,
  });
  const kubeconfig = join(settings.work, 'reference.kubeconfig');
  writeFileSync(kubeconfig, kubeconfigText(fleetsim.baseUrl, settings.namespace));
  const cluster = new KubectlCluster('reference', kubeconfig, settings.namespace);
  if (settings.namespace !== 'default') await cluster.run(['create', 'namespace', settings.namespace]);
  return { fleetsim, cluster };
}

function settingsOf(values: Record<string, string | number | boolean | undefined>): ClusterSettings {
  if (values.kubeconfig === undefined) throw new FlagError('--kubeconfig is required: the kubeconfig of the cluster to check');
  const kubeconfig = resolve(String(values.kubeconfig));
  readable(kubeconfig, '--kubeconfig');
  const namespace = String(values.namespace);
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) throw new FlagError(`--namespace: "${namespace}" is not a namespace name`);
  const waitTimeoutMs = parseDuration(String(values.timeout), '--timeout');
  if (waitTimeoutMs < 1000) throw new FlagError('--timeout: at least 1s');
  const referencePortRange = referencePortRangeOf(String(values['reference-port-range']));

  const dir = values.scenarios === undefined ? CLUSTER_SCENARIOS_DIR : resolve(String(values.scenarios));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new FlagError(`--scenarios ${dir}: not a folder`);
  const files = scenarioFiles(dir);
  const wanted = values.scenario === undefined ? [...files.keys()] : String(values.scenario).split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = wanted.filter((name) => !files.has(name));
  if (unknown.length > 0) throw new FlagError(`--scenario: no scenario ${unknown.join(', ')} (there are: ${[...files.keys()].join(', ')})`);
  if (wanted.length === 0) throw new FlagError(`--scenario: no scenarios to run${values.scenario === undefined ? ` in ${dir}` : ''}`);

  const knownFile = values['known-differences'] === undefined ? CLUSTER_KNOWN_FILE : resolve(String(values['known-differences']));
  readable(knownFile, '--known-differences');
  const featureGates = String(values['feature-gates']);
  let gates: FeatureGates;
  try {
    gates = parseFeatureGates(featureGates);
  } catch (error) {
    throw new FlagError(`--feature-gates: ${error instanceof Error ? error.message : String(error)}`);
  }
  const runId = `cf${randomBytes(4).toString('hex').slice(0, 6)}`;
  const scenarios: Scenario[] = [];
  const skipped: string[] = [];
  for (const name of wanted) {
    let scenario: Scenario;
    try {
      scenario = loadScenario(files.get(name)!, runId);
    } catch (error) {
      if (error instanceof ScenarioError) throw new FlagError(`--scenarios: ${error.message}`);
      throw error;
    }
    const unknownGate = scenario.gates.find((gate) => !Object.hasOwn(gates, gate));
    if (unknownGate !== undefined) throw new FlagError(`--scenarios: ${name}.yaml: gates: "${unknownGate}" is not a feature gate`);
    const off = scenario.gates.filter((gate) => !gates[gate as FeatureGate]);
    if (off.length > 0) skipped.push(`${name}: needs --feature-gates ${off.map((gate) => `${gate}=true`).join('&')}`);
    else scenarios.push(scenario);
  }
  return {
    kubeconfig,
    namespace,
    scenarios,
    skipped,
    knownFile,
    featureGates,
    gatesGiven: new Set(featureGates.split('&').filter((pair) => pair !== '').map((pair) => decodeURIComponent(pair.split('=')[0]!))),
    waitTimeoutMs,
    referencePortRange,
    ...(values.junit !== undefined && { junit: resolve(String(values.junit)) }),
    out: values.out === undefined ? runFolder('conformance-cluster') : resolve(String(values.out)),
    runId,
  };
}

/** --reference-port-range, checked: a range of unprivileged ports. */
export function referencePortRangeOf(text: string): string {
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (!range || !(Number(range[1]) >= 1024 && Number(range[2]) >= Number(range[1]) && Number(range[2]) <= 65535)) {
    throw new FlagError(`--reference-port-range: "${text}" is not a range of ports like 27000-27999 (1024 to 65535)`);
  }
  return text;
}

export function knownDifferences(file: string): KnownDifference[] {
  try {
    return parseKnownDifferences(file, readInputFile(file), CLUSTER_PROFILES);
  } catch (error) {
    if (error instanceof CaseFileError) throw new FlagError(`--known-differences: ${error.message}`);
    throw error;
  }
}

function readable(file: string, flag: string): void {
  try {
    readInputFile(file);
  } catch (error) {
    throw new FlagError(`${flag} ${file}: cannot read it (${whyUnreadable(error)})`);
  }
}

/** Before anything runs: the cluster answers through the kubeconfig and serves Agones's Fleets. */
export async function checkReachable(cluster: KubectlCluster, what: string): Promise<void> {
  const found = await cluster.run(['get', 'fleets.agones.dev', '-o', 'name', '--request-timeout', '15s'], '', 30_000);
  if (found.code !== 0) {
    const why = found.stderr.trim().split('\n').at(-1) ?? `kubectl exited ${found.code}`;
    throw new FlagError(`${what}: kubectl cannot read Fleets there (is the cluster up, with Agones installed?): ${why}`);
  }
}
