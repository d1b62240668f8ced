import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiErrors } from '../k8s/status.js';
import { parseJsonExact, parseYamlExact } from '../log/json.js';

/**
 * Reads a request body of at most `limit` bytes; resolves `undefined` when it is larger (the
 * declared length is checked before anything is read; the rest is drained, not kept).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      req.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
    // A client gone before the end of its body: nobody to answer, but nothing left waiting either.
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client closed the connection before the end of its request'));
    });
  });
}

/** A JSON (or, by Content-Type, YAML) body; a syntax error is a 400 that names the problem. */
export function parseRequestText(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') throw apiErrors.badRequest('the request body is empty');
  const type = (contentType ?? 'application/json').split(';')[0]!.trim();
  try {
    if (type.includes('yaml')) return parseYamlExact(text);
    return parseJsonExact(text);
  } catch (error) {
    throw apiErrors.badRequest(`the request body is not valid ${type.includes('yaml') ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

/**
 * Answers with a JSON text. A body that was not read in full (too large) closes the connection,
 * so the unread rest is never taken for the next request.
 */
export function sendJsonText(res: ServerResponse, status: number, text: string, close = false): void {
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  if (close) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}
