import { Observable, Subject, filter, map } from 'rxjs';
import type { ContainerStatus } from '../kinds/pod/pod.js';

/**
 * What the kubelet would know about each GameServer's pod and the log does not hold: the game
 * container's state and restarts, and its output. Processes (real ones under `fleetsim.dev/command`
 * and simulated ones) write here; the Pod projection and `kubectl logs` read here. Keyed by the
 * GameServer's key (`namespace/name`); a pod's entry goes when its GameServer does.
 */

export interface LogLine {
  /** Milliseconds on the cluster's clock. */
  time: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

/** Output kept per pod, newest last; older lines go first when a pod talks a lot. */
export const POD_LOG_LIMIT_BYTES = 1024 * 1024;

interface PodEntry {
  container: ContainerStatus | undefined;
  /** Deleted through the API: the GameServer turned Unhealthy and shows no pod (in this run). */
  deleted: boolean;
  lines: LogLine[];
  bytes: number;
  stopsSlowly: boolean;
}

export class PodRuntime {
  private readonly pods = new Map<string, PodEntry>();
  private readonly appended = new Subject<{ key: string; line: LogLine }>();
  private readonly changed = new Subject<string>();

  /** The game container's status; undefined while no process has started (or for a silent simulation). */
  container(key: string): ContainerStatus | undefined {
    return this.pods.get(key)?.container;
  }

  setContainer(key: string, status: ContainerStatus): void {
    this.entry(key).container = status;
    this.changed.next(key);
  }

  /** Keys whose container status changed: the Pod projection tells its watchers. */
  get containerChanges$(): Observable<string> {
    return this.changed.asObservable();
  }

  /** Appends output; text may hold several lines (a trailing newline ends the last one). */
  appendLog(key: string, stream: LogLine['stream'], text: string, time: number): void {
    const entry = this.entry(key);
    const parts = text.split('\n');
    if (parts[parts.length - 1] === '') parts.pop();
    for (const part of parts) {
      const line = { time, stream, text: part };
      entry.lines.push(line);
      entry.bytes += part.length + 1;
      this.appended.next({ key, line });
    }
    while (entry.bytes > POD_LOG_LIMIT_BYTES && entry.lines.length > 1) entry.bytes -= entry.lines.shift()!.text.length + 1;
  }

  logs(key: string): readonly LogLine[] {
    return this.pods.get(key)?.lines ?? [];
  }

  /** Lines appended to one pod from now on. */
  follow(key: string): Observable<LogLine> {
    return this.appended.pipe(
      filter((e) => e.key === key),
      map((e) => e.line),
    );
  }

  /**
   * Whether the pod's process takes time to stop once told to (a real process, or a simulated
   * one that waits after SIGTERM): its GameServer then terminates rather than going at once.
   */
  setStopsSlowly(key: string, slowly: boolean): void {
    this.entry(key).stopsSlowly = slowly;
  }

  stopsSlowly(key: string): boolean {
    const entry = this.pods.get(key);
    const kind = entry?.container?.state.kind;
    return (entry?.stopsSlowly ?? false) && (kind === 'running' || kind === 'waiting');
  }

  /** A client deleted the pod: its GameServer turns Unhealthy (as in Agones) and shows no pod from now on. */
  markDeleted(key: string): void {
    this.entry(key).deleted = true;
    this.changed.next(key);
  }

  isDeleted(key: string): boolean {
    return this.pods.get(key)?.deleted ?? false;
  }

  /** The pod is gone with its GameServer: its status and output go too. */
  remove(key: string): void {
    if (this.pods.delete(key)) this.changed.next(key);
  }

  private entry(key: string): PodEntry {
    let entry = this.pods.get(key);
    if (!entry) {
      entry = { container: undefined, deleted: false, stopsSlowly: false, lines: [], bytes: 0 };
      this.pods.set(key, entry);
    }
    return entry;
  }
}
