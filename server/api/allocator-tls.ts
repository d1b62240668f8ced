import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { AllocationService } from '../allocation/allocation-service.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
import { allocationRoutes } from './allocation-routes.js';
import { sendJsonText } from './request-body.js';

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
  server: Server;
  port: number;
  mutual: boolean;
  close(): Promise<void>;
}

function readPem(file: string, what: string, marker: RegExp): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the allocator ${what} ${file}: ${(error as Error).message}`);
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

/** Starts the HTTPS listener on `port` (0: any free port) with `handler`. */
export async function startAllocatorTls(
  handler: RequestListener,
  material: AllocatorTlsMaterial,
  options: { port: number; host?: string; log?: (line: string) => void },
): Promise<AllocatorTlsListener> {
  const mutual = material.clientCa !== undefined;
  const server = createServer(
    {
      cert: material.cert,
      key: material.key,
      ...(mutual ? { ca: material.clientCa, requestCert: true, rejectUnauthorized: true } : { requestCert: false }),
    },
    handler,
  );
  const log = options.log ?? ((line: string) => console.error(line));
  server.on('tlsClientError', (error: Error & { code?: string }, socket: TLSSocket) => {
    // A client that hangs up before finishing its handshake is not worth a line.
    if (!socket.authorizationError && error.code === 'ECONNRESET') return;
    log(`fleetsim allocator: refused a TLS client: ${refusal(error, socket)}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    server,
    port,
    mutual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
