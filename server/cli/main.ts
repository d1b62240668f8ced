import { FlagError } from '../flags.js';

type Command = (argv: string[]) => number | Promise<number>;

/**
 * Each command is loaded when it runs: `fleetsim sidecar` then holds only what a sidecar needs,
 * not the control plane, the dashboard and the load-test harness.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve-command.js')).serveCommand,
  sidecar: async () => (await import('./sidecar-command.js')).sidecarCommand,
  replay: async () => (await import('./replay-command.js')).replayCommand,
  explain: async () => (await import('./explain-command.js')).explainCommand,
  simulate: async () => (await import('./simulate-command.js')).simulateCommand,
  bench: async () => (await import('../../loadtest/bench-command.js')).benchCommand,
  report: async () => (await import('../../reports/report-command.js')).reportCommand,
  conformance: async () => (await import('./conformance-command.js')).conformanceCommand,
};

async function usage(): Promise<string> {
  const [serve, sidecar, replay, explain, simulate] = await Promise.all([
    import('./serve-command.js'),
    import('./sidecar-command.js'),
    import('./replay-command.js'),
    import('./explain-command.js'),
    import('./simulate-command.js'),
  ]);
  return `fleetsim: an event-sourced stand-in for an Agones game-server cluster

Commands:
  serve     run the simulated cluster (the main job)
  sidecar   run one GameServer's sidecar (REST, WebSocket, gRPC), like sdk-server --local
  replay    rebuild state from an event log file
  explain   an object's history from the log, and why each change happened (fleetsim explain fleet/NAME)
  simulate  a what-if day (or week) on the virtual clock: failures, waiting and cost of a scenario (fleetsim simulate --help)
  bench     run a k6 load-test scenario against a fresh fleetsim and write a report (fleetsim bench --help)
  conformance  check a sidecar (or cluster) against a reference fleetsim (fleetsim conformance --help)

${serve.SERVE_USAGE}

${sidecar.SIDECAR_USAGE}

${replay.REPLAY_USAGE}

${explain.EXPLAIN_USAGE}

${simulate.SIMULATE_USAGE}`;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const load = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (load) return await (await load())(rest);
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      console.log(await usage());
      return command === undefined ? 2 : 0;
    }
    console.error(`fleetsim: unknown command "${command}"\n\n${await usage()}`);
    return 2;
  } catch (error) {
    if (error instanceof FlagError) {
      console.error(`fleetsim ${command}: ${error.message}`);
      return 2;
    }
    console.error(`fleetsim ${command}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
