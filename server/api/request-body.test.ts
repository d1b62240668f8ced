import { type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../k8s/status.js';
import { BodyParseError, MAX_BODY_DEPTH, parseDocument, parseRequestText, readBody } from './request-body.js';

/** What readBody made of each request the server received. */
let outcomes: Array<Promise<Buffer | undefined>> = [];
let server: Server | undefined;

afterEach(async () => {
  outcomes = [];
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(limit: number): Promise<number> {
  server = createServer((req: IncomingMessage, res) => {
    const outcome = readBody(req, limit);
    outcomes.push(outcome);
    outcome.then(
      (body) => res.end(body === undefined ? 'too large' : `read ${body.length}`),
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

function send(port: number, chunks: string[], options: { contentLength?: number; abort?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', headers: options.contentLength !== undefined ? { 'content-length': options.contentLength } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve(text));
    });
    req.on('error', () => resolve('(connection closed)'));
    for (const chunk of chunks) req.write(chunk);
    if (options.abort) setTimeout(() => req.destroy(), 50);
    else req.end();
  });
}

describe('readBody', () => {
  it('reads a body up to the limit, in one piece or streamed', async () => {
    const port = await serve(10);
    expect(await send(port, ['0123456789'])).toBe('read 10');
    expect(await send(port, ['01234', '56789'])).toBe('read 10');
  });

  it('refuses a body over the limit, by its declared length or as it streams', async () => {
    const port = await serve(10);
    expect(await send(port, ['0123456789A'], { contentLength: 11 })).toBe('too large');
    expect(await send(port, ['012345', '6789AB'])).toBe('too large');
  });

  it('gives up on a client that goes away before the end of its body', async () => {
    const port = await serve(100);
    expect(await send(port, ['01234'], { contentLength: 50, abort: true })).toBe('(connection closed)');
    await expect(outcomes[0]).rejects.toThrow(/aborted|closed the connection before the end/);
  });
});

describe('parseDocument: the one depth-capped reader of request bodies', () => {
  const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

  it('reads a document nested exactly to the limit', () => {
    expect(parseDocument(nested(MAX_BODY_DEPTH))).toBeTypeOf('object');
    expect(parseDocument(`${'['.repeat(MAX_BODY_DEPTH)}${']'.repeat(MAX_BODY_DEPTH)}`)).toBeInstanceOf(Array);
  });

  it('refuses one level more, naming where, in JSON and in YAML', () => {
    expect(() => parseDocument(nested(MAX_BODY_DEPTH + 1))).toThrow(/more than 100 levels deep \(at a\.a\.a\.a\.a\.a\.a\.a…\)/);
    expect(() => parseDocument('{"x":[1,{"y":' + nested(MAX_BODY_DEPTH) + '}]}')).toThrow(/\(at x\[1\]\.y\.a/);
    expect(() => parseDocument(`a: ${'['.repeat(5000)}${']'.repeat(5000)}`, true)).toThrow(BodyParseError);
    expect(() => parseDocument(`a: ${'['.repeat(MAX_BODY_DEPTH + 1)}${']'.repeat(MAX_BODY_DEPTH + 1)}`, true)).toThrow(/levels deep/);
  });

  it('tells a syntax error from a depth error', () => {
    const syntax = (() => { try { parseDocument('{"a":'); } catch (e) { return e as BodyParseError; } })();
    expect(syntax?.reason).toBe('syntax');
    const depth = (() => { try { parseDocument(nested(5000)); } catch (e) { return e as BodyParseError; } })();
    expect(depth?.reason).toBe('depth');
  });

  it('parseRequestText answers either with a 400 Status', () => {
    for (const text of ['{"a":', nested(5000)]) {
      let error: unknown;
      try {
        parseRequestText(text, 'application/json');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe(400);
    }
  });
});
