import type Database from 'better-sqlite3';
import { closeSync, fdatasync, openSync } from 'node:fs';

/**
 * Commits between two checkpoints. A sidecar under load commits a few dozen requests at a time,
 * about four WAL pages each: about SQLite's own rule of a checkpoint every 1,000 pages.
 */
export const COMMITS_PER_CHECKPOINT = 256;

/** WAL pages past which a commit checkpoints them itself (SQLite's rule): the bound for large commits. */
const MAX_WAL_PAGES = 4000;

/**
 * Checkpoints a log's WAL into its database without making commits wait for the disk. SQLite's
 * own checkpoint runs inside the commit that crosses 1,000 WAL pages and begins by flushing the
 * WAL to the disk (fsync): half of its stall, which every request in or behind that commit
 * waits out. Here, every COMMITS_PER_CHECKPOINT commits, the WAL is flushed on libuv's thread
 * pool while commits go on; once it is, the checkpoint runs, its own flush finding little left
 * to write. A commit is in the WAL before it is acknowledged, as before: nothing here changes
 * what survives a crash.
 */
export class WalCheckpoints {
  private commits = 0;
  private walFd: number | undefined;
  private flushing = false;
  private closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly walPath: string,
  ) {
    db.pragma(`wal_autocheckpoint = ${MAX_WAL_PAGES}`);
  }

  /** After each commit. */
  committed(): void {
    if (++this.commits < COMMITS_PER_CHECKPOINT || this.flushing) return;
    this.commits = 0;
    try {
      this.walFd ??= openSync(this.walPath, 'r');
    } catch {
      // No WAL file to flush first (a file system without one): checkpoint as SQLite would.
      this.checkpoint();
      return;
    }
    this.flushing = true;
    // A failed flush is left to the checkpoint's own, which SQLite checks.
    fdatasync(this.walFd, () => {
      this.flushing = false;
      if (this.closed) this.closeFile();
      else this.checkpoint();
    });
  }

  close(): void {
    this.closed = true;
    if (!this.flushing) this.closeFile();
  }

  private checkpoint(): void {
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Not now (a reader of this connection is mid-query): the WAL keeps every commit, and the
      // next checkpoint, or a commit past MAX_WAL_PAGES, copies it.
    }
  }

  private closeFile(): void {
    if (this.walFd === undefined) return;
    closeSync(this.walFd);
    this.walFd = undefined;
  }
}
