import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCertificate } from './x509.js';

describe('createCertificate', () => {
  const now = Date.parse('2026-11-26T00:00:00Z');
  const ca = createCertificate({ commonName: 'test CA', ca: true, validDays: 10, now });
  const leaf = createCertificate({
    commonName: 'allocator',
    usages: ['serverAuth', 'clientAuth'],
    names: ['localhost', '127.0.0.1', '::1', 'fd00::7'],
    issuer: { ...ca, commonName: 'test CA' },
    validDays: 10,
    now,
  });

  it('makes a self-signed CA that verifies with its own key', () => {
    const cert = new X509Certificate(ca.cert);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=test CA');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(createPrivateKey(ca.key).asymmetricKeyType).toBe('ec');
  });

  it('makes a leaf its issuer signed, for the names and usages asked, valid from an hour before now', () => {
    const cert = new X509Certificate(leaf.cert);
    const issuer = new X509Certificate(ca.cert);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(issuer)).toBe(true);
    expect(cert.verify(issuer.publicKey)).toBe(true);
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:0:0:0:7');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(new Date(cert.validFrom).getTime()).toBe(now - 3_600_000);
    expect(new Date(cert.validTo).getTime()).toBe(now + 10 * 86_400_000);
  });

  it('names the organization in the subject, and a leaf of an issuer that has one chains to it', () => {
    const orgCa = createCertificate({ commonName: 'org CA', organization: 'example', ca: true, validDays: 10, now });
    const admin = createCertificate({
      commonName: 'kubernetes-admin',
      organization: 'system:masters',
      usages: ['clientAuth'],
      issuer: { ...orgCa, commonName: 'org CA', organization: 'example' },
      validDays: 10,
      now,
    });
    const cert = new X509Certificate(admin.cert);
    expect(cert.subject).toBe('O=system:masters\nCN=kubernetes-admin');
    expect(cert.issuer).toBe('O=example\nCN=org CA');
    expect(cert.checkIssued(new X509Certificate(orgCa.cert))).toBe(true);
  });
});
