import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LogInUseError, WriterLock } from './writer-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetsim-writer-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('WriterLock', () => {
  it('lets one writer hold a log, names it to the next, and lets the log go on release', async () => {
    const log = join(dir, 'sub', 'fleetsim.db');
    const lock = (await WriterLock.acquire(log, 'fleetsim serve'))!;
    lock.serving('http://127.0.0.1:8080');
    expect(JSON.parse(readFileSync(`${log}.writer`, 'utf8'))).toEqual({ pid: process.pid, command: 'fleetsim serve', url: 'http://127.0.0.1:8080' });

    const refused = await WriterLock.acquire(log, 'fleetsim sidecar').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LogInUseError);
    expect((refused as Error).message).toBe(`${log} is in use by fleetsim serve (pid ${process.pid}, http://127.0.0.1:8080): stop it first, or give another --db`);
    // The refused attempt left the holder's lock in place.
    await expect(WriterLock.acquire(log, 'fleetsim sidecar')).rejects.toBeInstanceOf(LogInUseError);

    lock.release();
    expect(existsSync(`${log}.writer`)).toBe(false);
    const next = (await WriterLock.acquire(log, 'fleetsim sidecar'))!;
    expect(JSON.parse(readFileSync(`${log}.writer`, 'utf8'))).toEqual({ pid: process.pid, command: 'fleetsim sidecar' });
    next.release();
    // The lock is a database never written: no journal is left beside it.
    expect(existsSync(`${log}.lock-journal`)).toBe(false);
  });

  it("takes no lock for a log in memory: it is its process's alone", async () => {
    expect(await WriterLock.acquire(':memory:', 'fleetsim serve')).toBeUndefined();
    expect(await WriterLock.acquire(':memory:', 'fleetsim serve')).toBeUndefined();
    expect(existsSync(':memory:.lock')).toBe(false);
  });
});
