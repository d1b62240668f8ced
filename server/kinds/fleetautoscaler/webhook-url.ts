import { X509Certificate } from 'node:crypto';
import { type FieldError, duplicate, invalid, required } from '../../k8s/validation.js';
import { isSet, objectAt, stringAt } from '../common.js';

/**
 * A URL configuration (a Kubernetes WebhookClientConfig: `url`, `service`, `caBundle`), used by
 * the Webhook policy and by the Wasm policy's `from.url`.
 *
 * Agones only checks that the URL parses. The spec is stricter and wins (Authentication 2,
 * Limits 5): the URL must begin with `https://`, and carries no user info, query or fragment.
 */

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Whether the bundle holds at least one parseable PEM certificate (Go's AppendCertsFromPEM).
 * Undefined when the value is not base64 at all: decoding `format: byte` belongs to the schema.
 */
export function caBundleHasCertificate(base64: string): boolean | undefined {
  const compact = base64.replace(/\s+/g, '');
  if (!STRICT_BASE64.test(compact)) return undefined;
  const text = Buffer.from(compact, 'base64').toString('latin1');
  for (const block of text.match(PEM_CERTIFICATE) ?? []) {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      // Not a certificate: Go skips it and tries the next block.
    }
  }
  return false;
}

/** Percent signs must start a two-digit hex escape, as Go's url.Parse requires. */
function hasBadEscape(text: string): boolean {
  return /%(?![0-9A-Fa-f]{2})/.test(text);
}

/** The spec's rules for a webhook URL; the first failing rule is reported. */
export function webhookUrlErrors(url: string, path: string): FieldError[] {
  // What Go's url.Parse itself rejects: control characters, spaces in the authority, bad escapes.
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(url) || hasBadEscape(url)) return [invalid(path, url, 'url is not valid')];
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (!scheme || scheme[1]!.toLowerCase() !== 'https') return [invalid(path, url, "'https' is the only allowed URL scheme")];
  const afterScheme = url.slice(scheme[0].length);
  const authority = /^[^/?#]*/.exec(afterScheme)![0];
  if (authority.includes('@')) return [invalid(path, url, 'user information is not permitted in the URL')];
  const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(\d*))?$/.exec(authority);
  if (!hostPort || /\s/.test(authority)) return [invalid(path, url, 'url is not valid')];
  if (hostPort[1] === '') return [invalid(path, url, 'host must be specified')];
  if (hostPort[2] !== undefined && hostPort[2] !== '' && Number(hostPort[2]) > 65535) return [invalid(path, url, 'url is not valid')];
  if (afterScheme.includes('#')) return [invalid(path, url, 'fragments are not permitted in the URL')];
  if (afterScheme.includes('?')) return [invalid(path, url, 'query parameters are not permitted in the URL')];
  return [];
}

/**
 * Agones's URL-configuration checks at `path` (e.g. `spec.policy.webhook`), with the spec's URL
 * rules in place of the bare parse. `missing` is the detail when the configuration is absent.
 */
export function validateUrlConfiguration(value: unknown, path: string, missing: string): FieldError[] {
  const config = objectAt(value);
  if (!config) return [required(path, missing)];
  const errs: FieldError[] = [];
  const hasUrl = isSet(config.url);
  const hasService = isSet(config.service);
  if (!hasUrl && !hasService) errs.push(required(path, 'url should be provided'));
  if (hasUrl && hasService) errs.push(duplicate(`${path}.url`, 'service and url cannot be used simultaneously'));
  if (isSet(config.caBundle) && caBundleHasCertificate(stringAt(config.caBundle)) === false) {
    errs.push(invalid(`${path}.caBundle`, stringAt(config.caBundle), 'CA Bundle is not valid'));
  }
  if (hasUrl) errs.push(...webhookUrlErrors(stringAt(config.url), `${path}.url`));
  return errs;
}
