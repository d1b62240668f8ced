import { expect } from 'vitest';

/**
 * Talking to the sidecar's REST gateway as a plain HTTP client, and the wire shapes Agones's
 * gateway produces (agones-sidecar.md §3-§5), written from the spec rather than from the code
 * under test.
 */

// -- conformance request names (§12) -------------------------------------------------------------

export const DEFAULT_CONFORMANCE_TESTS = [
  'ready',
  'allocate',
  'setlabel',
  'setannotation',
  'gameserver',
  'health',
  'shutdown',
  'watch',
  'reserve',
];
export const ALPHA_CONFORMANCE_TESTS = [
  'getplayercapacity',
  'setplayercapacity',
  'playerconnect',
  'playerdisconnect',
  'getplayercount',
  'isplayerconnected',
  'getconnectedplayers',
];
export const COUNTS_AND_LISTS_TESTS = [
  'getcounter',
  'updatecounter',
  'setcountcounter',
  'setcapacitycounter',
  'getlist',
  'updatelist',
  'addlistvalue',
  'removelistvalue',
];

export const VERDICT_OK = 'Received requests match expected list';

// -- GameServer JSON (§5) -----------------------------------------------------------------------

export interface GameServerJson {
  object_meta: {
    name: string;
    namespace: string;
    uid: string;
    resource_version: string;
    generation: string;
    creation_timestamp: string;
    deletion_timestamp: string;
    annotations: Record<string, string>;
    labels: Record<string, string>;
  };
  spec: {
    health: { disabled: boolean; period_seconds: number; failure_threshold: number; initial_delay_seconds: number };
  };
  status: {
    state: string;
    address: string;
    addresses: { type: string; address: string }[];
    ports: { name: string; port: number }[];
    players: { count: string; capacity: string; ids: string[] } | null;
    counters: Record<string, { count: string; capacity: string }>;
    lists: Record<string, { capacity: string; values: string[] }>;
  };
}

const OBJECT_META_FIELDS = [
  'name',
  'namespace',
  'uid',
  'resource_version',
  'generation',
  'creation_timestamp',
  'deletion_timestamp',
  'annotations',
  'labels',
];
const STATUS_FIELDS = ['state', 'address', 'addresses', 'ports', 'players', 'counters', 'lists'];
const HEALTH_FIELDS = ['disabled', 'period_seconds', 'failure_threshold', 'initial_delay_seconds'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sorted(keys: string[]): string[] {
  return [...keys].sort();
}

/**
 * Checks what deep equality cannot see: every field present in proto declaration order, and
 * the keys of every map sorted. Returns the value typed.
 */
export function expectGameServerWireShape(value: unknown): GameServerJson {
  if (!isRecord(value)) throw new Error(`not a GameServer object: ${JSON.stringify(value)}`);
  expect(Object.keys(value)).toEqual(['object_meta', 'spec', 'status']);
  const meta = value.object_meta;
  const spec = value.spec;
  const status = value.status;
  if (!isRecord(meta) || !isRecord(spec) || !isRecord(status)) throw new Error(`bad GameServer: ${JSON.stringify(value)}`);
  expect(Object.keys(meta)).toEqual(OBJECT_META_FIELDS);
  expect(Object.keys(spec)).toEqual(['health']);
  expect(isRecord(spec.health) && Object.keys(spec.health)).toEqual(HEALTH_FIELDS);
  expect(Object.keys(status)).toEqual(STATUS_FIELDS);
  for (const map of [meta.annotations, meta.labels, status.counters, status.lists]) {
    if (!isRecord(map)) throw new Error(`map field is not an object: ${JSON.stringify(value)}`);
    expect(Object.keys(map)).toEqual(sorted(Object.keys(map)));
  }
  return value as unknown as GameServerJson;
}

// -- HTTP ---------------------------------------------------------------------------------------

export interface HttpResult {
  status: number;
  contentType: string | null;
  text: string;
  /** The body parsed as JSON; `undefined` when the body is empty or not JSON. */
  json: unknown;
}

/** One request. `body` undefined sends no body at all. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(`${baseUrl}${path}`, { method, body, headers });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), text, json: parseJsonOrUndefined(text) };
}

/** A response body as JSON; undefined when it is empty or not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** `GET /gameserver`, asserted 200 and well-formed. */
export async function getGameServer(baseUrl: string): Promise<GameServerJson> {
  const res = await call(baseUrl, 'GET', '/gameserver');
  expect(res.status, res.text).toBe(200);
  return expectGameServerWireShape(res.json);
}

// -- NDJSON watch (§8.2) --------------------------------------------------------------------------

/**
 * Reads `GET /watch/gameserver` line by line from fetch's body stream, in the background. Each
 * complete line is parsed as it arrives; a line that is not JSON is kept in `badLines`.
 */
export class NdjsonWatch {
  readonly lines: string[] = [];
  readonly documents: unknown[] = [];
  readonly badLines: string[] = [];
  status = 0;
  contentType: string | null = null;
  ended = false;
  /** Bytes after the last newline when the stream ended: a torn line. */
  trailing = '';
  error: unknown;
  readonly done: Promise<void>;
  private readonly controller = new AbortController();

  constructor(url: string) {
    this.done = this.pump(url);
  }

  /** The `result` of every line so far. */
  get results(): GameServerJson[] {
    return this.documents.filter(isRecord).map((d) => d.result as GameServerJson);
  }

  abort(): void {
    this.controller.abort();
  }

  private async pump(url: string): Promise<void> {
    try {
      const response = await fetch(url, { signal: this.controller.signal });
      this.status = response.status;
      this.contentType = response.headers.get('content-type');
      if (!response.body) throw new Error('watch response has no body');
      const decoder = new TextDecoder();
      let buffer = '';
      const reader = response.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          this.take(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
        }
      }
      buffer += decoder.decode();
      this.trailing = buffer;
      this.ended = true;
    } catch (error) {
      this.error = error;
    }
  }

  private take(line: string): void {
    this.lines.push(line);
    try {
      this.documents.push(JSON.parse(line) as unknown);
    } catch {
      this.badLines.push(line);
    }
  }
}
