import { write } from 'node:fs';

/** Bytes left waiting at most; past them, texts are dropped and counted. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** How long to wait before trying again a descriptor that would block. */
const RETRY_MS = 10;
/**
 * How long texts gather before a write: handing a write to the pool costs the event loop
 * 10-25 µs (measured), so a sidecar answering thousands of calls a second writes 50 times a
 * second, not once per call.
 */
const GATHER_MS = 20;

/**
 * A file descriptor (stdout) written off the event loop. Node writes to a pipe synchronously on
 * Linux, so a reader that falls behind (a harness under load, a pager, a slow terminal) would hold
 * the whole cluster in each write; here texts gather for GATHER_MS, then go to libuv's thread
 * pool (`fs.write`) in one write, one write at a time and in order. Past
 * MAX_WAITING_BYTES waiting, texts are dropped and their lines counted; `dropped` is told the
 * count once the backlog has been written. After a failed write (the reader has gone: EPIPE)
 * nothing more is written, and the program runs on.
 */
export class FdWriter {
  private waiting: string[] = [];
  private waitingBytes = 0;
  private writing: Promise<void> | undefined;
  private gathering: NodeJS.Timeout | undefined;
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
    if (!this.writing && !this.gathering) this.gathering = setTimeout(() => this.drain(), GATHER_MS);
  }

  /** Writes what waits now, and resolves once everything given so far is written (or writing has failed). */
  async written(): Promise<void> {
    while (this.writing || this.gathering) {
      if (this.gathering) this.drain();
      await this.writing;
    }
  }

  private drain(): void {
    clearTimeout(this.gathering);
    this.gathering = undefined;
    this.writing = this.writeWaiting();
  }

  /** One write of all that waits; what comes meanwhile gathers for the next. */
  private async writeWaiting(): Promise<void> {
    const bytes = Buffer.from(this.waiting.join(''));
    this.waiting = [];
    this.waitingBytes = 0;
    await this.writeAll(bytes);
    if (this.droppedLines > 0 && !this.failed) {
      const lines = this.droppedLines;
      this.droppedLines = 0;
      this.dropped(lines);
    }
    this.writing = undefined;
    if (this.waiting.length > 0 && !this.failed) this.gathering = setTimeout(() => this.drain(), GATHER_MS);
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
