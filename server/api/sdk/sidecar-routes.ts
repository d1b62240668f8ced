import type { Subscription } from 'rxjs';
import type { Counter } from '../../sidecar/counts-and-lists.js';
import type { Sidecar } from '../../sidecar/sidecar.js';
import type { SdkGameServer } from '../../kinds/gameserver/sdk-json.js';
import type { Int64 } from '../../int64.js';
import { GrpcCode, GrpcError } from '../../grpc-status.js';
import { type Decoded, type FieldSpec, decodeMessage, fieldMaskFromBody } from '../../proto-json.js';
import { parseJsonBody, parseJsonSequence } from '../request-body.js';

/**
 * The sidecar's REST routes, exactly as Agones's gateway serves them (the route table of
 * sdk.pb.gw.go, alpha and beta), independent of the transport: the HTTP and the WebSocket
 * adapters both call `dispatchSidecar`.
 */

export interface SidecarRequest {
  method: string;
  /** Path relative to the sidecar's root, e.g. `/ready`. */
  path: string;
  query: URLSearchParams;
  /** The body text; `undefined` when the request carried none. */
  body: string | undefined;
}

export interface ResponseSink {
  /** One response; `null` sends an empty body. */
  reply(status: number, body: unknown): void;
  /** Starts a stream of documents (HTTP: NDJSON lines; WebSocket: one frame each). */
  startStream(): { write(document: unknown): void; end(): void };
  /** Called when the client goes away. */
  onClose(listener: () => void): void;
}

type Handler = (sidecar: Sidecar, request: SidecarRequest, params: string[], sink: ResponseSink) => Promise<unknown>;

interface Route {
  method: string;
  /** As Agones's route table writes it: `{name}` is one path segment. */
  path: string;
  pattern: RegExp;
  handler: Handler;
}

const NOT_FOUND = new GrpcError(GrpcCode.NOT_FOUND, 'Not Found');
const METHOD_NOT_ALLOWED = new GrpcError(GrpcCode.UNIMPLEMENTED, 'Method Not Allowed');

/** agones.dev.sdk.Empty: no fields, but the body must still be a message (an object) when there is one. */
const EMPTY: FieldSpec[] = [];
const KEY_VALUE: FieldSpec[] = [
  { name: 'key', type: 'string' },
  { name: 'value', type: 'string' },
];
const DURATION: FieldSpec[] = [{ name: 'seconds', type: 'int64' }];
const PLAYER_ID: FieldSpec[] = [{ name: 'playerID', type: 'string' }];
const COUNT: FieldSpec[] = [{ name: 'count', type: 'int64' }];
const COUNTER_UPDATE: FieldSpec[] = [
  { name: 'name', type: 'string' },
  { name: 'count', type: 'int64' },
  { name: 'capacity', type: 'int64' },
  { name: 'countDiff', type: 'int64' },
];
const LIST: FieldSpec[] = [
  { name: 'name', type: 'string' },
  { name: 'capacity', type: 'int64' },
  { name: 'values', type: 'strings' },
];
const LIST_VALUE: FieldSpec[] = [
  { name: 'name', type: 'string' },
  { name: 'value', type: 'string' },
];

function decode(request: SidecarRequest, fields: FieldSpec[], messageName: string): Decoded {
  return decodeMessage(parseJsonBody(request.body ?? ''), fields, messageName).message;
}

const str = (v: Decoded[string]) => (typeof v === 'string' ? v : '');
const num = (v: Decoded[string]): Int64 => (typeof v === 'number' || typeof v === 'bigint' ? v : 0);
const int64 = (n: Int64) => String(n);

const counterJson = (c: Counter) => ({
  name: c.name,
  count: int64(c.count),
  capacity: int64(c.capacity),
});
const listJson = (l: { name: string; capacity: Int64; values: string[] }) => ({
  name: l.name,
  capacity: int64(l.capacity),
  values: l.values,
});

const ok = {};

function route(method: string, path: string, handler: Handler): Route {
  // `{x}` matches one path segment; custom verbs (`:addValue`) stay literal.
  const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)');
  return { method, path, pattern: new RegExp(`^${source}$`), handler };
}

function countersAndLists(prefix: string): Route[] {
  return [
    route('GET', `${prefix}/counters/{name}`, async (s, _r, [name]) => counterJson(await s.getCounter(name!))),
    route('PATCH', `${prefix}/counters/{name}`, async (s, r, [name]) => {
      const m = decode(r, COUNTER_UPDATE, 'agones.dev.sdk.beta.CounterUpdateRequest');
      const update = {
        name: name!,
        countDiff: num(m.countDiff),
        ...(m.count !== undefined && { count: num(m.count) }),
        ...(m.capacity !== undefined && { capacity: num(m.capacity) }),
      };
      return counterJson(await s.updateCounter(update));
    }),
    route('GET', `${prefix}/lists/{name}`, async (s, _r, [name]) => listJson(await s.getList(name!))),
    route('PATCH', `${prefix}/lists/{name}`, async (s, r, [name]) => {
      const document = parseJsonBody(r.body ?? '');
      const { message } = decodeMessage(document, LIST, 'agones.dev.sdk.beta.List');
      const queryMask = r.query.get('update_mask') ?? r.query.get('updateMask');
      // Without a mask in the query, the gateway derives it from the keys the body holds. A query
      // mask is split as given: `update_mask=` is the path "", which UpdateList refuses.
      const mask =
        queryMask !== null ? queryMask.split(',') : fieldMaskFromBody(document, LIST, 'agones.dev.sdk.beta.List');
      const list = {
        name: name!,
        capacity: num(message.capacity),
        values: Array.isArray(message.values) ? message.values : [],
      };
      return listJson(await s.updateList(list, mask));
    }),
    route('POST', `${prefix}/lists/{name}:addValue`, async (s, r, [name]) =>
      listJson(await s.addListValue(name!, str(decode(r, LIST_VALUE, 'AddListValueRequest').value))),
    ),
    route('POST', `${prefix}/lists/{name}:removeValue`, async (s, r, [name]) =>
      listJson(await s.removeListValue(name!, str(decode(r, LIST_VALUE, 'RemoveListValueRequest').value))),
    ),
  ];
}

const ROUTES: Route[] = [
  // The body is decoded before anything happens: a malformed one is a 400 and changes nothing.
  route('POST', '/ready', async (s, r) => (decode(r, EMPTY, 'agones.dev.sdk.Empty'), await s.ready(), ok)),
  route('POST', '/allocate', async (s, r) => (decode(r, EMPTY, 'agones.dev.sdk.Empty'), await s.allocate(), ok)),
  route('POST', '/shutdown', async (s, r) => (decode(r, EMPTY, 'agones.dev.sdk.Empty'), await s.shutdown(), ok)),
  route('POST', '/health', async (s, r) => {
    // Health is a client stream: each JSON object in the body is one ping.
    const pings = parseJsonSequence(r.body ?? '');
    s.health(pings.length);
    return ok;
  }),
  route('POST', '/reserve', async (s, r) => {
    await s.reserve(Number(num(decode(r, DURATION, 'agones.dev.sdk.Duration').seconds)));
    return ok;
  }),
  route('GET', '/gameserver', async (s) => s.getGameServer()),
  route('GET', '/watch/gameserver', async (s, _r, _p, sink) => {
    const watch = s.watchGameServer();
    const stream = sink.startStream();
    const subscription: Subscription = watch.subscribe({
      next: (gs) => stream.write(watchMessage(gs)),
      complete: () => stream.end(),
      error: (e: unknown) => {
        stream.write({ error: toSdkError(e).toJSON() });
        stream.end();
      },
    });
    sink.onClose(() => subscription.unsubscribe());
    return STREAMING;
  }),
  route('PUT', '/metadata/label', async (s, r) => {
    const m = decode(r, KEY_VALUE, 'agones.dev.sdk.KeyValue');
    await s.setLabel(str(m.key), str(m.value));
    return ok;
  }),
  route('PUT', '/metadata/annotation', async (s, r) => {
    const m = decode(r, KEY_VALUE, 'agones.dev.sdk.KeyValue');
    await s.setAnnotation(str(m.key), str(m.value));
    return ok;
  }),
  route('POST', '/alpha/player/connect', async (s, r) => ({
    bool: await s.playerConnect(str(decode(r, PLAYER_ID, 'agones.dev.sdk.alpha.PlayerID').playerID)),
  })),
  route('POST', '/alpha/player/disconnect', async (s, r) => ({
    bool: await s.playerDisconnect(str(decode(r, PLAYER_ID, 'agones.dev.sdk.alpha.PlayerID').playerID)),
  })),
  route('PUT', '/alpha/player/capacity', async (s, r) => {
    await s.setPlayerCapacity(num(decode(r, COUNT, 'agones.dev.sdk.alpha.Count').count));
    return ok;
  }),
  route('GET', '/alpha/player/capacity', async (s) => ({ count: int64(await s.getPlayerCapacity()) })),
  route('GET', '/alpha/player/count', async (s) => ({ count: int64(await s.getPlayerCount()) })),
  route('GET', '/alpha/player/connected/{playerID}', async (s, _r, [id]) => ({ bool: await s.isPlayerConnected(id!) })),
  route('GET', '/alpha/player/connected', async (s) => ({ list: await s.getConnectedPlayers() })),
  // Counters and lists: /v1beta1 is where Agones serves them today, /v1alpha1 where the spec does.
  ...countersAndLists('/v1beta1'),
  ...countersAndLists('/v1alpha1'),
];

const STREAMING = Symbol('streaming');

/** A watch's message for one GameServer version, the same object for every watcher (its text is then made once). */
const watchMessages = new WeakMap<SdkGameServer, { result: SdkGameServer }>();
function watchMessage(gs: SdkGameServer): { result: SdkGameServer } {
  let message = watchMessages.get(gs);
  if (!message) {
    message = { result: gs };
    watchMessages.set(gs, message);
  }
  return message;
}

export function toSdkError(error: unknown): GrpcError {
  if (error instanceof GrpcError) return error;
  return new GrpcError(GrpcCode.INTERNAL, error instanceof Error ? error.message : String(error));
}

/** Finds the route and runs it; unknown paths get 404, known paths with another method 501. */
export async function dispatchSidecar(
  sidecarFor: () => Sidecar,
  request: SidecarRequest,
  sink: ResponseSink,
): Promise<void> {
  // /health without any body is refused, whatever the method, before routing (Agones's healthCheckWrapper).
  if (request.path === '/health' && request.body === undefined) return sink.reply(400, null);
  // The gateway matches on the unescaped path, so an escaped "/" splits segments like a real one.
  // (decodeURIComponent is slow even with nothing to decode: most paths have no escape.)
  let path = request.path;
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return sendError(sink, new GrpcError(GrpcCode.INVALID_ARGUMENT, `invalid URL escape in path "${request.path}"`));
    }
  }
  const found = LITERAL_ROUTES.get(path)?.get(request.method) ?? findRoute(request.method, path);
  if (!found.route) return sendError(sink, found.pathKnown ? METHOD_NOT_ALLOWED : NOT_FOUND);
  try {
    const result = await found.route.handler(sidecarFor(), request, found.params, sink);
    if (result !== STREAMING) sink.reply(200, result);
  } catch (error) {
    sendError(sink, toSdkError(error));
  }
}

interface Found {
  route: Route | undefined;
  params: string[];
  /** No route has the method, but one has the path: a 501 rather than a 404. */
  pathKnown: boolean;
}

/** The first route with the path and the method; the path under another method only is a 501. */
function findRoute(method: string, path: string): Found {
  let pathKnown = false;
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match === null) continue;
    if (route.method !== method) {
      pathKnown = true;
      continue;
    }
    return { route, params: match.slice(1), pathKnown };
  }
  return { route: undefined, params: [], pathKnown };
}

/**
 * What `findRoute` answers for each path without parameters and each method, made once: the
 * routes an SDK calls most (health, labels, the GameServer) are then one lookup, not a scan of
 * every pattern.
 */
const LITERAL_ROUTES = new Map<string, Map<string, Found>>();
for (const { path } of ROUTES) {
  if (path.includes('{') || LITERAL_ROUTES.has(path)) continue;
  const methods = new Map<string, Found>();
  for (const method of new Set(ROUTES.map((r) => r.method))) methods.set(method, findRoute(method, path));
  LITERAL_ROUTES.set(path, methods);
}

function sendError(sink: ResponseSink, error: GrpcError): void {
  sink.reply(error.httpStatus, error.toJSON());
}
