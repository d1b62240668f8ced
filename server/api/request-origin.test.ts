import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { RequestOriginGuard, parseAllowedHosts } from './request-origin.js';

function request(method: string, headers: Record<string, string>): IncomingMessage {
  return { method, headers, url: '/' } as unknown as IncomingMessage;
}

function guard(options: { allowedHosts?: string[]; listenHost?: string; ownNames?: string[]; scheme?: 'http' | 'https' } = {}) {
  return new RequestOriginGuard({ scheme: options.scheme ?? 'http', errorFormat: () => 'status', ...options });
}

describe('the Host check', () => {
  const accepts = (g: RequestOriginGuard, host: string) => g.refusal(request('GET', { host })) === undefined;

  it('accepts IP addresses, loopback names and this machine\'s name, with or without a port', () => {
    const g = guard();
    for (const host of ['127.0.0.1', '127.0.0.1:8080', '127.9.9.9:1', 'localhost', 'LocalHost:80', 'app.localhost:3000', '[::1]', '[::1]:8080', '[::ffff:127.0.0.1]:1', '10.0.0.5:8080', '[fe80::1]:9', hostname()]) {
      expect(accepts(g, host), host).toBe(true);
    }
  });

  it('refuses other names and malformed values', () => {
    const g = guard();
    for (const host of ['evil.example', 'evil.example:8080', 'localhost.evil.example', '127.0.0.1.nip.io', 'localhost:80:80', '[::1', '::1', 'localhost:http', '']) {
      expect(accepts(g, host), host).toBe(false);
    }
    expect(g.refusal(request('GET', { host: 'evil.example:1' }))).toContain('--allowed-hosts evil.example');
  });

  it('accepts the listen address when it is a name, its own names, and --allowed-hosts', () => {
    const g = guard({ listenHost: 'devbox.lan', ownNames: ['allocator.test', '*.cluster.test'], allowedHosts: parseAllowedHosts('Fleetsim.Test, .rebind.test') });
    for (const host of ['devbox.lan:8080', 'allocator.test', 'b.cluster.test:443', 'fleetsim.test', 'a.b.rebind.test', 'rebind.test']) {
      expect(accepts(g, host), host).toBe(true);
    }
    for (const host of ['evil.example', 'xrebind.test', 'devbox.lan.evil.example']) expect(accepts(g, host), host).toBe(false);
    expect(accepts(guard({ allowedHosts: ['*'] }), 'evil.example')).toBe(true);
  });

  it('--allowed-hosts takes names, not URLs or ports', () => {
    expect(parseAllowedHosts(' a.example ,, *,.b.example,10.0.0.1,[::1] ')).toEqual(['a.example', '*', '.b.example', '10.0.0.1', '[::1]']);
    for (const bad of ['http://a.example', 'a.example:8080', 'a/b', 'a b']) expect(() => parseAllowedHosts(bad), bad).toThrow(/--allowed-hosts/);
  });
});

describe('the Origin check', () => {
  const g = guard();
  const write = (origin: string | undefined, host = '127.0.0.1:8080', extra: Record<string, string> = {}) =>
    g.refusal(request('POST', { host, ...(origin !== undefined && { origin }), ...extra }));

  it('lets writes without Origin through, and the same origin or a loopback alias on the same port', () => {
    expect(write(undefined)).toBeUndefined();
    expect(write('http://127.0.0.1:8080')).toBeUndefined();
    expect(write('http://localhost:8080')).toBeUndefined();
    expect(write('http://[::1]:8080')).toBeUndefined();
    expect(write('http://localhost', 'localhost')).toBeUndefined();
    expect(write('http://localhost:80', 'localhost')).toBeUndefined();
  });

  it('refuses writes from another origin: host, port or scheme differ, or null', () => {
    for (const origin of ['http://evil.example', 'http://localhost:8081', 'https://127.0.0.1:8080', 'null', 'not a url']) {
      expect(write(origin), origin).toContain('cross-origin POST');
    }
    expect(write('http://evil.example:8080', 'evil.example:8080')).toContain('for host');
    expect(write(undefined, '127.0.0.1:8080', { 'sec-fetch-site': 'cross-site' })).toContain('Sec-Fetch-Site');
    expect(write(undefined, '127.0.0.1:8080', { 'sec-fetch-site': 'same-origin' })).toBeUndefined();
  });

  it('answers reads whatever their Origin, but not WebSocket upgrades from another origin', () => {
    expect(g.refusal(request('GET', { host: '127.0.0.1:8080', origin: 'http://evil.example' }))).toBeUndefined();
    expect(g.refusal(request('GET', { host: '127.0.0.1:8080', origin: 'http://evil.example' }), true)).toContain('WebSocket');
    expect(g.refusal(request('GET', { host: '127.0.0.1:8080' }), true)).toBeUndefined();
  });

  it('on the TLS port the origin is https', () => {
    const tls = guard({ scheme: 'https' });
    expect(tls.refusal(request('POST', { host: 'localhost:8443', origin: 'https://localhost:8443' }))).toBeUndefined();
    expect(tls.refusal(request('POST', { host: 'localhost', origin: 'https://localhost' }))).toBeUndefined();
    expect(tls.refusal(request('POST', { host: 'localhost:8443', origin: 'http://localhost:8443' }))).toContain('cross-origin');
  });
});
