import { FlagError } from '../flags.js';
import { EXPLAIN_USAGE, explainCommand } from './explain-command.js';
import { REPLAY_USAGE, replayCommand } from './replay-command.js';
import { reportCommand } from '../../reports/report-command.js';
import { SIDECAR_USAGE, sidecarCommand } from './sidecar-command.js';
import { SERVE_USAGE, serveCommand } from './serve-command.js';
import { SIMULATE_USAGE, simulateCommand } from './simulate-command.js';

const USAGE = `fleetsim: an event-sourced stand-in for an Agones game-server cluster

Commands:
  serve     run the simulated cluster (the main job)
  sidecar   run one GameServer's sidecar (REST, WebSocket, gRPC), like sdk-server --local
  replay    rebuild state from an event log file
  explain   an object's history from the log, and why each change happened (fleetsim explain fleet/NAME)
  simulate  a what-if day (or week) on the virtual clock: failures, waiting and cost of a scenario (fleetsim simulate --help)
  bench     run a k6 load-test scenario against a fresh fleetsim and write a report (fleetsim bench --help)

${SERVE_USAGE}

${SIDECAR_USAGE}

${REPLAY_USAGE}

${EXPLAIN_USAGE}

${SIMULATE_USAGE}`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(rest);
      case 'sidecar':
        return await sidecarCommand(rest);
      case 'replay':
        return replayCommand(rest);
      case 'explain':
        return await explainCommand(rest);
      case 'simulate':
        return await simulateCommand(rest);
      case 'bench':
        return await (await import('../../loadtest/bench-command.js')).benchCommand(rest);
      case 'report': return await reportCommand(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        console.error(`fleetsim: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof FlagError) {
      console.error(`fleetsim ${command}: ${error.message}`);
      return 2;
    }
    console.error(`fleetsim ${command}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
