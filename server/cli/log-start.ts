import type { EventLog } from '../log/event-log.js';

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
