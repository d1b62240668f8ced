import { write } from 'node:fs';

/** Bytes left waiting at most; past them, texts are dropped and counted. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How long to wait before trying again a descriptor that would block. */
const RETRY_MS = 10;

/**
 * A file descriptor (stdout) written off the event loop. Node writes to a pipe synchronously on
 * Linux, so a reader that falls behind (a harness under load, a pager, a slow terminal) would hold
 * the whole cluster in each write; here every text goes to libuv's thread pool (`fs.write`), one
 * write at a time and in order, the texts given meanwhile joined behind it. Past
 * MAX_WAITING_BYTES waiting, texts are dropped and their lines counted; `dropped` is told the
 * count once the backlog has been written. After a failed write (the reader has gone: EPIPE)
 * nothing more is written, and the program runs on.
 */
export class FdWriter {
  private waiting: string[] = [];
  private waitingBytes = 0;
  private writing: Promise<void> | undefined;
  private droppedLines = 0;
  private failed = false;

  constructor(
    private readonly fd: number,
    private readonly dropped: (lines: number) => void,
  ) {}

  write(text: string): void {
    if (this.failed) return;
    if (this.waitingBytes + text.length > MAX_WAITING_BYTES) {
      this.droppedLines += lineCount(text);
      return;
    }
    this.waiting.push(text);
    this.waitingBytes += text.length;
    this.writing ??= this.drain();
  }

  /** Resolves once everything given so far is written (or writing has failed). */
  async written(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0 && !this.failed) {
      const bytes = Buffer.from(this.waiting.join(''));
      this.waiting = [];
      this.waitingBytes = 0;
      await this.writeAll(bytes);
      if (this.droppedLines > 0 && !this.failed) {
        const lines = this.droppedLines;
        this.droppedLines = 0;
        this.dropped(lines);
      }
    }
    this.writing = undefined;
  }

  private writeAll(bytes: Buffer): Promise<void> {
    return new Promise((resolve) => {
      const from = (offset: number): void =>
        write(this.fd, bytes, offset, bytes.length - offset, null, (error, count) => {
          if (error?.code === 'EAGAIN') return void setTimeout(() => from(offset), RETRY_MS);
          if (error) {
            this.failed = true;
            return resolve();
          }
          if (offset + count < bytes.length) return from(offset + count);
          resolve();
        });
      from(0);
    });
  }
}

function lineCount(text: string): number {
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}
