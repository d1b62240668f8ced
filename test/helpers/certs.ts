import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Certificates for the allocator's TLS and mutual TLS, made with the `openssl` command (Debian
 * package `openssl`) in a temporary directory that stays until `remove()`, since `fleetsim serve`
 * reads its certificate files by path:
 *
 *   ca                 the trusted CA (the allocator's client CA, and the serverCa of policies)
 *   server             signed by `ca`, for localhost, 127.0.0.1 and ::1 (serverAuth)
 *   client             signed by `ca` (clientAuth)
 *   serverOnlyClient   signed by `ca` but for serverAuth only: refused as a client certificate
 *   untrustedCa        a second CA nobody trusts
 *   untrustedClient    signed by `untrustedCa` (clientAuth)
 *
 * Keys are EC P-256, so the whole set takes a few tens of milliseconds.
 */

export interface CertFiles {
  /** PEM texts. */
  cert: string;
  key: string;
  /** Paths of the same PEM texts. */
  certFile: string;
  keyFile: string;
}

export interface TestCertificates {
  dir: string;
  ca: CertFiles;
  server: CertFiles;
  client: CertFiles;
  serverOnlyClient: CertFiles;
  untrustedCa: CertFiles;
  untrustedClient: CertFiles;
  /** Removes the directory. */
  remove(): void;
}

export const OPENSSL_PACKAGE = 'openssl';

/** Throws a clear error when the `openssl` command cannot be run here. */
export function requireOpenssl(): void {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch (error) {
    throw new Error(
      `the tests need the openssl command (Debian package "${OPENSSL_PACKAGE}": apt-get install -y ${OPENSSL_PACKAGE}): ${(error as Error).message}`,
    );
  }
}

function run(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8') ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
  }
}

function files(dir: string, name: string): CertFiles {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
}

function newKey(dir: string, name: string): void {
  run(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
}

function selfSignedCa(dir: string, name: string, commonName: string): CertFiles {
  newKey(dir, name);
  writeFileSync(
    join(dir, `${name}.ext`),
    ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash'].join('\n') + '\n',
  );
  run(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${commonName}`, '-out', `${name}.csr`]);
  run(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-signkey', `${name}.key`, '-days', '2', '-sha256',
    '-extfile', `${name}.ext`, '-out', `${name}.crt`,
  ]);
  return files(dir, name);
}

function signed(dir: string, name: string, ca: string, commonName: string, extensions: string[]): CertFiles {
  newKey(dir, name);
  writeFileSync(join(dir, `${name}.ext`), ['basicConstraints=CA:FALSE', ...extensions].join('\n') + '\n');
  run(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${commonName}`, '-out', `${name}.csr`]);
  run(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial',
    '-days', '2', '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.crt`,
  ]);
  return files(dir, name);
}

const CLIENT = ['keyUsage=critical,digitalSignature', 'extendedKeyUsage=clientAuth'];

/** Makes the whole set in a new temporary directory. */
export function createTestCertificates(): TestCertificates {
  requireOpenssl();
  const dir = mkdtempSync(join(tmpdir(), 'fleetsim-certs-'));
  try {
    const ca = selfSignedCa(dir, 'ca', 'fleetsim allocator test CA');
    const server = signed(dir, 'server', 'ca', 'localhost', [
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
    ]);
    const client = signed(dir, 'client', 'ca', 'fleetsim allocator client', CLIENT);
    const serverOnlyClient = signed(dir, 'server-only-client', 'ca', 'fleetsim server-only client', [
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
    ]);
    const untrustedCa = selfSignedCa(dir, 'untrusted-ca', 'fleetsim untrusted CA');
    const untrustedClient = signed(dir, 'untrusted-client', 'untrusted-ca', 'fleetsim untrusted client', CLIENT);
    return {
      dir,
      ca,
      server,
      client,
      serverOnlyClient,
      untrustedCa,
      untrustedClient,
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** base64 of a text, as Secrets' `data` and policies' `serverCa` hold it. */
export function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
