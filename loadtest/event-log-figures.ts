import Database from 'better-sqlite3';
import type { FleetSample } from '../reports/run-data.js';
import type { FeatureGates } from '../server/features.js';
import { EventLog } from '../server/log/event-log.js';
import { ReadModel } from '../server/runtime/read-model.js';

/**
 * Figures read from a finished run's event log (the server has stopped; the file is opened
 * read-only): how many events were committed, and the fleet's size over time, rebuilt by folding
 * the log once through the same reducers the live server used.
 */

/** Events committed with a time in [fromMs, toMs] (server clock, ms since the epoch). */
export function countEvents(dbPath: string, fromMs?: number, toMs?: number): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db
      .prepare('SELECT COUNT(*) AS n FROM events WHERE time >= @from AND time <= @to')
      .get({ from: fromMs ?? 0, to: toMs ?? Number.MAX_SAFE_INTEGER }) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

interface FleetStatus {
  replicas?: number;
  readyReplicas?: number;
  allocatedReplicas?: number;
}

function sampleOf(model: ReadModel, t: number, fleet: { namespace: string; name: string } | undefined): FleetSample {
  if (fleet) {
    const status = (model.get('Fleet', fleet.namespace, fleet.name)?.status ?? {}) as FleetStatus;
    return { t, replicas: status.replicas ?? 0, ready: status.readyReplicas ?? 0, allocated: status.allocatedReplicas ?? 0 };
  }
  // No fleet (game servers made one by one): count every GameServer that is not gone.
  let replicas = 0;
  let ready = 0;
  let allocated = 0;
  for (const gs of model.gameServers.values()) {
    const state = gs.status.state;
    if (state === 'Shutdown') continue;
    replicas++;
    if (state === 'Ready') ready++;
    else if (state === 'Allocated') allocated++;
  }
  return { t, replicas, ready, allocated };
}

/**
 * The fleet's replicas / ready / allocated at every whole second from `fromMs` to `toMs`
 * (t = seconds since `fromMs`), each taken from the state after every event up to that instant.
 * Without a fleet, all GameServers of the cluster are counted.
 */
export function fleetOverTime(
  dbPath: string,
  options: { fromMs: number; toMs: number; gates: FeatureGates; fleet?: { namespace: string; name: string } },
): FleetSample[] {
  const log = new EventLog(dbPath, { readonly: true });
  const model = new ReadModel(options.gates);
  const samples: FleetSample[] = [];
  let next = options.fromMs;
  let t = 0;
  try {
    for (const event of log.read()) {
      while (event.time > next && next <= options.toMs) {
        samples.push(sampleOf(model, t++, options.fleet));
        next += 1000;
      }
      if (next > options.toMs) break;
      model.apply(event);
    }
    while (next <= options.toMs) {
      samples.push(sampleOf(model, t++, options.fleet));
      next += 1000;
    }
  } finally {
    log.close();
  }
  return samples;
}
