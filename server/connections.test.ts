import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionGuard, DEFAULT_CONNECTION_TIMEOUTS, connectionCap, connectionTimeouts, openFileLimit } from './connections.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            256                  20000                files
Max locked memory         8388608              8388608              bytes
`;

describe('the open-file limit and the cap under it', () => {
  it('reads the soft limit from /proc/self/limits; none when unlimited or unreadable', () => {
    expect(openFileLimit(LIMITS)).toBe(256);
    expect(openFileLimit(LIMITS.replace('256 ', 'unlimited '))).toBeUndefined();
    expect(openFileLimit('')).toBeUndefined();
  });

  it('leaves a quarter of the limit, 64 at least and 512 at most, to everything but client connections', () => {
    expect(connectionCap(256)).toBe(192);
    expect(connectionCap(1024)).toBe(768);
    expect(connectionCap(20_000)).toBe(19_488);
    expect(connectionCap(undefined)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('the timeouts', () => {
  it('are the defaults, or the defaults scaled by FLEETSIM_CONNECTION_TIMEOUT_SCALE', () => {
    expect(connectionTimeouts({})).toEqual(DEFAULT_CONNECTION_TIMEOUTS);
    expect(connectionTimeouts({ FLEETSIM_CONNECTION_TIMEOUT_SCALE: '0.5' })).toMatchObject({ firstByteMs: 5_000, keepAliveMs: 2_500, requestMs: 150_000 });
    for (const bad of ['0', '-1', 'soon', 'Infinity']) {
      expect(() => connectionTimeouts({ FLEETSIM_CONNECTION_TIMEOUT_SCALE: bad })).toThrow(/FLEETSIM_CONNECTION_TIMEOUT_SCALE: ".*" is not a number above 0/);
    }
  });
});

describe('the cap', () => {
  let server: Server | undefined;
  const clients: Socket[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  /** A guard of `max` connections behind a local port: the server sides it admitted, in order, and a way to connect. */
  async function guarded(max: number) {
    const guard = new ConnectionGuard({ timeouts: DEFAULT_CONNECTION_TIMEOUTS, max });
    const accepted: Socket[] = [];
    let seen = 0;
    server = createServer((socket) => {
      seen++;
      socket.on('error', () => undefined);
      if (guard.admit(socket)) accepted.push(socket);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    /** Connects, and resolves once the server has taken (or turned away) the connection. */
    const open = async () => {
      const before = seen;
      const client = connect(port, '127.0.0.1');
      client.on('error', () => undefined);
      client.resume();
      clients.push(client);
      while (seen === before) await new Promise((resolve) => setTimeout(resolve, 5));
      return client;
    };
    return { guard, accepted, open };
  }

  it('makes room by closing the connection idle longest; a busy one is never taken; with none idle the new one is closed', async () => {
    const { guard, accepted, open } = await guarded(2);
    await open();
    await open();
    expect(guard.size).toBe(2);
    const [first, second] = accepted as [Socket, Socket];
    // The first falls busy, then idle again after the second: the second is now idle longest.
    guard.begin(first)();
    await open();
    expect(second.destroyed).toBe(true);
    expect(first.destroyed).toBe(false);
    expect(guard.size).toBe(2);
    // Both busy: a new connection finds no room.
    guard.begin(first);
    guard.begin(accepted[2]!);
    const turnedAway = await open();
    await new Promise((resolve) => (turnedAway.destroyed ? resolve(undefined) : turnedAway.once('close', resolve)));
    expect(guard.size).toBe(2);
    expect(first.destroyed || accepted[2]!.destroyed).toBe(false);
  });
});
