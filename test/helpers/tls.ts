import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throw-away TLS material for tests, made with the `openssl` command: a CA, and a server
 * certificate it signs for 127.0.0.1 and localhost (plus any extra DNS names). EC P-256 keys keep
 * generation fast. Nothing is written outside a temporary directory, which is removed at once.
 */

export interface TestCa {
  /** PEM certificate of the CA. */
  cert: string;
  /** PEM private key of the CA. */
  key: string;
  /** The CA certificate as a FleetAutoscaler `caBundle`: base64 of the PEM. */
  caBundle: string;
}

export interface TestServerCertificate {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function inTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-tls-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A self-signed CA, valid for a day. */
export function createTestCa(commonName = 'fleetsim test CA'): TestCa {
  return inTempDir((dir) => {
    openssl(
      [
        'req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', `/CN=${commonName}`,
        '-addext', 'basicConstraints=critical,CA:TRUE',
        '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
    const cert = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const key = readFileSync(join(dir, 'ca.key'), 'utf8');
    return { cert, key, caBundle: Buffer.from(cert).toString('base64') };
  });
}

/** A server certificate signed by `ca`, for 127.0.0.1, ::1, localhost and `dnsNames`. */
export function createServerCertificate(ca: TestCa, dnsNames: readonly string[] = []): TestServerCertificate {
  return inTempDir((dir) => {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key);
    const names = ['DNS:localhost', ...dnsNames.map((n) => `DNS:${n}`), 'IP:127.0.0.1', 'IP:::1'].join(',');
    writeFileSync(
      join(dir, 'server.ext'),
      [
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${names}`,
      ].join('\n'),
    );
    openssl(['req', '-new', ...EC_KEY, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
    openssl(
      [
        'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
        '-out', 'server.crt', '-days', '1', '-sha256', '-extfile', 'server.ext',
      ],
      dir,
    );
    return { cert: readFileSync(join(dir, 'server.crt'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
  });
}

export type RequestHandler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

export interface TestHttpsServer {
  server: Server;
  port: number;
  /** `https://127.0.0.1:<port>` */
  baseUrl: string;
  /** Bodies of the requests received so far, in order. */
  readonly requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1 (a free port) with `certificate`, answering through `handler`. */
export async function startHttpsServer(certificate: TestServerCertificate, handler: RequestHandler): Promise<TestHttpsServer> {
  const requests: TestHttpsServer['requests'] = [];
  const server = createHttpsServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  // Handshakes a client rejects surface here; they are expected in tests of untrusted servers.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    port,
    baseUrl: `https://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Whether the `openssl` command can be run here (tests needing it are skipped otherwise). */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
