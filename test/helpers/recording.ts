import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeconfigText } from '../../server/k8s/kubeconfig.js';
import { EventLog } from '../../server/log/event-log.js';
import { RecordedState } from '../../server/record/recorded-state.js';
import { listedVersions, recordedVersions } from '../../server/record/compare.js';
import { KubeClient } from '../../server/record/kube-client.js';
import { type CliProcess, startCli } from './process.js';
import { waitFor } from './wait.js';
import { seconds } from './time-scale.js';

/**
 * Recording a `fleetsim serve` that stands in for a live cluster: a kubeconfig that points at it
 * (as kubectl's), `fleetsim record` started on it, and the checks the recording tests share —
 * whether the recording has caught up with the cluster, and whether any change was recorded twice.
 */

/** A kubeconfig for `server` (cluster, user and context named fleetsim), written in `dir`. */
export function writeKubeconfig(dir: string, server: string, name = 'kubeconfig'): string {
  const file = join(dir, name);
  writeFileSync(file, kubeconfigText(server));
  return file;
}

export const RECORDING_LINE = /^recording cluster (\S+) \(context (\S+), (\S+)\) into (\S+): (.*)$/m;

/** Starts `fleetsim record --kubeconfig FILE --db DB …` and waits until it has listed and watches. */
export async function startRecord(kubeconfig: string, db: string, extra: readonly string[] = []): Promise<CliProcess> {
  const p = startCli(['record', '--kubeconfig', kubeconfig, '--db', db, ...extra]);
  try {
    await p.waitForStdout(RECORDING_LINE, seconds(30));
  } catch (error) {
    await p.kill('SIGKILL');
    throw error;
  }
  return p;
}

/**
 * What a recording holds, read as it grows: the log open read-only beside the recorder's writes,
 * each look reading only the events written since the last.
 */
export class RecordingReader {
  private readonly log: EventLog;
  private readonly state = new RecordedState();
  private lastSeq = 0;

  constructor(db: string) {
    this.log = new EventLog(db, { readonly: true });
  }

  versions(): string[] {
    for (const event of this.log.read({ fromSeq: this.lastSeq + 1 })) {
      this.state.apply(event);
      this.lastSeq = event.seq;
    }
    return recordedVersions(this.state);
  }

  close(): void {
    this.log.close();
  }
}

/** What the cluster at `baseUrl` lists now (see server/record/compare.ts). */
export function clusterVersions(baseUrl: string): Promise<string[]> {
  return listedVersions(new KubeClient({ source: '', cluster: 'test', context: 'test', server: baseUrl, insecureSkipTlsVerify: false }));
}

/** Waits until the recording holds every object the cluster lists, at the version it lists (nothing missed). */
export async function caughtUp(recording: RecordingReader, baseUrl: string, timeoutMs = seconds(15)): Promise<void> {
  let last: { cluster: string[]; recorded: string[] } | undefined;
  try {
    await waitFor(
      async () => {
        const cluster = await clusterVersions(baseUrl);
        const recorded = recording.versions();
        last = { cluster, recorded };
        return cluster.join() === recorded.join();
      },
      { timeoutMs, intervalMs: 25, what: 'the recording to hold what the cluster lists' },
    );
  } catch (error) {
    const missing = last ? last.cluster.filter((v) => !last!.recorded.includes(v)) : [];
    const extra = last ? last.recorded.filter((v) => !last!.cluster.includes(v)) : [];
    throw new Error(`${(error as Error).message}\nnot recorded: ${missing.join(', ')}\nrecorded, not listed: ${extra.join(', ')}`);
  }
}

/** Changes recorded twice: the same object at the same cluster resourceVersion in two events (deletions apart). */
export function doubled(db: string): string[] {
  const log = new EventLog(db, { readonly: true });
  try {
    const seen = new Set<string>();
    const twice: string[] = [];
    for (const event of log.read()) {
      if (event.cause?.type !== 'observed') continue;
      const key = `${event.kind}/${event.namespace}/${event.name}@${event.cause.resourceVersion}${event.type.endsWith('Deleted') ? ' deleted' : ''}`;
      if (seen.has(key)) twice.push(`#${event.seq} ${key}`);
      seen.add(key);
    }
    return twice;
  } finally {
    log.close();
  }
}
