import { createHash, createPublicKey, generateKeyPairSync, randomFillSync, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  KeyIdentifier,
  KeyUsage,
  KeyUsageFlags,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_extKeyUsage,
  id_ce_keyUsage,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  id_kp_clientAuth,
  id_kp_serverAuth,
} from '@peculiar/asn1-x509';

/**
 * X.509 certificates for TLS: a CA, a server or a client. The certificate's structure is encoded by
 * @peculiar/asn1-x509 and signed with node:crypto, synchronously (node:crypto reads certificates but
 * does not write them; @peculiar/x509 signs only through async WebCrypto). Keys are EC P-256,
 * signatures ECDSA with SHA-256: quick to make, and accepted by Go, OpenSSL (Node) and k6 alike.
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

const ECDSA_WITH_SHA256 = new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.2' });
const USAGE_OIDS = { serverAuth: id_kp_serverAuth, clientAuth: id_kp_clientAuth };

/** A distinguished name: O (when given), then CN. */
const name = ({ commonName, organization }: { commonName: string; organization?: string }) =>
  new Name(
    [
      ...(organization === undefined ? [] : [['2.5.4.10', organization] as const]),
      ['2.5.4.3', commonName] as const,
    ].map(([type, text]) => new RelativeDistinguishedName([new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: text }) })])),
  );

const extension = (extnID: string, value: object, critical = false) =>
  new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });

/** The public key of a PEM private key, parsed. */
const publicKeyInfo = (key: string) => AsnConvert.parse(createPublicKey(key).export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);

/** The key identifier of a public key: SHA-1 of its subjectPublicKey bits (RFC 5280 method 1). */
const keyIdentifier = (spki: SubjectPublicKeyInfo) => new KeyIdentifier(createHash('sha1').update(Buffer.from(spki.subjectPublicKey)).digest());

function pem(label: string, bytes: ArrayBuffer): string {
  const lines = Buffer.from(bytes).toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** Makes a key pair and a certificate for it, signed by `issuer` (or by itself). */
export function createCertificate(request: CertificateRequest): CertificateAndKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const spki = publicKeyInfo(key);
  const serial = randomFillSync(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const extensions = [
    extension(id_ce_basicConstraints, new BasicConstraints({ cA: request.ca === true }), true),
    extension(id_ce_keyUsage, new KeyUsage(request.ca ? KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign : KeyUsageFlags.digitalSignature), true),
    extension(id_ce_subjectKeyIdentifier, new SubjectKeyIdentifier(keyIdentifier(spki))),
  ];
  if (request.issuer) {
    extensions.push(extension(id_ce_authorityKeyIdentifier, new AuthorityKeyIdentifier({ keyIdentifier: keyIdentifier(publicKeyInfo(request.issuer.key)) })));
  }
  if (request.usages?.length) extensions.push(extension(id_ce_extKeyUsage, new ExtendedKeyUsage(request.usages.map((u) => USAGE_OIDS[u]))));
  if (request.names?.length) {
    const entries = request.names.map((n) => new GeneralName(isIP(n) ? { iPAddress: n } : { dNSName: n }));
    extensions.push(extension(id_ce_subjectAltName, new SubjectAlternativeName(entries)));
  }
  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serial.buffer,
    signature: ECDSA_WITH_SHA256,
    issuer: name(request.issuer ?? request),
    validity: new Validity({ notBefore: new Date(request.now - 3_600_000), notAfter: new Date(request.now + request.validDays * 86_400_000) }),
    subject: name(request),
    subjectPublicKeyInfo: spki,
    extensions: new Extensions(extensions),
  });
  const signature = sign('sha256', Buffer.from(AsnConvert.serialize(tbsCertificate)), request.issuer?.key ?? privateKey);
  const certificate = new Certificate({ tbsCertificate, signatureAlgorithm: ECDSA_WITH_SHA256, signatureValue: new Uint8Array(signature).buffer });
  return { cert: pem('CERTIFICATE', AsnConvert.serialize(certificate)), key };
}
