import { type CaseOutcome, differences } from '../../reports/conformance-report.js';
import { type KnownContext, type KnownDifference, knownDifferenceFor } from '../sidecar/cases.js';
import { type KubectlCluster } from './kubectl.js';
import { type Scenario } from './scenario.js';
import { ClusterSteps, type StepOutcome } from './steps.js';

/**
 * Runs scenarios on the reference and the target side by side: each step on both at once, the
 * next step when both have answered; then each scenario deletes what it created on both, also
 * when a step failed.
 */

export interface RunSettings {
  reference: KubectlCluster;
  target: KubectlCluster;
  runId: string;
  waitTimeoutMs: number;
  /** Known differences (the sidecar's format: `cases` are `scenario/step` patterns). */
  known: readonly KnownDifference[];
  knownContext: KnownContext;
  /** A line of progress for the terminal. */
  log: (line: string) => void;
  /** True once the user asked to stop (Ctrl-C): no further step runs, but cleaning up does. */
  stopping?: () => boolean;
}

export interface ScenariosResult {
  outcomes: CaseOutcome[];
  /** Objects a scenario could not delete on the target, for the user to delete by hand (the reference is thrown away). */
  leftBehind: string[];
}

export async function runScenarios(scenarios: readonly Scenario[], settings: RunSettings): Promise<ScenariosResult> {
  const outcomes: CaseOutcome[] = [];
  const leftBehind: string[] = [];
  for (const scenario of scenarios) {
    if (settings.stopping?.()) break;
    settings.log(`${scenario.name}:`);
    const reference = new ClusterSteps(settings.reference, settings.runId, settings.waitTimeoutMs);
    const target = new ClusterSteps(settings.target, settings.runId, settings.waitTimeoutMs);
    try {
      for (const step of scenario.steps) {
        if (settings.stopping?.()) break;
        const [onReference, onTarget] = await Promise.all([safely(() => reference.run(step)), safely(() => target.run(step))]);
        const outcome = judge(scenario.name, step.name, onReference, onTarget, settings.known, settings.knownContext);
        outcomes.push(outcome);
        settings.log(`  ${outcome.verdict.padEnd(9)} ${step.name}${outcome.detail ? `: ${outcome.detail}` : ''}`);
      }
    } finally {
      const [, onTarget] = await Promise.all([reference.cleanup(), target.cleanup()]);
      leftBehind.push(...onTarget);
    }
  }
  return { outcomes, leftBehind };
}

/** A step that could not run at all (kubectl missing, a reply that is not JSON) is an outcome too. */
export async function safely(run: () => Promise<StepOutcome>): Promise<StepOutcome> {
  try {
    return await run();
  } catch (error) {
    return { failed: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** same, known (every difference covered by a known one) or different, with the first difference that matters. */
export function judge(area: string, name: string, reference: unknown, target: unknown, known: readonly KnownDifference[], context: KnownContext): CaseOutcome {
  const found = differences(reference, target).map((d) => ({ ...d, known: knownDifferenceFor(known, context, area, name, d.path) }));
  if (found.length === 0) return { area, name, verdict: 'same', reference, target };
  const unexpected = found.find((d) => !d.known);
  if (unexpected) return { area, name, verdict: 'different', reference, target, detail: unexpected.text };
  const ids = [...new Set(found.map((d) => d.known!.id))];
  return { area, name, verdict: 'known', known: ids.join(', '), reference, target, detail: found[0]!.text };
}
