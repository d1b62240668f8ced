import { existsSync } from 'node:fs';
import { FlagError } from '../flags.js';
import { EventLog } from '../log/event-log.js';
import { setLogAside } from '../log/log-file.js';
import { NODE_KIND } from '../sim/nodes.js';
import { type LoggedNode, type NodeFlags, loggedNodes, nodeFlagsConflict } from '../sim/log-nodes.js';

/** What a log holds when serve opens it. */
interface LogSummary {
  events: number;
  /** The last event's time (ms since the epoch); undefined for an empty log. */
  lastTime: number | undefined;
  nodes: LoggedNode[];
}

function summarize(path: string): LogSummary {
  let log: EventLog;
  try {
    log = new EventLog(path, { readonly: true });
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  try {
    const last = log.bounds()?.last;
    return { events: last?.seq ?? 0, lastTime: last?.time, nodes: loggedNodes(log.read({ kind: NODE_KIND })) };
  } finally {
    log.close();
  }
}

/** How far a real-clock log's last event may lie ahead of the wall clock (a clock set back a little). */
const CLOCK_SKEW_MS = 60_000;

/**
 * serve's log before anything replays it (the caller holds its writer lock): `--fresh` moves an
 * old one aside; the banner says whether it resumes a log or starts a new one; flags that describe
 * another world than the log's are refused (FlagError) before anything is written. Returns the
 * time a virtual clock continues from: the log's last event's.
 */
export function openServeLog(
  db: string,
  options: { fresh: boolean; clock: 'real' | 'virtual'; nodeFlags: NodeFlags },
  say: (line: string) => void,
): { lastTime: number | undefined } {
  if (options.fresh && existsSync(db)) {
    const { events } = summarize(db);
    say(`--fresh: kept the old log (${events} events) as ${setLogAside(db, new Date())}`);
  }
  const found = existsSync(db) ? summarize(db) : undefined;
  if (found === undefined || found.lastTime === undefined) {
    say(`new log ${db}`);
    return { lastTime: undefined };
  }
  say(`resuming ${db}: ${found.events} events, last at ${new Date(found.lastTime).toISOString()}`);
  const conflict = nodeFlagsConflict(found.nodes, options.nodeFlags);
  if (conflict) throw new FlagError(conflict);
  if (options.clock === 'real' && found.lastTime > Date.now() + CLOCK_SKEW_MS) {
    throw new FlagError(
      `--clock real: the log's last event is at ${new Date(found.lastTime).toISOString()}, ahead of the wall clock (a virtual clock moved it there): resume it with --clock virtual, or add --fresh to start a new log`,
    );
  }
  return { lastTime: found.lastTime };
}

/**
 * A failed write to the log stops the process: one line naming the log and the cause, then
 * `stop`. SQLite rolled the transaction back, so the log holds what was committed before it.
 */
export function stopOnLogFailure(log: EventLog, command: string, stop: () => void): void {
  log.onFailed = (error, firstLost) => {
    console.error(`fleetsim ${command}: writing the event log ${log.path} failed (${error.message}): it keeps the events before #${firstLost}, nothing of the failed write; stopping`);
    // Whatever waited on that write fails with it: said once, above.
    process.on('uncaughtException', () => undefined);
    process.on('unhandledRejection', () => undefined);
    setTimeout(() => process.exit(1), 15_000).unref();
    stop();
  };
}
