import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlagError, closest } from '../flags.js';
import { REPO_ROOT } from '../../loadtest/paths.js';

type Command = (argv: string[]) => number | Promise<number>;

/**
 * Each command is loaded when it runs: `fleetsim sidecar` then holds only what a sidecar needs,
 * not the control plane, the dashboard and the load-test harness.
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  serve: {
    summary: 'run the simulated cluster: resource API, sidecars, controllers, event log (the main job)',
    load: async () => (await import('./serve-command.js')).serveCommand,
  },
  sidecar: {
    summary: "run one GameServer's sidecar (REST, WebSocket, gRPC), like sdk-server --local",
    load: async () => (await import('./sidecar-command.js')).sidecarCommand,
  },
  replay: {
    summary: 'rebuild the state an event log describes, or list one GameServer\'s events',
    load: async () => (await import('./replay-command.js')).replayCommand,
  },
  explain: {
    summary: "an object's history from the log, and why each change happened",
    load: async () => (await import('./explain-command.js')).explainCommand,
  },
  record: {
    summary: 'watch a live Agones cluster and write what it does into an event log, to replay, explain and simulate',
    load: async () => (await import('./record-command.js')).recordCommand,
  },
  simulate: {
    summary: 'a what-if day (or week) on the virtual clock: failures, waiting and cost of a scenario',
    load: async () => (await import('./simulate-command.js')).simulateCommand,
  },
  bench: {
    summary: 'run a k6 load-test scenario against a fresh fleetsim and write a report',
    load: async () => (await import('../../loadtest/bench-command.js')).benchCommand,
  },
  report: {
    summary: "render a load-test run's report, or compare two runs",
    load: async () => (await import('../../reports/report-command.js')).reportCommand,
  },
  conformance: {
    summary: 'check a sidecar (or a cluster) against a reference fleetsim',
    load: async () => (await import('./conformance-command.js')).conformanceCommand,
  },
};

const USAGE = `fleetsim: an event-sourced stand-in for an Agones game-server cluster

Usage: fleetsim <command> [flags]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`)
  .join('\n')}

fleetsim <command> --help lists a command's flags; fleetsim --version prints the version.
Exit status: 0 done, 1 not found or failed, 2 a usage error.`;

const HELP = new Set(['help', '--help', '-h']);

function version(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    console.error(USAGE);
    return 2;
  }
  if (command === '--version') {
    console.log(`fleetsim ${version()}`);
    return 0;
  }
  // `fleetsim help serve` is `fleetsim serve --help`.
  if (HELP.has(command) && (rest[0] === undefined || !Object.hasOwn(COMMANDS, rest[0]))) {
    console.log(USAGE);
    return 0;
  }
  const [name, args] = HELP.has(command) ? [rest[0]!, ['--help']] : [command, rest];
  if (!Object.hasOwn(COMMANDS, name)) {
    const flag = name.startsWith('-');
    const near = flag ? closest(name.replace(/^-+/, ''), ['version', 'help']) : closest(name, Object.keys(COMMANDS));
    const what = flag ? `unknown flag ${name}` : `unknown command "${name}"`;
    const guess = near === undefined ? '' : flag ? `did you mean --${near}? ` : `did you mean "${near}"? `;
    console.error(`fleetsim: ${what} (${guess}fleetsim --help lists the commands)`);
    return 2;
  }
  try {
    return await (await COMMANDS[name]!.load())(args);
  } catch (error) {
    if (error instanceof FlagError) {
      console.error(`fleetsim ${name}: ${error.message}`);
      return 2;
    }
    console.error(`fleetsim ${name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
