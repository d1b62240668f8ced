import { createSocket } from 'node:dgram';
import { connect } from 'node:net';

/**
 * Talking to a game server as a player does: a text command to its address and host port, and
 * its reply. Agones's e2e suite reaches the example simple-game-server this way (one datagram
 * over UDP, retried because datagrams get lost; one line over TCP), and so do these scenarios.
 */

export type PortProtocol = 'udp' | 'tcp';

/** The reply to one datagram, sending it again (up to `tries` times) while none arrives in `replyMs`. */
export async function sendUdp(address: string, port: number, message: string, replyMs = 3000, tries = 3): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const reply = await udpOnce(address, port, message, replyMs);
    if (reply !== undefined) return reply;
    if (attempt >= tries) throw new Error(`no UDP reply in ${replyMs / 1000}s (${tries} tries)`);
  }
}

function udpOnce(address: string, port: number, message: string, replyMs: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const finish = (result: () => void) => {
      clearTimeout(timer);
      socket.close();
      result();
    };
    const timer = setTimeout(() => finish(() => resolve(undefined)), replyMs);
    socket.once('message', (reply) => finish(() => resolve(reply.toString('utf8'))));
    socket.once('error', (error) => finish(() => reject(error)));
    socket.send(message, port, address);
  });
}

/** The first line the server answers to `message` sent as one line over a new TCP connection. */
export function sendTcp(address: string, port: number, message: string, replyMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port });
    let received = '';
    const finish = (result: () => void) => {
      socket.destroy();
      result();
    };
    socket.setTimeout(replyMs, () => finish(() => reject(new Error(`no TCP reply in ${replyMs / 1000}s`))));
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${message}\n`));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const newline = received.indexOf('\n');
      if (newline >= 0) finish(() => resolve(received.slice(0, newline + 1)));
    });
    socket.on('error', (error) => finish(() => reject(error)));
    socket.on('end', () => finish(() => reject(new Error('the connection closed without a reply'))));
  });
}
