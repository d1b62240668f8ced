import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seconds } from './time-scale.js';

/**
 * Listens on 127.0.0.1, on a port the kernel picks, in the test's own process; returns the base
 * URL. Idle connections are kept as long as a test is patient: fetch reuses them, and a server
 * sharing the test's event loop with Node's 5 s keepAliveTimeout drops one as the next request
 * is written on it whenever the process stalls for 5 s (heavy work in the test, a loaded
 * machine): an ECONNRESET that says nothing about the code under test.
 */
export async function listenLocally(server: Server): Promise<string> {
  server.keepAliveTimeout = seconds(120);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
