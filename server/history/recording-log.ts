import type { EventLog, NewEvent } from '../log/event-log.js';

/**
 * A recording (`fleetsim record`) is a fleetsim event log whose first event says so: it names the
 * cluster it was taken from. Each session of the recorder opens with `RecordingStarted` and ends
 * with `RecordingStopped`, so a reader knows the span recorded even when the cluster was quiet at
 * its ends. The markers are of a kind no projection stores: replay, explain and the dashboard
 * pass over them.
 */

export const RECORDING_KIND = 'Recording';
export const RECORDING_STARTED = 'RecordingStarted';
export const RECORDING_STOPPED = 'RecordingStopped';

export interface RecordingStarted {
  /** The kubeconfig's cluster and context, and the API server's URL. */
  cluster: string;
  context: string;
  server: string;
  /** The namespaces recorded; null for all. */
  namespaces: string[] | null;
  /** The kinds watched (`Fleet`, `GameServer`…). */
  kinds: string[];
  /** Whose clock the events' times are: the cluster's (a fleetsim on a virtual clock) or the recorder's machine's. */
  clock: 'cluster' | 'local';
}

export interface RecordingStopped {
  /** Why: `interrupted` (Ctrl-C, SIGTERM), `duration` (--duration elapsed). */
  reason: string;
}

export function recordingStarted(payload: RecordingStarted): NewEvent<RecordingStarted> {
  return { type: RECORDING_STARTED, kind: RECORDING_KIND, namespace: '', name: payload.context, payload };
}

export function recordingStopped(context: string, reason: string): NewEvent<RecordingStopped> {
  return { type: RECORDING_STOPPED, kind: RECORDING_KIND, namespace: '', name: context, payload: { reason } };
}

/** What the log's first event says of the recording, or undefined when the log is not one (or empty). */
export function recordingOf(log: EventLog): RecordingStarted | undefined {
  for (const event of log.read({ fromSeq: 1, toSeq: 1 })) {
    if (event.kind === RECORDING_KIND && event.type === RECORDING_STARTED) return event.payload as RecordingStarted;
  }
  return undefined;
}
