import Database from 'better-sqlite3';

/** A log's events as its file holds them (sequence number, type, time), read as any reader reads it. */
export function eventsIn(db: string): Array<{ seq: number; type: string; time: number }> {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file.prepare('SELECT seq, type, time FROM events ORDER BY seq').all() as Array<{ seq: number; type: string; time: number }>;
  } finally {
    file.close();
  }
}
