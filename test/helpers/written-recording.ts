import type { ObservedCause } from '../../server/log/cause.js';
import { EventLog } from '../../server/log/event-log.js';
import { recordingStarted, recordingStopped } from '../../server/history/recording-log.js';
import type { KubeObject } from '../../server/record/kube-client.js';
import { WATCHED_KINDS, observationEvents } from '../../server/record/observe.js';
import { RecordedState } from '../../server/record/recorded-state.js';

const MINUTE = 60_000;

/**
 * A recording written as `fleetsim record` writes one — the same observation events, causes and
 * markers — from changes a test says it saw, minute by minute, on cluster `prod`.
 */
export class WrittenRecording {
  private readonly log: EventLog;
  private readonly state = new RecordedState();
  private resourceVersion = 0;

  constructor(
    readonly path: string,
    private readonly startMs: number,
  ) {
    this.log = new EventLog(path);
    this.log.append([recordingStarted({ cluster: 'prod', context: 'prod', server: 'https://x', namespaces: null, kinds: [], clock: 'local' })], startMs, {
      type: 'startup',
      detail: 'test',
    });
  }

  /** Records `object` of `kind` as seen at `minute` (no object: `name` deleted); `appeared`: it came up while recording. */
  see(minute: number, kind: string, name: string, object: KubeObject | undefined, appeared = minute > 0): void {
    const watched = WATCHED_KINDS.find((k) => k.kind === kind)!;
    const namespace = watched.namespaced ? 'default' : '';
    const previous = this.state.get(kind, namespace, name)?.object;
    const { events, said } = observationEvents(watched, previous, object, appeared);
    const time = this.startMs + minute * MINUTE;
    const cause: ObservedCause = {
      type: 'observed',
      cluster: 'prod',
      context: 'prod',
      resourceVersion: String(++this.resourceVersion),
      observedAt: new Date(time).toISOString(),
      via: 'watch',
      ...(said !== undefined && { said }),
    };
    for (const record of this.log.append(events, time, cause).records) this.state.apply(record);
  }

  close(minute: number): void {
    this.log.append([recordingStopped('prod', 'duration')], this.startMs + minute * MINUTE, { type: 'startup', detail: 'test' });
    this.log.close();
  }
}
