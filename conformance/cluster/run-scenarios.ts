import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { type CaseOutcome, firstDifference } from '../../reports/conformance-report.js';
import { type KubectlCluster } from './kubectl.js';
import { type Scenario, ScenarioError, isObject } from './scenario.js';
import { ClusterSteps, type StepOutcome } from './steps.js';

/**
 * Runs scenarios on the reference and the target side by side: each step on both at once, the
 * next step when both have answered; then each scenario deletes what it created on both, also
 * when a step failed.
 */

/** A difference known and accepted, named once in the known-differences file. */
export interface KnownDifference {
  id: string;
  scenario: string;
  /** The step's name, or `*` for every step of the scenario. */
  step: string;
  why: string;
}

export function loadKnownDifferences(file: string): KnownDifference[] {
  const doc = parse(readFileSync(file, 'utf8')) as unknown;
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc)) throw new ScenarioError(`${file}: a list of known differences ({id, scenario, step, why})`);
  const ids = new Set<string>();
  return doc.map((entry, index) => {
    const at = `${file} entry ${index + 1}`;
    if (!isObject(entry)) throw new ScenarioError(`${at}: a mapping {id, scenario, step, why}`);
    for (const key of ['id', 'scenario', 'step', 'why'] as const) {
      if (typeof entry[key] !== 'string' || entry[key] === '') throw new ScenarioError(`${at}: ${key} is missing`);
    }
    const known = entry as unknown as KnownDifference;
    if (ids.has(known.id)) throw new ScenarioError(`${at}: the id ${known.id} is used twice`);
    ids.add(known.id);
    return known;
  });
}

export interface RunSettings {
  reference: KubectlCluster;
  target: KubectlCluster;
  runId: string;
  waitTimeoutMs: number;
  known: readonly KnownDifference[];
  /** A line of progress for the terminal. */
  log: (line: string) => void;
}

export interface ScenariosResult {
  outcomes: CaseOutcome[];
  /** Objects a scenario could not delete, per cluster, for the user to delete by hand. */
  leftBehind: string[];
}

export async function runScenarios(scenarios: readonly Scenario[], settings: RunSettings): Promise<ScenariosResult> {
  const outcomes: CaseOutcome[] = [];
  const leftBehind: string[] = [];
  for (const scenario of scenarios) {
    settings.log(`${scenario.name}:`);
    const reference = new ClusterSteps(settings.reference, settings.runId, settings.waitTimeoutMs);
    const target = new ClusterSteps(settings.target, settings.runId, settings.waitTimeoutMs);
    try {
      for (const step of scenario.steps) {
        const [onReference, onTarget] = await Promise.all([safely(() => reference.run(step)), safely(() => target.run(step))]);
        const outcome = judge(scenario.name, step.name, onReference, onTarget, settings.known);
        outcomes.push(outcome);
        settings.log(`  ${outcome.verdict.padEnd(9)} ${step.name}${outcome.detail ? `: ${outcome.detail}` : ''}`);
      }
    } finally {
      const [onReference, onTarget] = await Promise.all([reference.cleanup(), target.cleanup()]);
      leftBehind.push(...onReference.map((ref) => `${settings.reference.label}: ${ref}`), ...onTarget.map((ref) => `${settings.target.label}: ${ref}`));
    }
  }
  return { outcomes, leftBehind };
}

/** A step that could not run at all (kubectl missing, a reply that is not JSON) is an outcome too. */
async function safely(run: () => Promise<StepOutcome>): Promise<StepOutcome> {
  try {
    return await run();
  } catch (error) {
    return { failed: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

export function judge(area: string, name: string, reference: unknown, target: unknown, known: readonly KnownDifference[]): CaseOutcome {
  const detail = firstDifference(reference, target);
  if (detail === undefined) return { area, name, verdict: 'same', reference, target };
  const accepted = known.find((entry) => entry.scenario === area && (entry.step === name || entry.step === '*'));
  if (accepted) return { area, name, verdict: 'known', known: accepted.id, reference, target, detail };
  return { area, name, verdict: 'different', reference, target, detail };
}
