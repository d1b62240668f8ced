import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_NESTING_DEPTH, tooDeeplyNested } from '../k8s/nesting.js';
import { apiErrors } from '../k8s/status.js';
import { GrpcCode, GrpcError } from '../grpc-status.js';
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

/** Largest request body the API reads (the Kubernetes API server's limit is 3 MiB). */
export const API_BODY_LIMIT = 3 * 1024 * 1024;

/** Deepest nesting of objects and arrays a request body may have (see server/k8s/nesting.ts). */
export const MAX_BODY_DEPTH = MAX_NESTING_DEPTH;

/** A body that is not a document: bad syntax, or nested deeper than MAX_BODY_DEPTH. */
export class BodyParseError extends Error {
  constructor(
    readonly reason: 'syntax' | 'depth',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The one reader of request bodies, shared by the resource API, the allocator and the sidecar:
 * JSON (YAML when `yaml`), int64 values exact, parsed into a document whose nesting is within
 * MAX_BODY_DEPTH. Each
 * surface turns a BodyParseError into its own error format.
 */
export function parseDocument(text: string, yaml = false): unknown {
  let document: unknown;
  try {
    document = yaml ? parseYamlExact(text) : parseJsonExact(text);
  } catch (error) {
    // The YAML composer recurses per level: a deep enough document overflows it.
    if (error instanceof RangeError) {
      throw new BodyParseError('depth', `the body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep`);
    }
    throw new BodyParseError('syntax', (error as Error).message);
  }
  const tooDeep = tooDeeplyNested(document);
  if (tooDeep) throw new BodyParseError('depth', `the body ${tooDeep}`);
  return document;
}

/** A JSON (or, by Content-Type, YAML) body; a syntax error or too deep a body is a 400 that names the problem. */
export function parseRequestText(text: string, contentType: string | undefined): unknown {
  if (text.trim() === '') throw apiErrors.badRequest('the request body is empty');
  const type = (contentType ?? 'application/json').split(';')[0]!.trim();
  const yaml = type.includes('yaml');
  try {
    return parseDocument(text, yaml);
  } catch (error) {
    if (!(error instanceof BodyParseError)) throw error;
    if (error.reason === 'depth') throw apiErrors.badRequest(`the request body is refused: ${error.message}`);
    throw apiErrors.badRequest(`the request body is not valid ${yaml ? 'YAML' : 'JSON'}: ${error.message}`);
  }
}

/**
 * A protobuf-JSON body (the sidecar's, the allocator's), read with the same parser; an empty body
 * is an empty message, bad syntax or too deep a body INVALID_ARGUMENT as the gateway answers it.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return parseDocument(text);
  } catch (error) {
    if (!(error instanceof BodyParseError)) throw error;
    throw new GrpcError(GrpcCode.INVALID_ARGUMENT, error.reason === 'syntax' ? `proto: syntax error: ${error.message}` : `proto: ${error.message}`);
  }
}

function unexpected(c: string): GrpcError {
  return new GrpcError(GrpcCode.INVALID_ARGUMENT, `proto: syntax error: unexpected ${JSON.stringify(c)}: a stream of JSON objects was expected`);
}

/**
 * Splits a body holding several JSON objects in a row (`{}{}`): the gateway reads a client
 * stream, such as Health's pings, that way. Each element must be an object (a message):
 * `[]`, `null`, `123` or a string is a syntax error, as in the gateway's decoder.
 */
export function parseJsonSequence(text: string): unknown[] {
  const documents: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (depth === 0) {
      if (c === '{') {
        start = i;
        depth = 1;
      } else if (!/\s/.test(c)) {
        throw unexpected(c);
      }
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) documents.push(parseJsonBody(text.slice(start, i + 1)));
    }
  }
  if (depth !== 0) throw new GrpcError(GrpcCode.INVALID_ARGUMENT, 'proto: syntax error: Unexpected end of JSON input');
  return documents;
}

/**
 * Answers with a JSON text. A body that was not read in full (too large) closes the connection,
 * so the unread rest is never taken for the next request.
 */
export function sendJsonText(res: ServerResponse, status: number, text: string, close = false): void {
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  // HTTP/2 has no Connection header (the allocator's TLS port speaks both).
  if (close && (res.req?.httpVersionMajor ?? 1) < 2) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/**
 * Whether an error Express or Node raised is the client's mistake: Express's own 4xx (an
 * unreadable body, a route parameter with a bad percent-escape) or a URIError from decoding one.
 */
export function isClientMistake(error: unknown): boolean {
  if (error instanceof URIError) return true;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
