import { Observable, Subject, filter, map } from 'rxjs';
import type { ContainerStatus } from '../kinds/pod/pod.js';

/**
 * What the kubelet would know about each GameServer's pod and the log does not hold: the game
 * container's state and restarts, and each container's output. Processes (real ones under
 * `fleetsim.dev/command` and simulated ones) write the game container's, the sidecar the SDK calls
 * it answered; the Pod projection and `kubectl logs` read here. Keyed by the GameServer's key
 * (`namespace/name`); a pod's entry goes when its GameServer does.
 */

/** A pod's two containers: the game server's, and Agones's sidecar beside it. */
export type PodContainer = 'game' | 'sidecar';

export interface LogLine {
  /** Milliseconds on the cluster's clock. */
  time: number;
  stream: 'stdout' | 'stderr';
  text: string;
  /** A piece of a longer line, shown with no newline after it (the next piece goes on). */
  partial?: true;
}

/** Output kept per container, newest last; older lines go first when a container talks a lot. */
export const POD_LOG_LIMIT_BYTES = 1024 * 1024;
/**
 * The longest line kept whole. Longer output, or output that has not ended its line yet, is cut
 * into pieces of this size marked partial, as the container runtime cuts them (containerd's 16 KiB).
 */
export const POD_LOG_MAX_LINE = 16 * 1024;
/**
 * What a line costs beyond its text, as in the kubelet's log file (its timestamp, stream and tag):
 * a process printing one character per line cannot make a pod keep millions of lines.
 */
export const POD_LOG_LINE_OVERHEAD = 40;

/** Lines appended together, as followers receive them: a run of whole lines, or one partial piece. */
export interface LogBatch {
  time: number;
  stream: LogLine['stream'];
  lines: readonly string[];
  partial: boolean;
}

interface LogChunk extends LogBatch {
  /** Budget taken by its lines not yet dropped. */
  bytes: number;
}

/**
 * A container's output as a ring of chunks: an append costs what it adds, and the oldest output is
 * dropped a chunk at a time (lines of the oldest chunk one by one), never by moving what is kept.
 */
interface PodLog {
  chunks: LogChunk[];
  /** Index of the oldest chunk kept. */
  head: number;
  /** Lines of the oldest chunk already dropped. */
  first: number;
  bytes: number;
  /** Output after the last newline of each stream, waiting for the end of its line. */
  pending: Record<LogLine['stream'], string>;
}

interface PodEntry {
  container: ContainerStatus | undefined;
  /** Deleted through the API: the GameServer turned Unhealthy and shows no pod (in this run). */
  deleted: boolean;
  logs: Record<PodContainer, PodLog>;
  stopsSlowly: boolean;
  /** The game container of a terminating pod has exited (its SDK server may still hold the pod). */
  gameStopped: boolean;
}

const lineCost = (text: string) => text.length + 1 + POD_LOG_LINE_OVERHEAD;

export class PodRuntime {
  private readonly pods = new Map<string, PodEntry>();
  private readonly appended = new Subject<{ key: string; container: PodContainer; batch: LogBatch }>();
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

  /** Appends whole lines to a container's log; text may hold several (a trailing newline ends the last one). */
  appendLog(key: string, stream: LogLine['stream'], text: string, time: number, container: PodContainer = 'game'): void {
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    this.addLines(key, container, this.entry(key).logs[container], time, stream, lines);
  }

  /**
   * Appends a process's raw output: each newline ends a line; what follows the last one waits for
   * more, and is written out in partial pieces once it reaches POD_LOG_MAX_LINE.
   */
  writeOutput(key: string, stream: LogLine['stream'], text: string, time: number, container: PodContainer = 'game'): void {
    const log = this.entry(key).logs[container];
    let rest = log.pending[stream] + text;
    const end = rest.lastIndexOf('\n');
    if (end >= 0) {
      this.addLines(key, container, log, time, stream, rest.slice(0, end).split('\n'));
      rest = rest.slice(end + 1);
    }
    for (; rest.length >= POD_LOG_MAX_LINE; rest = rest.slice(POD_LOG_MAX_LINE)) {
      this.addChunk(key, container, log, time, stream, [rest.slice(0, POD_LOG_MAX_LINE)], true);
    }
    log.pending[stream] = rest;
  }

  /** The stream closed: what waited for the end of its line is a line. */
  endOutput(key: string, stream: LogLine['stream'], time: number, container: PodContainer = 'game'): void {
    const log = this.pods.get(key)?.logs[container];
    if (!log || log.pending[stream] === '') return;
    const rest = log.pending[stream];
    log.pending[stream] = '';
    this.addLines(key, container, log, time, stream, [rest]);
  }

  /** A container's output kept, oldest first. */
  logs(key: string, container: PodContainer = 'game'): LogLine[] {
    const log = this.pods.get(key)?.logs[container];
    if (!log) return [];
    const out: LogLine[] = [];
    for (let c = log.head; c < log.chunks.length; c++) {
      const chunk = log.chunks[c]!;
      for (let i = c === log.head ? log.first : 0; i < chunk.lines.length; i++) out.push(toLine(chunk, chunk.lines[i]!));
    }
    return out;
  }

  /** Lines appended to one container of one pod from now on, as they were appended together. */
  follow(key: string, container: PodContainer = 'game'): Observable<LogBatch> {
    return this.appended.pipe(
      filter((e) => e.key === key && e.container === container),
      map((e) => e.batch),
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

  /** The game container of a terminating pod has exited. */
  markGameStopped(key: string): void {
    this.entry(key).gameStopped = true;
  }

  /** Whether the pod still waits for its game container to exit (it stops slowly and has not). */
  awaitsGameExit(key: string): boolean {
    return this.stopsSlowly(key) && !(this.pods.get(key)?.gameStopped ?? false);
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

  /** Whole lines, those longer than POD_LOG_MAX_LINE cut into partial pieces and a last whole one. */
  private addLines(key: string, container: PodContainer, log: PodLog, time: number, stream: LogLine['stream'], lines: string[]): void {
    if (lines.every((line) => line.length <= POD_LOG_MAX_LINE)) return this.addChunk(key, container, log, time, stream, lines, false);
    let run: string[] = [];
    for (let line of lines) {
      if (line.length > POD_LOG_MAX_LINE) {
        if (run.length > 0) this.addChunk(key, container, log, time, stream, run, false);
        run = [];
        for (; line.length > POD_LOG_MAX_LINE; line = line.slice(POD_LOG_MAX_LINE)) {
          this.addChunk(key, container, log, time, stream, [line.slice(0, POD_LOG_MAX_LINE)], true);
        }
      }
      run.push(line);
    }
    this.addChunk(key, container, log, time, stream, run, false);
  }

  private addChunk(key: string, container: PodContainer, log: PodLog, time: number, stream: LogLine['stream'], lines: string[], partial: boolean): void {
    if (lines.length === 0) return;
    let bytes = 0;
    for (const line of lines) bytes += lineCost(line);
    const chunk: LogChunk = { time, stream, lines, partial, bytes };
    log.chunks.push(chunk);
    log.bytes += bytes;
    this.appended.next({ key, container, batch: chunk });
    this.trim(log);
  }

  /** Drops the oldest output beyond the limit: whole chunks, then lines of the oldest one kept. */
  private trim(log: PodLog): void {
    while (log.bytes > POD_LOG_LIMIT_BYTES) {
      const oldest = log.chunks[log.head]!;
      if (log.bytes - oldest.bytes >= POD_LOG_LIMIT_BYTES) {
        log.bytes -= oldest.bytes;
        log.head++;
        log.first = 0;
      } else {
        const cost = lineCost(oldest.lines[log.first]!);
        oldest.bytes -= cost;
        log.bytes -= cost;
        log.first++;
      }
    }
    // The dropped chunks' slots are given back once they are half of the array.
    if (log.head > 64 && log.head * 2 >= log.chunks.length) {
      log.chunks = log.chunks.slice(log.head);
      log.head = 0;
    }
  }

  private entry(key: string): PodEntry {
    let entry = this.pods.get(key);
    if (!entry) {
      entry = {
        container: undefined,
        deleted: false,
        stopsSlowly: false,
        gameStopped: false,
        logs: { game: emptyLog(), sidecar: emptyLog() },
      };
      this.pods.set(key, entry);
    }
    return entry;
  }
}

function emptyLog(): PodLog {
  return { chunks: [], head: 0, first: 0, bytes: 0, pending: { stdout: '', stderr: '' } };
}

function toLine(chunk: LogChunk, text: string): LogLine {
  const line: LogLine = { time: chunk.time, stream: chunk.stream, text };
  if (chunk.partial) line.partial = true;
  return line;
}
