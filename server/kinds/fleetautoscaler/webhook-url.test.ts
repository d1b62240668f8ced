import { describe, expect, it } from 'vitest';
import { fieldErrorMessage } from '../../k8s/validation.js';
import { caBundleHasCertificate, validateUrlConfiguration, webhookUrlErrors } from './webhook-url.js';

// A self-signed P-256 certificate made for these tests (CN=fleetsim-test-ca).
const CERTIFICATE = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBjDCCATOgAwIBAgIUUBvQr3ZzhZmjNwxetYPMMykIXFEwCgYIKoZIzj0EAwIw',
  'GzEZMBcGA1UEAwwQZmxlZXRzaW0tdGVzdC1jYTAgFw0yNjExMjIwNTIwMzVaGA8y',
  'MTI2MTAyOTA1MjAzNVowGzEZMBcGA1UEAwwQZmxlZXRzaW0tdGVzdC1jYTBZMBMG',
  'ByqGSM49AgEGCCqGSM49AwEHA0IABJshd9/sorOlth8y4IwYGsnFWcEzt3wMlxb1',
  'db68NOMQmsNK2UGF8/fy0O174MO6wA6EQMTKWF/Igl+h2yDat5ujUzBRMB0GA1Ud',
  'DgQWBBTp1kEYE1jYOZ41Dk7fiIoTT+IdMTAfBgNVHSMEGDAWgBTp1kEYE1jYOZ41',
  'Dk7fiIoTT+IdMTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCICJ3',
  'aOKzkXET9/A+p6Iilw4Pi+QKMFruUhdpojLiALdXAiBCUlCsyn67miqw29TfZVKz',
  'lwOZfyIaJ7GC/TtR4gN2Kw==',
  '-----END CERTIFICATE-----',
].join('\n');
const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('webhookUrlErrors (spec Limits 5)', () => {
  it.each([
    'https://scaler',
    'https://scaler.default.svc:8000/scale',
    'HTTPS://scaler/',
    'https://10.0.0.1:443/a/b%20c/d',
    'https://[::1]:8443/scale',
    "https://scaler/path-with_~!$&'()*+,;=:chars",
  ])('accepts %s', (url) => {
    expect(webhookUrlErrors(url, 'url')).toEqual([]);
  });

  it.each<[string, string]>([
    ['http://scaler/', "'https' is the only allowed URL scheme"],
    ['scaler/scale', "'https' is the only allowed URL scheme"],
    ['https:/scaler', "'https' is the only allowed URL scheme"],
    ['ftp://scaler/', "'https' is the only allowed URL scheme"],
    ['https://user@scaler/', 'user information is not permitted in the URL'],
    ['https://user:pw@scaler/', 'user information is not permitted in the URL'],
    ['https://scaler/?', 'query parameters are not permitted in the URL'],
    ['https://scaler/scale?a=b', 'query parameters are not permitted in the URL'],
    ['https://scaler/#', 'fragments are not permitted in the URL'],
    ['https://scaler?a#b', 'fragments are not permitted in the URL'],
    ['https://', 'host must be specified'],
    ['https://:8443/', 'host must be specified'],
    ['https://scaler:99999/', 'url is not valid'],
    ['https://scaler:port/', 'url is not valid'],
    ['https://sca ler/', 'url is not valid'],
    ['https://scaler/\n', 'url is not valid'],
    ['https://scaler/%g1', 'url is not valid'],
  ])('rejects %j', (url, detail) => {
    expect(webhookUrlErrors(url, 'spec.policy.webhook.url').map(fieldErrorMessage)).toEqual([
      `spec.policy.webhook.url: Invalid value: ${JSON.stringify(url)}: ${detail}`,
    ]);
  });
});

describe('caBundleHasCertificate', () => {
  it.each<[string, string, boolean | undefined]>([
    ['a certificate', base64(CERTIFICATE), true],
    ['a certificate after other blocks', base64(`junk\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n${CERTIFICATE}\n`), true],
    ['base64 with line breaks', base64(CERTIFICATE).replace(/(.{64})/g, '$1\n'), true],
    ['text without a certificate', base64('hello'), false],
    ['a broken certificate', base64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), false],
    ['a value that is not base64 (left to the schema)', '$CA_BUNDLE', undefined],
  ])('%s', (_label, value, expected) => {
    expect(caBundleHasCertificate(value)).toBe(expected);
  });
});

describe('validateUrlConfiguration', () => {
  const check = (value: unknown) => validateUrlConfiguration(value, 'spec.policy.webhook', 'webhook policy config params are missing').map(fieldErrorMessage);

  it('accepts an https url with a valid CA bundle', () => {
    expect(check({ url: 'https://scaler/', caBundle: base64(CERTIFICATE) })).toEqual([]);
  });

  it('reports every problem at once', () => {
    expect(check({ url: 'http://scaler/', service: { name: 's' }, caBundle: base64('x') })).toEqual([
      'spec.policy.webhook.url: Duplicate value: "service and url cannot be used simultaneously"',
      `spec.policy.webhook.caBundle: Invalid value: "${base64('x')}": CA Bundle is not valid`,
      "spec.policy.webhook.url: Invalid value: \"http://scaler/\": 'https' is the only allowed URL scheme",
    ]);
  });

  it('reports a missing configuration with the given detail', () => {
    expect(check(undefined)).toEqual(['spec.policy.webhook: Required value: webhook policy config params are missing']);
    expect(check(null)).toEqual(['spec.policy.webhook: Required value: webhook policy config params are missing']);
  });
});
