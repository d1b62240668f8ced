import { FdWriter } from './fd-writer.js';
import { stringifyJsonExact } from './json.js';

/**
 * The server's own log (not the event log): one line per thing worth telling a person, written to
 * stdout by `serve` and `sidecar`, or to a pod's sidecar container for `kubectl logs`. A line
 * below the level is dropped before anything is formatted. A batched logger keeps what it is
 * given and formats and writes it once per turn of the event loop, so a hot path pays for one
 * queued record, and the output for one write.
 *
 *   text: `2025-06-01T10:00:00.123Z info  GameServer default/gs-1: Scheduled -> Ready fleet=simple`
 *   json: `{"time":"2025-06-01T10:00:00.123Z","level":"info","msg":"GameServer …","fleet":"simple"}`
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

export const DEFAULT_LOG_SETTINGS: LogSettings = { level: 'info', format: 'text' };

export type LogValue = string | number | bigint | boolean;
/** Details of a line, after its message; an undefined value is left out. */
export type LogFields = Readonly<Record<string, LogValue | undefined>>;

/** One line's content: what happened (`msg`), and its details. */
export interface LogLine {
  msg: string;
  fields?: LogFields;
}

/** Where formatted lines go: `text` holds whole lines, each ending in a newline; `time` is the last one's. */
export type LogOutput = (text: string, time: number) => void;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
/** The level as the text format shows it, padded so messages line up. */
const LEVEL_TEXT: Record<LogLevel, string> = { debug: 'debug', info: 'info ', warn: 'warn ', error: 'error' };

/** A level by the names Agones's logrus takes too (`Info`, `warning`, `trace`…); undefined when it is none. */
export function parseLogLevel(text: string): LogLevel | undefined {
  const name = text.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(name)) return name as LogLevel;
  return { trace: 'debug', warning: 'warn', fatal: 'error', panic: 'error' }[name] as LogLevel | undefined;
}

export function parseLogFormat(text: string): LogFormat | undefined {
  const name = text.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(name) ? (name as LogFormat) : undefined;
}

const NEEDS_QUOTES = /[\s"=\\]/;
/** Values quoted lately: the same messages and selectors come back line after line. */
const quoted = new Map<string, string>();

/** A text value as it is, unless quoting is needed to read it back (spaces, quotes, `=`, nothing). */
function textValue(value: LogValue): string {
  if (typeof value !== 'string') return String(value);
  if (value !== '' && !NEEDS_QUOTES.test(value)) return value;
  let text = quoted.get(value);
  if (text === undefined) {
    if (quoted.size >= 1024) quoted.clear();
    quoted.set(value, (text = JSON.stringify(value)));
  }
  return text;
}

/** One line in either format, newline included. */
export function formatLogLine(format: LogFormat, time: string, level: LogLevel, line: LogLine): string {
  const fields = line.fields;
  if (format === 'json') {
    const record: Record<string, unknown> = { time, level, msg: line.msg };
    if (fields) for (const key in fields) if (fields[key] !== undefined && !(key in record)) record[key] = fields[key];
    return `${stringifyJsonExact(record)}\n`;
  }
  let text = `${time} ${LEVEL_TEXT[level]} ${line.msg}`;
  if (fields) {
    for (const key in fields) {
      const value = fields[key];
      if (value !== undefined) text += ` ${key}=${textValue(value)}`;
    }
  }
  return `${text}\n`;
}

type Describe = (subject: unknown) => LogLine | undefined;

/** A record waiting for the end of the turn: its line, or what makes it. */
interface Pending {
  time: number;
  level: LogLevel;
  line: LogLine | undefined;
  describe: Describe | undefined;
  subject: unknown;
}

export interface LoggerOptions {
  /** Format and write once per turn of the event loop (stdout); otherwise at once (a pod's log in memory). */
  batched?: boolean;
  /** Resolves once the output has written all it was given (an output that writes later). */
  written?: () => Promise<void>;
}

/**
 * A command's own log (`serve`, `sidecar`): batched, on stdout unless `output` is given, written
 * off the event loop (a slow reader never holds the cluster) until whoever read it has gone
 * (`serve | head`): the command runs on without its lines. `close()` waits for what is written.
 */
export function commandLogger(settings: LogSettings | undefined, now: () => number, output?: LogOutput): Logger {
  if (output) return new Logger(settings ?? DEFAULT_LOG_SETTINGS, now, output, { batched: true });
  const stdout = new FdWriter(1, (lines) => logger.warn(`${lines} log lines dropped: stdout was read too slowly`));
  const logger: Logger = new Logger(settings ?? DEFAULT_LOG_SETTINGS, now, (text) => stdout.write(text), {
    batched: true,
    written: () => stdout.written(),
  });
  return logger;
}

export class Logger {
  private readonly threshold: number;
  private queue: Pending[] = [];
  private scheduled = false;
  /** Lines are kept back until `release` (a batched logger only). */
  private held = false;
  /** The last time formatted, and its text: a batch's lines mostly share their millisecond. */
  private lastTime = NaN;
  private lastTimeText = '';

  constructor(
    readonly settings: LogSettings,
    private readonly now: () => number,
    private readonly output: LogOutput,
    private readonly options: LoggerOptions = {},
  ) {
    this.threshold = RANK[settings.level];
  }

  /** Whether a line of `level` is written: ask before building anything for it. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.threshold;
  }

  log(level: LogLevel, msg: string, fields?: LogFields): void {
    if (RANK[level] < this.threshold) return;
    this.add({ time: this.now(), level, line: { msg, fields }, describe: undefined, subject: undefined });
  }

  debug(msg: string, fields?: LogFields): void {
    this.log('debug', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.log('info', msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.log('warn', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.log('error', msg, fields);
  }

  /**
   * For hot paths: `describe(subject)` makes the line when it is written (a batched logger's end
   * of turn), not now; it may return undefined for no line. Timed now. `describe` should be a
   * function made once, so a call costs no closure.
   */
  later<T>(level: LogLevel, describe: (subject: T) => LogLine | undefined, subject: T): void {
    if (RANK[level] < this.threshold) return;
    this.add({ time: this.now(), level, line: undefined, describe: describe as Describe, subject });
  }

  /** The same settings and clock, written elsewhere (a pod's sidecar container). */
  to(output: LogOutput, options: LoggerOptions = {}): Logger {
    return new Logger(this.settings, this.now, output, options);
  }

  /** Keeps lines back, queued, until `release`: a command's banner goes out before them. */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    if (this.queue.length > 0) this.schedule();
  }

  /** Writes what is queued and waits until the output has it all: the last lines are not lost at exit. */
  async close(): Promise<void> {
    this.held = false;
    this.flush();
    await this.options.written?.();
  }

  /** Writes what is queued now. */
  flush(): void {
    const queue = this.queue;
    if (queue.length === 0) return;
    this.queue = [];
    // Joined, not appended: one flat string to write, where a chain of appends is flattened by the write.
    const lines: string[] = [];
    for (const pending of queue) {
      const line = this.format(pending);
      if (line !== '') lines.push(line);
    }
    if (lines.length > 0) this.output(lines.join(''), queue[queue.length - 1]!.time);
  }

  private add(pending: Pending): void {
    if (!this.options.batched) {
      const text = this.format(pending);
      if (text !== '') this.output(text, pending.time);
      return;
    }
    this.queue.push(pending);
    if (!this.held) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.held) this.flush();
    });
  }

  private format(pending: Pending): string {
    let line = pending.line;
    if (!line) {
      try {
        line = pending.describe!(pending.subject);
      } catch (error) {
        // A line that cannot be made must not take the others (or the server) with it.
        line = { msg: 'a log line could not be made', fields: { error: error instanceof Error ? error.message : String(error) } };
        return formatLogLine(this.settings.format, this.timeText(pending.time), 'error', line);
      }
      if (!line) return '';
    }
    return formatLogLine(this.settings.format, this.timeText(pending.time), pending.level, line);
  }

  private timeText(time: number): string {
    if (time !== this.lastTime) {
      this.lastTime = time;
      this.lastTimeText = new Date(time).toISOString();
    }
    return this.lastTimeText;
  }
}
