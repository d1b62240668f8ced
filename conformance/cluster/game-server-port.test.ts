import { createSocket } from 'node:dgram';
import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sendTcp, sendUdp } from './game-server-port.js';

describe("a game server's own port", () => {
  it('sends a datagram again while no reply comes, and answers with the first reply', async () => {
    const server = createSocket('udp4');
    let received = 0;
    server.on('message', (message, from) => {
      // The first datagram is "lost".
      if (++received > 1) server.send(`ACK: ${message.toString('utf8')}\n`, from.port, from.address);
    });
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    try {
      expect(await sendUdp('127.0.0.1', server.address().port, 'RESERVE 5s', 200, 3)).toBe('ACK: RESERVE 5s\n');
      expect(received).toBe(2);
      received = -10;
      await expect(sendUdp('127.0.0.1', server.address().port, 'EXIT', 100, 2)).rejects.toThrow('no UDP reply in 0.1s (2 tries)');
    } finally {
      server.close();
    }
  });

  it('sends one line over TCP and answers with the first line of the reply', async () => {
    const server = createServer((socket) => socket.on('data', (data) => socket.write(`ACK TCP: ${data.toString('utf8').trim()}\nmore\n`)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await sendTcp('127.0.0.1', port, 'READY')).toBe('ACK TCP: READY\n');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    // Nothing listens there now: the error's code is what a send step reports.
    await expect(sendTcp('127.0.0.1', port, 'READY')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
