import { createSocket } from 'node:dgram';
import { seconds } from './time-scale.js';

/** One UDP datagram to `address:port`, and the first answer (rejects when none comes within 5 s). */
export function udpExchange(address: string, port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no UDP answer to ${text}`));
    }, seconds(5));
    socket.once('message', (message) => {
      clearTimeout(timer);
      socket.close();
      resolve(message.toString('utf8'));
    });
    socket.send(text, port, address);
  });
}
