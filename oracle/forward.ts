import { type Socket as UdpSocket, createSocket } from 'node:dgram';
import { type Server, type Socket, connect, createServer } from 'node:net';

/**
 * Relays in user space (the machine may have no nftables for NAT): what arrives at an address and
 * port goes on to a target chosen per TCP connection or per UDP peer. A UDP peer gets a socket of
 * its own towards the target, so replies find their way back; it is forgotten after two idle minutes.
 */

export interface Target {
  host: string;
  port: number;
}

export interface Forward {
  close(): void;
}

const UDP_IDLE_MS = 120_000;

export function forward(protocol: string, address: string, port: number, target: () => Target | undefined): Promise<Forward> {
  return protocol === 'UDP' ? udpForward(address, port, target) : tcpForward(address, port, target);
}

function tcpForward(address: string, port: number, target: () => Target | undefined): Promise<Forward> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const to = target();
    if (!to) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: to.host, port: to.port });
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve({
        close: () => {
          server.close();
          for (const socket of sockets) socket.destroy();
        },
      });
    });
  });
}

function udpForward(address: string, port: number, target: () => Target | undefined): Promise<Forward> {
  const front = createSocket('udp4');
  const peers = new Map<string, { socket: UdpSocket; timer: NodeJS.Timeout; to: Target }>();
  const forget = (key: string) => {
    const peer = peers.get(key);
    if (!peer) return;
    clearTimeout(peer.timer);
    peer.socket.close();
    peers.delete(key);
  };
  front.on('message', (message, from) => {
    const key = `${from.address}:${from.port}`;
    let peer = peers.get(key);
    if (!peer) {
      const to = target();
      if (!to) return;
      const socket = createSocket('udp4');
      socket.on('message', (reply) => front.send(reply, from.port, from.address));
      socket.on('error', () => forget(key));
      peer = { socket, to, timer: setTimeout(() => forget(key), UDP_IDLE_MS) };
      peers.set(key, peer);
    }
    peer.timer.refresh();
    peer.socket.send(message, peer.to.port, peer.to.host);
  });
  return new Promise((resolve, reject) => {
    front.once('error', reject);
    front.bind(port, address, () => {
      front.off('error', reject);
      front.on('error', () => undefined);
      resolve({
        close: () => {
          for (const key of [...peers.keys()]) forget(key);
          front.close();
        },
      });
    });
  });
}
