import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAll, runCli, startCli, startSidecar } from './helpers/process.js';
import { type ServeProcess, apiRequest, startServe } from './helpers/serve.js';
import { fleetManifest } from './helpers/manifests.js';
import { tempDir } from './helpers/temp-dir.js';
import { waitFor } from './helpers/wait.js';
import { eventsIn } from './helpers/log-file.js';
import { seconds } from './helpers/time-scale.js';

/**
 * One writer per log: a second `serve` (or `sidecar --db`) on a log another process writes is
 * refused before it reads a byte, in one line naming the writer; the lock goes with its holder,
 * kill -9 included; readers read while the writer writes; and a write that fails stops the
 * writer in one line, the log keeping what was committed.
 */

afterEach(() => killAll());

const NS = '/apis/agones.dev/v1/namespaces/default';

/** The one line a refused writer prints, for the writer that holds `db`. */
function inUseLine(command: string, db: string, pid: number, url: string): string {
  return `fleetsim ${command}: ${db} is in use by fleetsim serve (pid ${pid}, ${url}): stop it first, or give another --db\n`;
}

async function createFleet(serve: ServeProcess, name: string, replicas: number): Promise<void> {
  const res = await apiRequest(serve.baseUrl, 'POST', `${NS}/fleets`, { body: fleetManifest(name, replicas) });
  expect(res.status, res.text).toBe(201);
}

describe('one writer per log', () => {
  it('refuses a second serve on the log at once, in one line naming the first; the first goes on and the log has nothing of the second', async () => {
    const db = join(tempDir('fleetsim-lock-'), 'fleetsim.db');
    // Empty and on the virtual clock, the first writes nothing unless asked: the log stands still meanwhile.
    const first = await startServe(['--db', db, '--no-default-fleet', '--nodes', '2', '--no-listen', '--clock', 'virtual']);
    const before = eventsIn(db);

    // The second would add a node and a fleet of its own: it must get no further than the lock.
    const second = startCli(['serve', '--host', '127.0.0.1', '--port', '0', '--db', db, '--nodes', '3', '--no-listen']);
    const status = await second.waitForExit(seconds(20));
    expect(status, second.describe()).toEqual({ code: 1, signal: null });
    expect(second.stderr).toBe(inUseLine('serve', db, first.process.pid!, first.baseUrl));
    expect(second.stdout).toBe('');
    expect(eventsIn(db)).toEqual(before);

    // The first still answers and writes.
    await createFleet(first, 'after', 1);
    await waitFor(() => eventsIn(db).some((e) => e.type === 'ResourceCreated' && e.seq > before.at(-1)!.seq), { what: 'the first server writing on' });
  });

  it('lets a new serve take the log once the writer is killed (kill -9), and read what it committed', async () => {
    const db = join(tempDir('fleetsim-lock-'), 'fleetsim.db');
    const first = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    await createFleet(first, 'survivor', 1);
    await first.process.kill('SIGKILL');

    const next = await startServe(['--db', db, '--no-default-fleet', '--no-listen']);
    const res = await apiRequest(next.baseUrl, 'GET', `${NS}/fleets/survivor`);
    expect(res.status, res.text).toBe(200);
    // And it holds the log in turn.
    const third = await runCli(['serve', '--port', '0', '--db', db]);
    expect(third.code).toBe(1);
    expect(third.stderr).toBe(inUseLine('serve', db, next.process.pid!, next.baseUrl));
  });

  it('keeps a serve off a log a sidecar writes, and a second sidecar too', async () => {
    const db = join(tempDir('fleetsim-lock-'), 'sidecar.db');
    const sidecar = await startSidecar(['--db', db]);
    const line = (command: string) =>
      `fleetsim ${command}: ${db} is in use by fleetsim sidecar (pid ${sidecar.process.pid}, http://localhost:${sidecar.httpPort}): stop it first, or give another --db\n`;
    const serve = await runCli(['serve', '--port', '0', '--db', db]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toBe(line('serve'));
    const second = await runCli(['sidecar', '--http-port', '0', '--grpc-port', '0', '--db', db]);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(line('sidecar'));
    expect(second.stdout).toBe('');
  });

  it('takes no lock for a log in memory: two sidecars with --db :memory: run side by side', async () => {
    const first = await startSidecar(['--db', ':memory:']);
    const second = await startSidecar(['--db', ':memory:']);
    expect([first.log, second.log]).toEqual([':memory:', ':memory:']);
  });

  it('lets replay and explain read the log while serve writes it, and after serve was killed', async () => {
    const db = join(tempDir('fleetsim-lock-'), 'fleetsim.db');
    const serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen']);
    await createFleet(serve, 'read', 2);
    const readyInLog = async () => {
      const replay = await runCli(['replay', db]);
      expect(replay.code, replay.stderr).toBe(0);
      return replay.stdout.split('\n').filter((row) => / Ready /.test(row)).length === 2;
    };
    await waitFor(readyInLog, { timeoutMs: seconds(20), what: 'replay to show both GameServers Ready' });
    const explained = await runCli(['explain', 'fleet/read', '--db', db]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toMatch(/created with replicas 2/);

    // Killed, it leaves its write-ahead file behind: readers still read everything committed.
    await serve.process.kill('SIGKILL');
    expect(await readyInLog()).toBe(true);
    expect((await runCli(['explain', 'fleet/read', '--db', db])).code).toBe(0);
  });

  it('stops in one line when a write fails, the log keeping what was committed and nothing of the failed write', async () => {
    const db = join(tempDir('fleetsim-lock-'), 'fleetsim.db');
    // Empty and on the virtual clock: nothing is written until the request below.
    const serve = await startServe(['--db', db, '--no-default-fleet', '--nodes', '1', '--no-listen', '--clock', 'virtual']);
    const committed = eventsIn(db);
    // A program that ignores the lock takes the sequence numbers serve uses next.
    const foreign = new Database(db);
    const insert = foreign.prepare("INSERT INTO events (seq, time, type, kind, namespace, name, payload, schema_version) VALUES (?, 0, 'Foreign', 'X', '', 'x', '{}', 1)");
    const last = committed.at(-1)!.seq;
    for (let seq = last + 1; seq <= last + 10; seq++) insert.run(seq);
    foreign.close();

    // Its answer (a 500, or a connection closed as the server stops) is beside the point.
    await apiRequest(serve.baseUrl, 'POST', `${NS}/fleets`, { body: fleetManifest('refused', 1) }).catch(() => undefined);
    const status = await serve.process.waitForExit(seconds(20));
    expect(status.code, serve.process.describe()).toBe(1);
    expect(serve.process.stderr).toBe(
      `fleetsim serve: writing the event log ${db} failed (UNIQUE constraint failed: events.seq): it keeps the events before #${last + 1}, nothing of the failed write; stopping\n`,
    );
    expect(eventsIn(db)).toEqual([...committed, ...Array.from({ length: 10 }, (_, i) => ({ seq: last + 1 + i, type: 'Foreign', time: 0 }))]);
  });
});
