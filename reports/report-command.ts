/**
 * `fleetsim report`: render a load-test run's report, or compare two runs.
 */
import { FlagError, type FlagSpec, flagsHelp, parseFlags } from '../server/flags.js';
import { compareRuns, defaultCompareDir } from './compare.js';
import { RUN_REPORT_FILES, renderRun } from './render.js';

const FLAGS: FlagSpec[] = [
  { name: 'out', alias: 'o', type: 'string', help: 'compare: folder for index.html and compare.md (default: beside A, compare-A-vs-B)' },
  { name: 'help', alias: 'h', type: 'boolean', default: false, help: 'show this help' },
];

export const REPORT_USAGE = `fleetsim report: load-test reports
  fleetsim report render <run-dir>...           write ${RUN_REPORT_FILES.join(', ')} from <run-dir>/run.json
  fleetsim report compare <run-a> <run-b> [--out DIR]
                                                compare two runs: an HTML page in DIR, the Markdown table on stdout

${flagsHelp(FLAGS)}`;

export async function reportCommand(argv: string[]): Promise<number> {
  const { values, positional } = parseFlags(argv, FLAGS, {});
  const [action, ...dirs] = positional;
  if (values.help) {
    console.log(REPORT_USAGE);
    return 0;
  }
  switch (action) {
    case 'render': {
      if (dirs.length === 0) throw new FlagError('render needs a run folder: fleetsim report render <run-dir>');
      if (values.out !== undefined) throw new FlagError('--out is for compare; render writes into the run folder');
      for (const dir of dirs) {
        await renderRun(dir);
        console.log(`${dir}: wrote ${RUN_REPORT_FILES.join(', ')}`);
      }
      return 0;
    }
    case 'compare': {
      if (dirs.length !== 2) throw new FlagError('compare needs two run folders: fleetsim report compare <run-a> <run-b>');
      const [a, b] = dirs as [string, string];
      const out = values.out === undefined ? defaultCompareDir(a, b) : String(values.out);
      process.stdout.write(await compareRuns(a, b, out));
      console.error(`wrote ${out}/index.html and compare.md`);
      return 0;
    }
    case undefined:
      console.error(REPORT_USAGE);
      return 2;
    default:
      throw new FlagError(`unknown report action "${action}": render or compare`);
  }
}
