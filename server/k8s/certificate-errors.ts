/** Node's error codes for a peer certificate that does not verify. */
const CERTIFICATE_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_PURPOSE',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export function isCertificateError(code: string): boolean {
  return CERTIFICATE_ERRORS.has(code);
}
