import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { CaseFileError, type GrpcRequestStep, type HttpRequestStep, type SidecarArea, type SidecarCase, type WatchStep } from './cases.js';

/**
 * Sending one case to one side (the target or the reference) and reading its answer in a form
 * that can be compared: what must differ between two correct sidecars (uids, resource versions,
 * timestamps) is replaced by a placeholder, everything else is kept as it came.
 */

export interface Side {
  /** Base URL of the REST gateway, e.g. http://127.0.0.1:9358 or http://host:8080/sdk/default/gs-1. */
  baseUrl: string;
  /** host:port of the gRPC server, when the side is reached over gRPC too. */
  grpc?: string;
}

/** How long an answer may take before the case reads as "no answer": generous, as a loaded machine answers late. */
const ANSWER_TIMEOUT_MS = 30_000;
/**
 * How long a watch waits for its first message, and for the message showing what its steps
 * changed: generous, as the wait ends at the message (a loaded machine may take seconds), and a
 * verdict must not depend on how fast either side is.
 */
const WATCH_MESSAGE_MS = 15_000;
/** A watch is read until it has been quiet this long after that message. */
const WATCH_QUIET_MS = 400;
const WATCH_MAX_MS = 4_000;

// -- normalization --------------------------------------------------------------------------------

/** Fields whose values are the implementation's own, in both REST's and gRPC's spelling. */
const VARYING_FIELDS: Record<string, string> = {
  uid: '<uid>',
  resource_version: '<resourceVersion>',
  resourceVersion: '<resourceVersion>',
  creation_timestamp: '<timestamp>',
  creationTimestamp: '<timestamp>',
};

/** A point in time as Kubernetes writes it (e.g. the agones.dev/last-allocated annotation). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A copy of `value` with the varying fields' values (when set) and points in time replaced by
 * placeholders.
 */
export function normalize(value: unknown): unknown {
  if (typeof value === 'string' && RFC3339.test(value)) return '<time>';
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    // gRPC's toObject() gives a map as [key, value] pairs in key order: as an object it compares key by key, as REST's maps do.
    if (key.endsWith('Map') && Array.isArray(v)) {
      out[key] = normalize(Object.fromEntries(v as Array<[string, unknown]>));
      continue;
    }
    const set = v !== '' && v !== '0' && v !== 0 && v !== null && v !== undefined;
    out[key] = Object.hasOwn(VARYING_FIELDS, key) && set && typeof v !== 'object' ? VARYING_FIELDS[key] : normalize(v);
  }
  return out;
}

function contentType(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return String(value).toLowerCase().replace(/\s+/g, '');
}

// -- HTTP ------------------------------------------------------------------------------------------

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

function joinUrl(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/$/, '') + path.replace(/\?.*$/, '');
  const query = path.indexOf('?');
  if (query >= 0) url.search = path.slice(query);
  return url;
}

function requestBody(step: HttpRequestStep): string | undefined {
  if (step.raw !== undefined) return step.raw;
  if (step.bodyBytes !== undefined) return `{"x":"${'a'.repeat(step.bodyBytes - 8)}"}`;
  if (step.body !== undefined) return JSON.stringify(step.body);
  return undefined;
}

/** A body as JSON when it parses, else as text; an empty body as null. */
function readBodyText(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { text: text.length > 300 ? `${text.slice(0, 300)}…` : text };
  }
}

export async function sendHttp(side: Side, step: HttpRequestStep, keepHeaders: readonly string[] = []): Promise<HttpAnswer> {
  const url = joinUrl(side.baseUrl, step.path);
  const body = requestBody(step);
  const headers: Record<string, string> = { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...step.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise<HttpAnswer>((resolve, reject) => {
    const req = httpRequest(url, { method: step.method, headers, timeout: ANSWER_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const kept: Record<string, string> = {};
        for (const name of ['content-type', ...keepHeaders]) {
          const value = name === 'content-type' ? contentType(res.headers[name]) : res.headers[name];
          if (value !== undefined) kept[name] = String(value);
        }
        resolve({ status: res.statusCode ?? 0, headers: kept, body: normalize(readBodyText(Buffer.concat(chunks).toString('utf8'))) });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A server that stops reading a large body resets the connection: that is its answer.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') resolve({ status: 0, headers: {}, body: { connection: 'reset' } });
      else reject(error);
    });
    req.end(body);
  });
}

// -- gRPC ------------------------------------------------------------------------------------------

const require = createRequire(import.meta.url);
type MessageClass = new () => Record<string, unknown> & { toObject(): unknown };
type ServiceDefinition = Record<string, grpc.MethodDefinition<unknown, unknown>>;

const MODULES = {
  sdk: { pb: 'sdk_pb.js', grpc: 'sdk_grpc_pb.js', service: 'agones.dev.sdk.SDK' },
  alpha: { pb: 'alpha/alpha_pb.js', grpc: 'alpha/alpha_grpc_pb.js', service: 'agones.dev.sdk.alpha.SDK' },
  beta: { pb: 'beta/beta_pb.js', grpc: 'beta/beta_grpc_pb.js', service: 'agones.dev.sdk.beta.SDK' },
} as const;
const WELL_KNOWN: Record<string, Record<string, MessageClass>> = {
  'google.protobuf': {
    ...(require('google-protobuf/google/protobuf/wrappers_pb.js') as Record<string, MessageClass>),
    ...(require('google-protobuf/google/protobuf/field_mask_pb.js') as Record<string, MessageClass>),
  },
};

function sdkModule(service: GrpcRequestStep['service']): { messages: Record<string, MessageClass>; definition: ServiceDefinition } {
  const names = MODULES[service];
  return {
    messages: require(`@google-cloud/agones-sdk/lib/${names.pb}`) as Record<string, MessageClass>,
    definition: (require(`@google-cloud/agones-sdk/lib/${names.grpc}`) as Record<string, ServiceDefinition>)[names.service]!,
  };
}

function setterOf(type: MessageClass, field: string): string | undefined {
  const wanted = `set${field}`.toLowerCase();
  return Object.getOwnPropertyNames(type.prototype).find((name) => name.toLowerCase() === wanted && typeof type.prototype[name as keyof typeof type.prototype] === 'function');
}

/** Fills a generated message through its setters: `{ key: 'a' }` calls setKey('a'). */
function buildMessage(type: MessageClass, fields: Record<string, unknown>, messages: Record<string, MessageClass>): unknown {
  const message = new type();
  for (const [field, value] of Object.entries(fields)) {
    if (field === '$type') continue;
    // Generated setters lower-case all but the first letter of a proto field (setCountdiff for count_diff): match them regardless of case.
    const setter = setterOf(type, field);
    if (!setter) throw new CaseFileError(`the gRPC message has no field "${field}"`);
    let v: unknown = value;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const nested = value as Record<string, unknown>;
      const typeName = String(nested.$type ?? '');
      const dot = typeName.lastIndexOf('.');
      const nestedType = dot < 0 ? messages[typeName] : WELL_KNOWN[typeName.slice(0, dot)]?.[typeName.slice(dot + 1)];
      if (!nestedType) throw new CaseFileError(`field "${field}": $type "${typeName}" is not a message of the SDK or google.protobuf`);
      v = buildMessage(nestedType, nested, messages);
    }
    (message[setter] as (v: unknown) => void).call(message, v);
  }
  return message;
}

export interface GrpcAnswer {
  code: number;
  /** The error's text, when the call failed. */
  details?: string;
  response?: unknown;
}

const clients = new Map<string, grpc.Client>();

function clientFor(address: string, service: GrpcRequestStep['service']): { client: grpc.Client; definition: ServiceDefinition; messages: Record<string, MessageClass> } {
  const { definition, messages } = sdkModule(service);
  const key = `${address} ${service}`;
  let client = clients.get(key);
  if (!client) {
    const Client = grpc.makeGenericClientConstructor(definition, service);
    client = new Client(address, grpc.credentials.createInsecure());
    clients.set(key, client);
  }
  return { client, definition, messages };
}

/** Closes the gRPC channels this module opened. */
export function closeGrpcClients(): void {
  for (const client of clients.values()) client.close();
  clients.clear();
}

function requestOf(step: GrpcRequestStep, definition: ServiceDefinition, messages: Record<string, MessageClass>): { method: grpc.MethodDefinition<unknown, unknown>; message: unknown } {
  const method = definition[step.method];
  if (!method) throw new CaseFileError(`the ${step.service} service has no method "${step.method}" (one of: ${Object.keys(definition).join(', ')})`);
  const type = (method as unknown as { requestType: MessageClass }).requestType;
  return { method, message: buildMessage(type, step.request ?? {}, messages) };
}

/** Builds every gRPC request of the cases once, so a case naming a field or method the SDK lacks stops the run before it starts. */
export function checkGrpcRequests(areas: readonly SidecarArea[]): void {
  for (const area of areas) {
    for (const c of area.cases) {
      for (const step of [c.grpc, ...(c.watch?.then ?? []).map((s) => s.grpc)]) {
        if (!step) continue;
        try {
          const { definition, messages } = sdkModule(step.service);
          requestOf(step, definition, messages);
        } catch (error) {
          throw new CaseFileError(`${area.file}: case "${c.name}": ${(error as Error).message}`);
        }
      }
    }
  }
}

const answerOf = (error: grpc.ServiceError | null, response: unknown): GrpcAnswer =>
  error ? { code: error.code, details: error.details } : { code: 0, response: normalize((response as { toObject(): unknown }).toObject()) };

export async function sendGrpc(side: Side, step: GrpcRequestStep): Promise<GrpcAnswer> {
  if (!side.grpc) throw new Error('no gRPC address for this side');
  const { client, definition, messages } = clientFor(side.grpc, step.service);
  const { method, message } = requestOf(step, definition, messages);
  const deadline = new Date(Date.now() + ANSWER_TIMEOUT_MS);
  const serialize = method.requestSerialize;
  const deserialize = method.responseDeserialize;
  return new Promise<GrpcAnswer>((resolve) => {
    const done = (error: grpc.ServiceError | null, response?: unknown) => resolve(answerOf(error, response));
    if (method.requestStream) {
      // Health: a client stream; one message, then the end of the stream.
      const call = client.makeClientStreamRequest(method.path, serialize, deserialize, new grpc.Metadata(), { deadline }, done);
      call.write(message);
      call.end();
    } else {
      client.makeUnaryRequest(method.path, serialize, deserialize, message, new grpc.Metadata(), { deadline }, done);
    }
  });
}

// -- watch -----------------------------------------------------------------------------------------

export interface WatchAnswer {
  /** HTTP status (NDJSON), 101 (WebSocket) or the gRPC code of the stream's opening. */
  opened: number | string;
  contentType?: string;
  /** The first message: the GameServer as the watch started. */
  first: unknown;
  /** The last message, after every step. */
  last: unknown;
  /** The fields each message held (JSON paths of its leaves, as keys), one entry per distinct set. */
  shapes: Array<Record<string, boolean>>;
  /** The answers of the steps done while the watch was open. */
  steps: unknown[];
}

function leaves(value: unknown, path = ''): string[] {
  // Maps of labels, annotations, counters and lists hold data, not fields: their keys are not shape.
  if (/(labels|annotations|counters|lists|Map)$/.test(path)) return [`${path}{}`];
  if (typeof value !== 'object' || value === null) return [path || '$'];
  if (Array.isArray(value)) return value.length === 0 ? [`${path}[]`] : [...new Set(value.flatMap((v) => leaves(v, `${path}[]`)))];
  const entries = Object.entries(value);
  return entries.length === 0 ? [`${path}{}`] : entries.flatMap(([k, v]) => leaves(v, `${path}.${k}`));
}

class Messages {
  readonly received: unknown[] = [];
  private lastAt = Date.now();
  private waiters: Array<() => void> = [];

  push(message: unknown): void {
    this.received.push(message);
    this.lastAt = Date.now();
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once more than `count` messages have come (or after `ms`). */
  async beyond(count: number, ms: number): Promise<void> {
    if (this.received.length > count) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Resolves once no message has come for WATCH_QUIET_MS (at most WATCH_MAX_MS). */
  async quiet(): Promise<void> {
    const until = Date.now() + WATCH_MAX_MS;
    this.lastAt = Math.max(this.lastAt, Date.now());
    while (Date.now() < until && Date.now() - this.lastAt < WATCH_QUIET_MS) {
      await new Promise((r) => setTimeout(r, Math.min(WATCH_QUIET_MS - (Date.now() - this.lastAt), until - Date.now()) + 5));
    }
  }
}

/** Opens the watch, waits for its first message, does the steps, reads until quiet, closes. */
export async function watch(side: Side, step: WatchStep): Promise<WatchAnswer> {
  const messages = new Messages();
  let opened: number | string = 0;
  let contentTypeSeen: string | undefined;
  let close: () => void;
  if (step.via === 'ndjson') {
    const url = joinUrl(side.baseUrl, '/watch/gameserver');
    const req = httpRequest(url, { method: 'GET' }, (res) => {
      opened = res.statusCode ?? 0;
      contentTypeSeen = contentType(res.headers['content-type']);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, at).trim();
          buffer = buffer.slice(at + 1);
          if (line !== '') messages.push(readBodyText(line));
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', () => undefined);
    req.end();
    close = () => req.destroy();
  } else if (step.via === 'websocket') {
    const url = joinUrl(side.baseUrl, '/watch/gameserver');
    url.protocol = 'ws:';
    const socket = new WebSocket(url);
    socket.on('upgrade', (res) => (opened = res.statusCode ?? 0));
    socket.on('unexpected-response', (_req, res) => (opened = res.statusCode ?? 0));
    socket.on('message', (data) => messages.push(readBodyText(String(data))));
    socket.on('error', () => undefined);
    close = () => socket.terminate();
  } else {
    if (!side.grpc) throw new Error('no gRPC address for this side');
    const { client, definition } = clientFor(side.grpc, 'sdk');
    const method = definition.watchGameServer!;
    const { messages: sdkMessages } = sdkModule('sdk');
    const call = client.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, new sdkMessages.Empty!(), new grpc.Metadata(), {});
    opened = 'open';
    call.on('data', (m: { toObject(): unknown }) => messages.push(m.toObject()));
    call.on('error', (e: grpc.ServiceError) => {
      if (e.code !== grpc.status.CANCELLED) opened = `error ${e.code}`;
    });
    close = () => call.cancel();
  }
  try {
    await messages.beyond(0, WATCH_MESSAGE_MS);
    const before = messages.received.length;
    const steps: unknown[] = [];
    for (const s of step.then) steps.push(s.http ? await sendHttp(side, s.http) : await sendGrpc(side, s.grpc!));
    // The steps change the GameServer: its message may come late, but it comes.
    await messages.beyond(before, WATCH_MESSAGE_MS);
    await messages.quiet();
    const normalized = messages.received.map(normalize);
    // Each shape as an object keyed by leaf path, so a field one side lacks shows as that path.
    const shapes = [...new Map(normalized.map((m) => leaves(m).sort()).map((l) => [l.join(' '), Object.fromEntries(l.map((leaf) => [leaf, true]))])).values()];
    return { opened, ...(contentTypeSeen ? { contentType: contentTypeSeen } : {}), first: normalized[0] ?? null, last: normalized.at(-1) ?? null, shapes, steps };
  } finally {
    close();
  }
}

/** How long a case with `until` asks again: generous, as it ends when the state moves on. */
const UNTIL_MS = 30_000;

function fieldAt(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, key) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[key] : undefined), value);
}

/** The answer of one case on one side. */
export async function answerCase(side: Side, c: SidecarCase): Promise<unknown> {
  if (c.until) {
    const { field, not } = c.until;
    const deadline = Date.now() + UNTIL_MS;
    for (;;) {
      const answer = await answerOnce(side, c);
      if (!not.includes(String(fieldAt(answer, field))) || Date.now() > deadline) return answer;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return answerOnce(side, c);
}

async function answerOnce(side: Side, c: SidecarCase): Promise<unknown> {
  try {
    if (c.http) return await sendHttp(side, c.http, c.headers);
    if (c.grpc) return await sendGrpc(side, c.grpc);
    return await watch(side, c.watch!);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
