import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { type Http2SecureServer, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream, createSecureServer } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { readInputFile, whyUnreadable } from '../../input-file.js';
import type { AllocationService } from '../../allocation/allocation-service.js';
import { GrpcCode, GrpcError, type GrpcStreamHandler } from '../../grpc-status.js';
import { allocationRoutes } from './allocation-routes.js';
import { sendJsonText } from '../request-body.js';
import { ConnectionGuard, TcpPort } from '../../connections.js';

/**
 * The allocator service's own listener (reference §6.9(b)): `POST /gameserverallocation` over
 * HTTPS, with mutual TLS when a client CA is given.
 *
 * With a client CA, every client must present a certificate that chains to it and may be used
 * for client authentication (extendedKeyUsage clientAuth, or none): Node verifies the chain with
 * OpenSSL's "ssl_client" purpose during the handshake and destroys the connection as soon as the
 * handshake completes, before any HTTP byte is read, when the certificate does not verify. The
 * client sees the connection closed (ECONNRESET) right after its handshake; a client with no
 * certificate at all gets the TLS alert "certificate required". Agones's messages are logged:
 * `bad client certificate: ...`.
 *
 * Without a client CA the listener is TLS only, as Agones's `--disable-mtls`.
 */

/** Agones's allocator port (the Helm chart serves it behind the Service's 443). */
export const DEFAULT_ALLOCATOR_TLS_PORT = 8443;

export interface AllocatorTlsFiles {
  certFile: string;
  keyFile: string;
  /** PEM bundle of the CAs client certificates must chain to; absent: no client certificates. */
  clientCaFile?: string;
}

export interface AllocatorTlsMaterial {
  cert: string;
  key: string;
  clientCa?: string;
}

export interface AllocatorTlsListener {
  server: Http2SecureServer;
  port: number;
  mutual: boolean;
  /** Serves new certificates from now on (connections already open keep theirs). */
  reload(material: AllocatorTlsMaterial): void;
  close(): Promise<void>;
}

function readPem(file: string, what: string, marker: RegExp): string {
  let text: string;
  try {
    text = readInputFile(file);
  } catch (error) {
    throw new Error(`cannot read the allocator ${what} ${file}: ${whyUnreadable(error)}`);
  }
  if (!marker.test(text)) throw new Error(`the allocator ${what} ${file} is not PEM`);
  return text;
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----/;
const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** Reads the files `--allocator-tls-cert`, `--allocator-tls-key` and `--allocator-client-ca` name. */
export function readAllocatorTls(files: AllocatorTlsFiles): AllocatorTlsMaterial {
  const material: AllocatorTlsMaterial = {
    cert: readPem(files.certFile, 'TLS certificate', CERTIFICATE),
    key: readPem(files.keyFile, 'TLS key', PRIVATE_KEY),
  };
  if (files.clientCaFile) material.clientCa = readPem(files.clientCaFile, 'client CA', CERTIFICATE);
  return material;
}

/** The DNS names the (first) certificate of `cert` is issued for: the names clients reach the allocator by. */
export function certificateNames(cert: string): string[] {
  const altNames = new X509Certificate(cert).subjectAltName ?? '';
  return altNames
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4));
}

/** Why a client's handshake failed, in Agones's words where it has some. */
function refusal(error: Error & { code?: string }, socket: TLSSocket): string {
  const verifyError = socket.authorizationError;
  if (verifyError) return `bad client certificate: ${String(verifyError)}`;
  if (error.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE') return 'bad client certificate: the client sent no certificate';
  return `TLS handshake failed: ${error.code ? `${error.code}: ` : ''}${error.message}`;
}

/** What the allocator listener serves: `POST /gameserverallocation`, and the gateway's 404 elsewhere. */
export function allocatorApp(service: AllocationService): RequestListener {
  const allocation = allocationRoutes(service);
  const notFound = new GrpcError(GrpcCode.NOT_FOUND, 'Not Found');
  return (req, res) => {
    if (!allocation(req, res)) sendJsonText(res, notFound.httpStatus, JSON.stringify(notFound.toJSON()));
  };
}

/** Go's net/http answer to a plain-HTTP request on its TLS port (what Agones's allocator answers). */
const PLAIN_HTTP_ANSWER = 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';
/** The first bytes by which Go's TLS server recognises plain HTTP (it reads a TLS record's 5-byte header). */
const PLAIN_HTTP_STARTS = ['GET /', 'HEAD ', 'POST ', 'PUT /', 'OPTIO'];
/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;


function secureContextOf(material: AllocatorTlsMaterial) {
  const mutual = material.clientCa !== undefined;
  return {
    cert: material.cert,
    key: material.key,
    ...(mutual ? { ca: material.clientCa, requestCert: true, rejectUnauthorized: true } : { requestCert: false }),
  };
}

/**
 * Starts the allocator's TLS port on `port` (0: any free port): REST (`handler`, HTTP/1.1 or
 * HTTP/2) and, with `grpc`, gRPC (HTTP/2 with content-type application/grpc) on the same port, as
 * Agones's allocator serves both on one. A connection that does not open with a TLS handshake is
 * answered as Go's server answers it: plain HTTP gets its 400, anything else is closed. Its
 * connections are kept by `connections` (the process's guard): their deadlines, and their share of
 * the process's open files.
 */
export async function startAllocatorTls(
  handler: RequestListener,
  material: AllocatorTlsMaterial,
  options: { port: number; host?: string; log?: (line: string) => void; grpc?: GrpcStreamHandler; connections?: ConnectionGuard },
): Promise<AllocatorTlsListener> {
  const mutual = material.clientCa !== undefined;
  const grpc = options.grpc;
  const connections = options.connections ?? new ConnectionGuard();
  const tlsOptions = { ...secureContextOf(material), allowHTTP1: true, handshakeTimeout: connections.timeouts.handshakeMs };
  const server = createSecureServer(tlsOptions, (req, res) => {
    handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  });
  if (grpc) {
    // gRPC streams are served raw, before Node's compatibility layer (the 'stream' listener the
    // request handler added) wraps them as requests: it would answer their trailers itself.
    const compatibility = server.listeners('stream') as Array<(...args: unknown[]) => void>;
    server.removeAllListeners('stream');
    server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      if (String(headers['content-type'] ?? '').startsWith('application/grpc')) {
        grpc(stream, headers, `${stream.session?.socket?.remoteAddress ?? ''}:${stream.session?.socket?.remotePort ?? ''}`);
      } else {
        for (const listener of compatibility) listener.call(server, stream, headers, ...rest);
      }
    });
  }
  connections.guardHttp2(server);
  const log = options.log ?? ((line: string) => console.error(line));
  server.on('tlsClientError', (error: Error & { code?: string }, socket: TLSSocket) => {
    // A client that hangs up before finishing its handshake, or never finishes it, is not worth a line.
    if (!socket.authorizationError && (error.code === 'ECONNRESET' || error.code === 'ERR_TLS_HANDSHAKE_TIMEOUT')) return;
    log(`fleetsim allocator: refused a TLS client: ${refusal(error, socket)}`);
  });
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  // The port's own listener looks at the first bytes, then hands TLS to the server.
  const front = new TcpPort(
    connections.firstBytes((socket, first) => {
      if (first[0] === TLS_HANDSHAKE) {
        socket.unshift(first);
        server.emit('connection', socket);
      } else if (PLAIN_HTTP_STARTS.includes(first.subarray(0, 5).toString('latin1'))) {
        socket.end(PLAIN_HTTP_ANSWER);
      } else {
        socket.destroy();
      }
    }, 5),
  );
  const port = await front.listen(options.port, options.host);
  return {
    server,
    port,
    mutual,
    reload: (next) => server.setSecureContext(secureContextOf(next)),
    close: async () => {
      for (const session of sessions) session.destroy();
      server.close();
      await front.close();
    },
  };
}
