import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Who writes a log: what a second writer is told. */
export interface LogWriter {
  pid: number;
  /** `fleetsim serve`, `fleetsim sidecar`. */
  command: string;
  /** Where it answers, once it listens. */
  url?: string;
}

/** The log is another process's: nothing was read or written. */
export class LogInUseError extends Error {
  constructor(
    readonly path: string,
    readonly writer: LogWriter | undefined,
  ) {
    const who = writer ? `${writer.command} (pid ${writer.pid}${writer.url ? `, ${writer.url}` : ''})` : 'another process';
    super(`${path} is in use by ${who}: stop it first, or give another --db`);
  }
}

/** How long a refused writer waits for the holder to say who it is (it writes that right after taking the lock). */
const WRITER_FILE_WAIT_MS = 2000;

/**
 * One writer per log, for the writer's whole life. SQLite's own locks cover a transaction, not a
 * process (in WAL mode another writer may append between two of ours), so the writer holds an
 * exclusive transaction on a database of its own beside the log, `<log>.lock`, empty and never
 * written. The kernel drops that lock when the process ends, however it ends (kill -9 included),
 * so no stale lock is left to clear by hand. Who holds it is in `<log>.writer` (JSON), rewritten
 * once the writer listens; a file left by a writer that was killed is read only while another
 * holds the lock, and then replaced by it.
 */
export class WriterLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly writerFile: string,
    private writer: LogWriter,
  ) {
    this.record();
  }

  /**
   * Takes the lock of the log at `path` for this process, or throws LogInUseError naming who has
   * it. A log in memory (`:memory:`) is its process's alone: no lock, undefined.
   */
  static async acquire(path: string, command: string): Promise<WriterLock | undefined> {
    if (path === ':memory:') return undefined;
    mkdirSync(dirname(path), { recursive: true });
    const writerFile = `${path}.writer`;
    // No wait for the lock: a second writer is refused at once. The journal in memory: nothing is
    // ever written, and no -journal file is left beside it.
    const db = new Database(`${path}.lock`, { timeout: 0 });
    try {
      db.pragma('journal_mode = MEMORY');
      db.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      db.close();
      if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
      throw new LogInUseError(path, await currentWriter(writerFile));
    }
    return new WriterLock(db, writerFile, { pid: process.pid, command });
  }

  /** Records where the writer answers, for whoever is refused next. */
  serving(url: string): void {
    this.writer = { ...this.writer, url };
    this.record();
  }

  /** Lets the log go (the writer file first: once the lock is free, another writer's file may take its place). */
  release(): void {
    if (!this.db.open) return;
    rmSync(this.writerFile, { force: true });
    this.db.close();
  }

  private record(): void {
    const temporary = `${this.writerFile}.${process.pid}`;
    writeFileSync(temporary, `${JSON.stringify(this.writer)}\n`);
    renameSync(temporary, this.writerFile);
  }
}

/**
 * The holder's writer file, once it names a live process: between taking the lock and writing it,
 * the holder leaves a moment in which the file is missing or a killed writer's.
 */
async function currentWriter(writerFile: string): Promise<LogWriter | undefined> {
  const deadline = Date.now() + WRITER_FILE_WAIT_MS;
  for (;;) {
    const writer = readWriter(writerFile);
    if (writer && isRunning(writer.pid)) return writer;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function readWriter(writerFile: string): LogWriter | undefined {
  try {
    const parsed = JSON.parse(readFileSync(writerFile, 'utf8')) as Partial<LogWriter>;
    if (typeof parsed.pid !== 'number' || typeof parsed.command !== 'string') return undefined;
    return { pid: parsed.pid, command: parsed.command, ...(typeof parsed.url === 'string' && { url: parsed.url }) };
  } catch {
    return undefined;
  }
}

/** Whether a process of that id is alive. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
