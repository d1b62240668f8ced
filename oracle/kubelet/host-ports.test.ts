import { createSocket } from 'node:dgram';
import { type AddressInfo, createServer, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HostPorts } from './host-ports.js';

/** A UDP echo that says who it heard, and a free port to open. */
async function udpEcho() {
  const socket = createSocket('udp4');
  socket.on('message', (message, from) => socket.send(`ACK ${message}`, from.port, from.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: (socket.address() as AddressInfo).port, close: () => socket.close() };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function udpAsk(port: number, text: string): Promise<string> {
  const socket = createSocket('udp4');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no reply')), 5000);
    socket.on('message', (reply) => {
      clearTimeout(timer);
      socket.close();
      resolve(String(reply));
    });
    socket.send(text, port, '127.0.0.1');
  });
}

describe("a node's host ports", () => {
  const ports = new HostPorts('127.0.0.1');
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    ports.closeAll();
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it('relay UDP both ways, each peer on a socket of its own', async () => {
    const echo = await udpEcho();
    cleanups.push(echo.close);
    const hostPort = await freePort();
    await ports.open('pod-a', 'UDP', hostPort, '127.0.0.1', echo.port);
    expect(await udpAsk(hostPort, 'one')).toBe('ACK one');
    expect(await udpAsk(hostPort, 'two')).toBe('ACK two');
  });

  it('relay TCP connections', async () => {
    const server = createServer((socket) => socket.end('hello from the pod'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => server.close());
    const hostPort = await freePort();
    await ports.open('pod-a', 'TCP', hostPort, '127.0.0.1', (server.address() as AddressInfo).port);
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      const client = connect(hostPort, '127.0.0.1');
      client.on('data', (chunk) => (text += chunk)).on('end', () => resolve(text)).on('error', reject);
    });
    expect(reply).toBe('hello from the pod');
  });

  it('stay with the pod that took them last: an ended pod closing its port leaves its successor the port', async () => {
    const echo = await udpEcho();
    cleanups.push(echo.close);
    const hostPort = await freePort();
    await ports.open('old-pod', 'UDP', hostPort, '127.0.0.1', echo.port);
    await ports.open('new-pod', 'UDP', hostPort, '127.0.0.1', echo.port);
    ports.close('old-pod', 'UDP', hostPort);
    expect(await udpAsk(hostPort, 'still there')).toBe('ACK still there');
    ports.close('new-pod', 'UDP', hostPort);
    // Closed for good: the port can be bound again.
    const rebound = createSocket('udp4');
    await new Promise<void>((resolve, reject) => rebound.once('error', reject).bind(hostPort, '127.0.0.1', resolve));
    rebound.close();
  });
});
