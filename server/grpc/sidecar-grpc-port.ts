import { lookup } from 'node:dns/promises';
import { type Socket, isIP } from 'node:net';
import { ConnectionGuard, TcpPort } from '../connections.js';
import type { RequestCause } from '../log/cause.js';
import type { Sidecar } from '../sidecar/sidecar.js';
import type { SidecarGrpcConnections } from './sidecar-grpc.js';

/**
 * The sidecar's gRPC port. It listens at once, but the gRPC stack (grpc-js and the SDK's
 * generated messages: a third of an idle `fleetsim sidecar`'s heap) is loaded when the first
 * client has sent its preface: a game server on the REST SDK, or none yet, does not pay for it.
 * What a client sends meanwhile waits in its socket, which HTTP/2 reads first once it is handed over.
 */

export interface SidecarGrpcOptions {
  /** Interface to bind; '' means all interfaces. */
  address: string;
  /** 0 picks an ephemeral port, reported back in `SidecarGrpcServer.port`. */
  port: number;
  /** The sidecar to answer with, resolved per call; may throw an GrpcError (e.g. the GameServer is gone). */
  sidecar: (cause: () => RequestCause) => Sidecar;
  /** The process's connection guard, which this port's connections join; default: one of its own. */
  connections?: ConnectionGuard;
}

export interface SidecarGrpcServer {
  /** The bound port. */
  port: number;
  /** Ends open watch streams cleanly, then shuts down (forcibly if calls linger). */
  close(): Promise<void>;
}

/** HTTP/2's connection preface, which a client sends first. */
const HTTP2_PREFACE_LENGTH = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'.length;

/** The addresses to listen on, as grpc-js binds them: '' is every IPv4 interface, a name every address it resolves to. */
async function listenAddresses(address: string): Promise<string[]> {
  const host = address === '' ? '0.0.0.0' : address.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return [host];
  return [...new Set((await lookup(host, { all: true })).map((a) => a.address))];
}

export async function startSidecarGrpc(options: SidecarGrpcOptions): Promise<SidecarGrpcServer> {
  const connections = options.connections ?? new ConnectionGuard();
  let served: Promise<SidecarGrpcConnections> | undefined;
  let closing: Promise<void> | undefined;
  // The port is fleetsim's, its connections handed to grpc-js once their preface has come: grpc-js
  // itself gives a client all the time it likes to start, and keeps no count of connections.
  const accept = connections.firstBytes((socket: Socket, first: Buffer) => {
    socket.unshift(first);
    served ??= import('./sidecar-grpc.js').then((grpc) => grpc.sidecarGrpcConnections(options.sidecar, connections));
    served.then(
      (grpc) => (closing || socket.destroyed ? socket.destroy() : grpc.inject(socket)),
      () => socket.destroy(),
    );
  }, HTTP2_PREFACE_LENGTH);
  const ports: TcpPort[] = [];
  let port = options.port;
  try {
    for (const [index, host] of (await listenAddresses(options.address)).entries()) {
      const tcp = new TcpPort(accept);
      try {
        port = await tcp.listen(port, host);
        ports.push(tcp);
      } catch (error) {
        // As grpc-js: the first address must be bound, the others (::1 where IPv6 is off) may fail.
        if (index === 0) throw error;
      }
    }
  } catch (error) {
    await Promise.all(ports.map((tcp) => tcp.close()));
    throw error;
  }

  const close = (): Promise<void> => {
    closing ??= (async () => {
      await (await served?.catch(() => undefined))?.close();
      // grpc-js has closed what it was handed; the port closes what it had not been.
      await Promise.all(ports.map((tcp) => tcp.close()));
    })();
    return closing;
  };
  return { port, close };
}
