import { resolve, join, basename } from 'node:path';
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../flags.js';
import { runSimulations } from '../simulation/runs.js';
import { ScenarioError } from '../simulation/fields.js';
import { parseVary } from '../simulation/vary.js';
import { REPORTS_OUT } from '../../loadtest/paths.js';

const FLAGS: FlagSpec[] = [
  { name: 'out', type: 'string', help: 'report folder (default reports/out/<timestamp>-simulate-<scenario>/)' },
  { name: 'vary', type: 'string', help: "one run per value, e.g. 'autoscaler.buffer.bufferSize=5,10,20,50%'" },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const SIMULATE_USAGE = `fleetsim simulate <scenario.yaml> [more.yaml …]: a what-if run on the virtual clock, as fast as the machine allows

  Runs the scenario's fleets, autoscalers and nodes with the real controllers and allocator against
  its simulated players, and writes summary.json, summary.md, index.html and the run's log
  (fleetsim.db: replay it, or fleetsim explain --db it). With --vary or several files, each variant
  runs with the same seed and players, and a comparison page puts them side by side.
  Examples: examples/simulate/.

${flagsHelp(FLAGS)}`;

function timestamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

export async function simulateCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  if (values.help) {
    console.log(SIMULATE_USAGE);
    return 0;
  }
  if (positional.length === 0) throw new FlagError('simulate needs a scenario file, e.g. fleetsim simulate examples/simulate/diurnal.yaml');
  const vary = values.vary === undefined ? undefined : parseVary(String(values.vary));
  if (vary && positional.length > 1) throw new FlagError('--vary varies one scenario: give one file, or several files and no --vary');
  const name = basename(positional[0]!).replace(/\.ya?ml$/, '');
  const out = values.out !== undefined ? resolve(String(values.out)) : join(REPORTS_OUT, `${timestamp(new Date())}-simulate-${name}`);
  try {
    await runSimulations({ files: positional, vary, out, log: (line) => console.log(line) });
  } catch (error) {
    if (error instanceof ScenarioError) {
      console.error(`fleetsim simulate: ${error.message}`);
      return 2;
    }
    throw error;
  }
  return 0;
}
