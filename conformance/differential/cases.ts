import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from '../../loadtest/paths.js';
import { type CaseOutcome } from '../../reports/conformance-report.js';
import { type KnownContext, type KnownDifference } from '../sidecar/cases.js';
import { type KubectlCluster } from '../cluster/kubectl.js';
import { judge, safely } from '../cluster/run-scenarios.js';
import { type Scenario, ScenarioError, isObject, loadScenario, scenarioFiles } from '../cluster/scenario.js';
import { ClusterSteps } from '../cluster/steps.js';
import { type Operation, sequenceScenarioText } from './generate.js';

/**
 * Regression cases of the differential tester: a sequence that made fleetsim and real Agones
 * differ, shrunk, saved as a cluster scenario with what the oracle answered at each step
 * (normalized). `npm test` replays each against fleetsim alone and compares it with the oracle's
 * answers; `conformance cluster --scenarios conformance/differential-cases` runs them against both.
 */

export const DIFFERENTIAL_CASES_DIR = join(REPO_ROOT, 'conformance', 'differential-cases');

export interface RecordedCase {
  name: string;
  file: string;
  /** The gates both clusters had (fleetsim's `--feature-gates`). */
  featureGates: string;
  /** Step name → the oracle's normalized outcome. */
  oracle: Map<string, unknown>;
}

export interface CaseRecord {
  description: string;
  featureGates: string;
  operations: readonly Operation[];
  /** What the oracle was (Agones's and Kubernetes's versions) and when. */
  recorded: string;
  outcomes: readonly CaseOutcome[];
}

/** Writes the case `name` (a file `name.yaml` in `dir`), the oracle's outcomes beside its steps. */
export function writeCase(dir: string, name: string, record: CaseRecord): string {
  const file = join(dir, `${name}.yaml`);
  const oracle = { recorded: record.recorded, outcomes: Object.fromEntries(record.outcomes.map((outcome) => [outcome.name, outcome.target ?? null])) };
  const text = sequenceScenarioText(name, record.description, record.operations, { featureGates: record.featureGates });
  writeFileSync(file, `${text}${stringify({ oracle }, { lineWidth: 0, aliasDuplicateObjects: false })}`);
  return file;
}

/** The saved cases of a folder, by name (none while the folder does not exist). */
export function caseFiles(dir = DIFFERENTIAL_CASES_DIR): Map<string, string> {
  return existsSync(dir) ? scenarioFiles(dir) : new Map();
}

/** A case's gates and the oracle's outcomes, read as written (`${run}` left as it is, as outcomes are normalized). */
export function readCase(file: string, name: string): RecordedCase {
  const doc = parse(readFileSync(file, 'utf8')) as unknown;
  const where = `${name}.yaml`;
  if (!isObject(doc) || !isObject(doc.oracle) || !isObject(doc.oracle.outcomes)) throw new ScenarioError(`${where}: oracle.outcomes (the oracle's outcome of each step) is missing`);
  if (doc.featureGates !== undefined && typeof doc.featureGates !== 'string') throw new ScenarioError(`${where}: featureGates must be a string (A=true&B=false)`);
  return { name, file, featureGates: (doc.featureGates as string | undefined) ?? '', oracle: new Map(Object.entries(doc.oracle.outcomes)) };
}

export interface ReplaySettings {
  cluster: KubectlCluster;
  runId: string;
  waitTimeoutMs: number;
  known: readonly KnownDifference[];
  knownContext: KnownContext;
}

/**
 * Runs a case's steps on one cluster and judges each outcome against the oracle's (fleetsim's side
 * is the reference, as in `conformance cluster`); deletes what it created at the end.
 */
export async function replayCase(recorded: RecordedCase, settings: ReplaySettings): Promise<{ outcomes: CaseOutcome[]; leftBehind: string[] }> {
  const scenario: Scenario = loadScenario(recorded.file, settings.runId);
  const missing = scenario.steps.find((step) => !recorded.oracle.has(step.name));
  if (missing) throw new ScenarioError(`${recorded.name}.yaml: oracle.outcomes has no outcome for step "${missing.name}"`);
  const steps = new ClusterSteps(settings.cluster, settings.runId, settings.waitTimeoutMs);
  const outcomes: CaseOutcome[] = [];
  try {
    for (const step of scenario.steps) {
      const outcome = await safely(() => steps.run(step));
      outcomes.push(judge(recorded.name, step.name, outcome, recorded.oracle.get(step.name), settings.known, settings.knownContext));
    }
  } catch (error) {
    await steps.cleanup();
    throw error;
  }
  return { outcomes, leftBehind: await steps.cleanup() };
}
