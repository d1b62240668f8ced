import Database from 'better-sqlite3';
import { existsSync, renameSync } from 'node:fs';
import { join, parse } from 'node:path';

/** Files SQLite keeps beside a database while it is open (or after a crash). */
const COMPANIONS = ['-wal', '-shm', '-journal'];

/**
 * Moves the log at `path` aside, to `<name>-<date>T<time><ext>` beside it (`-2`, `-3`… when
 * that is taken), and returns where it went. It is checkpointed first, so the moved file holds
 * every event by itself; a companion file still there goes with it. Nothing is deleted. The
 * caller holds the log's writer lock (no one else writes it).
 */
export function setLogAside(path: string, now: Date): string {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  const { dir, name, ext } = parse(path);
  const stamp = now.toISOString().slice(0, 19).replace(/:/g, '-');
  let target = join(dir, `${name}-${stamp}${ext}`);
  for (let n = 2; [target, ...COMPANIONS.map((suffix) => target + suffix)].some((file) => existsSync(file)); n++) {
    target = join(dir, `${name}-${stamp}-${n}${ext}`);
  }
  renameSync(path, target);
  for (const suffix of COMPANIONS) if (existsSync(path + suffix)) renameSync(path + suffix, target + suffix);
  return target;
}
