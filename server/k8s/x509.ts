import { type KeyObject, createHash, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * X.509 certificates made with node:crypto alone (it parses certificates but does not write
 * them): a minimal DER writer for the fields a TLS CA, server or client certificate needs. Keys
 * are EC P-256, signatures ECDSA with SHA-256: quick to make, and accepted by Go, OpenSSL (Node)
 * and k6 alike.
 */

export interface CertificateAndKey {
  /** PEM certificate. */
  cert: string;
  /** PEM private key (PKCS #8). */
  key: string;
}

export interface CertificateRequest {
  commonName: string;
  /** The subject's organization: the groups a Kubernetes API server gives a client certificate. */
  organization?: string;
  /** A CA: may sign certificates (basicConstraints CA, keyUsage keyCertSign). */
  ca?: boolean;
  /** Extended key usages of a leaf: serverAuth, clientAuth. */
  usages?: Array<'serverAuth' | 'clientAuth'>;
  /** Names it is issued for: IP addresses become iPAddress entries, the rest dNSName. */
  names?: string[];
  /** The signer (its subject as it was issued); absent, the certificate signs itself. */
  issuer?: CertificateAndKey & { commonName: string; organization?: string };
  validDays: number;
  /** Milliseconds since the epoch the validity starts from (an hour is taken off for clock skew). */
  now: number;
}

// -- DER -------------------------------------------------------------------------------------------

function der(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let head: Buffer;
  if (length < 0x80) head = Buffer.from([tag, length]);
  else {
    const bytes: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
    head = Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([head, content]);
}

const sequence = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const octets = (bytes: Buffer) => der(0x04, bytes);
const utf8 = (text: string) => der(0x0c, Buffer.from(text, 'utf8'));
const explicit = (n: number, item: Buffer) => der(0xa0 + n, item);
/** A BIT STRING of whole bytes, or of `bits` bits (the rest unused). */
const bitString = (bytes: Buffer, unusedBits = 0) => der(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]));
const TRUE = der(0x01, Buffer.from([0xff]));

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) chunk.unshift(0x80 | (value & 0x7f));
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime after (RFC 5280). */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString();
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  return Number(iso.slice(0, 4)) < 2050 ? der(0x17, Buffer.from(`${digits.slice(2)}Z`)) : der(0x18, Buffer.from(`${digits}Z`));
}

function ipBytes(address: string): Buffer {
  if (isIP(address) === 4) return Buffer.from(address.split('.').map(Number));
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const groups = (text: string | undefined) => (text ? text.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.from(all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]));
}

/** A distinguished name: O (when given), then CN. */
const name = (commonName: string, organization?: string) =>
  sequence(...(organization === undefined ? [] : [set(sequence(oid('2.5.4.10'), utf8(organization)))]), set(sequence(oid('2.5.4.3'), utf8(commonName))));
const extension = (id: string, value: Buffer, critical = false) => sequence(oid(id), ...(critical ? [TRUE] : []), octets(value));
const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const USAGE_OIDS = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' };

/** The key identifier of a public key: SHA-1 of its subjectPublicKey bits (RFC 5280 method 1). */
function keyIdentifier(spki: Buffer): Buffer {
  // A P-256 SPKI ends with its BIT STRING's bits: the 65-byte uncompressed point.
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

function pem(label: string, bytes: Buffer): string {
  const lines = bytes.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** Makes a key pair and a certificate for it, signed by `issuer` (or by itself). */
export function createCertificate(request: CertificateRequest): CertificateAndKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const signerKey: KeyObject | string = request.issuer?.key ?? privateKey;
  const issuerName = request.issuer ? name(request.issuer.commonName, request.issuer.organization) : name(request.commonName, request.organization);
  const extensions = [
    request.ca ? extension('2.5.29.19', sequence(TRUE), true) : extension('2.5.29.19', sequence(), true),
    // keyCertSign|cRLSign for a CA, digitalSignature for a leaf.
    extension('2.5.29.15', request.ca ? bitString(Buffer.from([0x06]), 1) : bitString(Buffer.from([0x80]), 7), true),
    extension('2.5.29.14', octets(keyIdentifier(spki))),
  ];
  if (request.issuer) {
    const issuerSpki = createPublicKey(request.issuer.key).export({ type: 'spki', format: 'der' });
    extensions.push(extension('2.5.29.35', sequence(der(0x80, keyIdentifier(issuerSpki)))));
  }
  if (request.usages?.length) extensions.push(extension('2.5.29.37', sequence(...request.usages.map((u) => oid(USAGE_OIDS[u])))));
  if (request.names?.length) {
    const entries = request.names.map((n) => (isIP(n) ? der(0x87, ipBytes(n)) : der(0x82, Buffer.from(n, 'ascii'))));
    extensions.push(extension('2.5.29.17', sequence(...entries)));
  }
  const tbs = sequence(
    explicit(0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ECDSA_WITH_SHA256,
    issuerName,
    sequence(time(request.now - 3_600_000), time(request.now + request.validDays * 86_400_000)),
    name(request.commonName, request.organization),
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, signerKey);
  return {
    cert: pem('CERTIFICATE', sequence(tbs, ECDSA_WITH_SHA256, bitString(signature))),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
