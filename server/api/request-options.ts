import { ApiError, apiErrors } from '../k8s/status.js';
import { type FieldError, forbidden, invalid, notSupported } from '../k8s/validation.js';
import { requireBodyType } from '../k8s/decoding.js';
import type { DeletePropagation, FieldValidation } from '../resources/service.js';

/**
 * The query parameters and media types of the resource API, read and checked as the Kubernetes
 * API server reads them (k8s.io/apiserver handlers, apimachinery's ListOptions validation). Wire
 * format only: what a list or a watch then serves is the resource API's business.
 */

export type Query = Record<string, unknown>;

/** One query parameter's text: the first of repeated ones, as Go's url.Values.Get. */
export function queryText(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) return value.length ? String(value[0]) : undefined;
  return value === undefined ? undefined : String(value);
}

/** apimachinery's field errors of `kind` (ListOptions, CreateOptions, …) as one 422. */
function invalidOptions(kind: string, errors: FieldError[]): ApiError {
  return apiErrors.invalid(kind, 'meta.k8s.io', '', errors);
}

/** Go's strconv.ParseBool, as the API server decodes `watch`. */
function parseBool(name: string, text: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False', ''].includes(text)) return false;
  throw apiErrors.badRequest(`${name}: invalid value "${text}": strconv.ParseBool: parsing "${text}": invalid syntax`);
}

/** A decimal int64 query parameter (`limit`, `timeoutSeconds`). */
function parseInteger(name: string, text: string): number {
  if (!/^[-+]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw apiErrors.badRequest(`${name}: invalid value "${text}": strconv.ParseInt: parsing "${text}": invalid syntax`);
  }
  return Number(text);
}

/** A resourceVersion: the log sequence number, a decimal uint64 ("" and "0" mean "any"). */
export function parseResourceVersion(text: string): number {
  if (text === '') return 0;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw apiErrors.badRequest(`invalid resource version "${text}": resourceVersion must be a non-negative integer (the log sequence number)`);
  }
  return Number(text);
}

export type ResourceVersionMatch = 'NotOlderThan' | 'Exact';

/** A continue token: where the next page starts and the resourceVersion of the first page. */
export interface ContinueToken {
  /** -1: continue at the latest state (the token a 410 hands back). */
  resourceVersion: number;
  /** `namespace/name` of the last object of the previous page. */
  after: string;
}

export interface ListOptions {
  watch: boolean;
  /** The text given (`''` when absent). */
  resourceVersion: string;
  resourceVersionMatch: ResourceVersionMatch | undefined;
  /** At most this many items; 0: all of them. */
  limit: number;
  continueToken: ContinueToken | undefined;
  /** A watch ends after this many seconds (0: never). */
  timeoutSeconds: number;
}

const TOKEN_VERSION = 'meta.k8s.io/v1';

/** The opaque `metadata.continue` token, the shape Kubernetes gives it (base64 of a small JSON). */
export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv: token.resourceVersion, start: `${token.after}\u0000` })).toString('base64url');
}

export function decodeContinue(text: string): ContinueToken {
  const bad = (problem: string) => apiErrors.badRequest(`invalid continue token: ${problem}`);
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
  } catch {
    throw bad('continue key is not valid: not a token this server gave');
  }
  const token = decoded as { v?: unknown; rv?: unknown; start?: unknown } | null;
  if (!token || typeof token !== 'object') throw bad('continue key is not valid: not a token this server gave');
  if (token.v !== TOKEN_VERSION) throw bad(`continue key is not supported by this server (version ${String(token.v)})`);
  const rv = token.rv;
  if (typeof rv !== 'number' || !Number.isSafeInteger(rv) || (rv < 1 && rv !== -1)) {
    throw bad(`continue key is not valid: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  }
  const start = typeof token.start === 'string' && token.start.endsWith('\u0000') ? token.start.slice(0, -1) : undefined;
  if (start === undefined || !/^[^/]*\/[^/]+$/.test(start)) {
    throw bad('continue key is not valid: encoded start key is not a namespace/name');
  }
  return { resourceVersion: rv, after: start };
}

/** Reads and checks `watch`, `resourceVersion`, `resourceVersionMatch`, `limit`, `continue`, `timeoutSeconds`. */
export function listOptionsOf(query: Query): ListOptions {
  const watch = parseBool('watch', queryText(query, 'watch') ?? '');
  const resourceVersion = queryText(query, 'resourceVersion') ?? '';
  parseResourceVersion(resourceVersion);
  const match = queryText(query, 'resourceVersionMatch') ?? '';
  const continueText = queryText(query, 'continue') ?? '';
  const limitText = queryText(query, 'limit') ?? '';
  const timeoutText = queryText(query, 'timeoutSeconds') ?? '';
  const limit = limitText === '' ? 0 : parseInteger('limit', limitText);
  const timeoutSeconds = timeoutText === '' ? 0 : parseInteger('timeoutSeconds', timeoutText);
  const sendInitialEvents = queryText(query, 'sendInitialEvents');

  // apimachinery's ValidateListOptions (and its watch variant), answered as a 422 on ListOptions.
  const errors: FieldError[] = [];
  if (watch) {
    if (sendInitialEvents !== undefined) errors.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
    if (match !== '') {
      if (sendInitialEvents === undefined) errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (continueText !== '') errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  } else {
    if (match !== '') {
      if (resourceVersion === '') errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      if (continueText !== '') errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan') errors.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && resourceVersion === '0') errors.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
    if (sendInitialEvents !== undefined) errors.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (errors.length) throw invalidOptions('ListOptions', errors);

  let continueToken: ContinueToken | undefined;
  if (continueText !== '') {
    if (resourceVersion !== '' && resourceVersion !== '0') throw apiErrors.badRequest('specifying resource version is not allowed when using continue');
    continueToken = decodeContinue(continueText);
  }
  return {
    watch,
    resourceVersion,
    resourceVersionMatch: match === '' ? undefined : (match as ResourceVersionMatch),
    limit: Math.max(0, limit),
    continueToken,
    timeoutSeconds: Math.max(0, timeoutSeconds),
  };
}

/** `GET pods/{name}/log`'s options (core/v1 PodLogOptions); times in milliseconds since the epoch. */
export interface PodLogOptions {
  container: string | undefined;
  tailLines: number | undefined;
  sinceSeconds: number | undefined;
  sinceTime: number | undefined;
  limitBytes: number | undefined;
  timestamps: boolean;
  follow: boolean;
  previous: boolean;
}

/** RFC 3339, as Go's time.Parse(time.RFC3339) reads it (fractional seconds allowed). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads the pod log options as the API server does: a value that does not parse is a 400; then
 * ValidatePodLogOptions's rules are a 422 on PodLogOptions naming the pod. A sinceTime travels as
 * metav1.Time, which keeps whole seconds.
 */
export function podLogOptionsOf(query: Query, pod: string): PodLogOptions {
  const integer = (name: string) => {
    const text = queryText(query, name);
    return text === undefined || text === '' ? undefined : parseInteger(name, text);
  };
  const flag = (name: string) => parseBool(name, queryText(query, name) ?? '');
  const sinceText = queryText(query, 'sinceTime');
  let sinceTime: number | undefined;
  if (sinceText !== undefined && sinceText !== '') {
    const ms = RFC3339.test(sinceText) ? Date.parse(sinceText) : NaN;
    if (Number.isNaN(ms)) throw apiErrors.badRequest(`sinceTime: invalid value "${sinceText}": not an RFC 3339 time (2006-01-02T15:04:05Z07:00)`);
    sinceTime = Math.floor(ms / 1000) * 1000;
  }
  const options: PodLogOptions = {
    container: queryText(query, 'container') || undefined,
    tailLines: integer('tailLines'),
    sinceSeconds: integer('sinceSeconds'),
    sinceTime,
    limitBytes: integer('limitBytes'),
    timestamps: flag('timestamps'),
    follow: flag('follow'),
    previous: flag('previous'),
  };
  const errors: FieldError[] = [];
  if (options.tailLines !== undefined && options.tailLines < 0) errors.push(invalid('tailLines', options.tailLines, 'must be greater than or equal to 0'));
  if (options.limitBytes !== undefined && options.limitBytes < 1) errors.push(invalid('limitBytes', options.limitBytes, 'must be greater than 0'));
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) {
    errors.push(forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  } else if (options.sinceSeconds !== undefined && options.sinceSeconds < 1) {
    errors.push(invalid('sinceSeconds', options.sinceSeconds, 'must be greater than 0'));
  }
  if (errors.length) throw apiErrors.invalid('PodLogOptions', '', pod, errors);
  return options;
}

/** The `fieldValidation` query parameter: Strict when absent or empty; anything else than the three is a 400. */
export function fieldValidationOf(value: unknown): FieldValidation {
  const validation = value === undefined || value === '' ? 'Strict' : String(value);
  if (!['Strict', 'Warn', 'Ignore'].includes(validation)) {
    throw apiErrors.badRequest(`fieldValidation must be Strict, Warn or Ignore, not "${validation}"`);
  }
  return validation as FieldValidation;
}

/** `dryRun`: absent or empty is a real write, `All` a dry run; any other value is a 422. */
export function dryRunOf(query: Query, optionsKind: string): boolean {
  const values = dryRunValues(query);
  const errors = dryRunErrors(values);
  if (errors.length) throw invalidOptions(optionsKind, errors);
  return values.length > 0;
}

/** The query's dryRun values (an empty one means none). */
function dryRunValues(query: Query): string[] {
  const raw = query.dryRun;
  return (Array.isArray(raw) ? raw.map(String) : raw === undefined ? [] : [String(raw)]).filter((v) => v !== '');
}

/** apimachinery's ValidateDryRun: only `All`. */
function dryRunErrors(values: readonly string[]): FieldError[] {
  return values.some((v) => v !== 'All') ? [notSupported('dryRun', values, ['All'])] : [];
}

/** What a DELETE asks besides its target (metav1.DeleteOptions). */
export interface DeleteRequestOptions {
  dryRun: boolean;
  propagationPolicy?: DeletePropagation;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Read and checked; fleetsim's kinds have no graceful deletion it would shorten. */
  gracePeriodSeconds?: number;
}

const PROPAGATION_POLICIES: readonly DeletePropagation[] = ['Foreground', 'Background', 'Orphan'];

/**
 * DeleteOptions as the API server's delete handlers read them: from the body when there is one
 * (kubectl sends them there; the query is then not read), else from the query. A body that does
 * not decode into DeleteOptions is a 400 in encoding/json's words; ValidateDeleteOptions's rules
 * are a 422 on DeleteOptions.
 */
export function deleteOptionsOf(query: Query, body: unknown): DeleteRequestOptions {
  let dryRun: string[];
  let orphanDependents: boolean | undefined;
  let policy: string | undefined;
  const options: DeleteRequestOptions = { dryRun: false };
  if (body === undefined) {
    dryRun = dryRunValues(query);
    const orphanText = queryText(query, 'orphanDependents');
    if (orphanText !== undefined && orphanText !== '') orphanDependents = parseBool('orphanDependents', orphanText);
    policy = queryText(query, 'propagationPolicy') || undefined;
    const grace = queryText(query, 'gracePeriodSeconds');
    if (grace !== undefined && grace !== '') options.gracePeriodSeconds = parseInteger('gracePeriodSeconds', grace);
  } else {
    const decoded = decodeDeleteOptions(body);
    dryRun = decoded.dryRun ?? [];
    orphanDependents = decoded.orphanDependents;
    policy = decoded.propagationPolicy;
    if (decoded.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = decoded.gracePeriodSeconds;
    if (decoded.preconditions) options.preconditions = decoded.preconditions;
  }
  const errors: FieldError[] = [];
  if (orphanDependents !== undefined && policy !== undefined) {
    errors.push(invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && !(PROPAGATION_POLICIES as readonly string[]).includes(policy)) {
    errors.push(notSupported('propagationPolicy', policy, [...PROPAGATION_POLICIES, 'nil']));
  }
  errors.push(...dryRunErrors(dryRun));
  if (errors.length) throw invalidOptions('DeleteOptions', errors);
  options.dryRun = dryRun.length > 0;
  // The deprecated orphanDependents: true orphans, false deletes what the object owns.
  const propagation = (policy as DeletePropagation | undefined) ?? (orphanDependents === undefined ? undefined : orphanDependents ? 'Orphan' : 'Background');
  if (propagation) options.propagationPolicy = propagation;
  return options;
}

interface DecodedDeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  orphanDependents?: boolean;
  propagationPolicy?: string;
  dryRun?: string[];
}

/** encoding/json's name of a JSON value's type, as its UnmarshalTypeError gives it. */
function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number' || typeof value === 'bigint') return 'number';
  return typeof value === 'string' ? 'string' : 'object';
}

/** A DeleteOptions body decoded as the API server's json serializer decodes it (unknown fields ignored, null is unset). */
function decodeDeleteOptions(body: unknown): DecodedDeleteOptions {
  const typeError = (value: unknown, field: string, goType: string, struct = 'DeleteOptions') =>
    apiErrors.badRequest(`json: cannot unmarshal ${jsonTypeOf(value)} into Go struct field ${struct}.${field} of type ${goType}`);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    // The serializer reads the kind and apiVersion first, from an object.
    throw apiErrors.badRequest(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeOf(body)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const document = body as Record<string, unknown>;
  for (const key of ['kind', 'apiVersion']) {
    const value = document[key];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw apiErrors.badRequest(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeOf(value)} into Go struct field .${key} of type string`);
    }
  }
  // DeleteOptions decodes in any group version (the per-group DeleteOptions of older clients); no other kind does.
  requireBodyType(document, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', accepts: () => true, registered: (kind) => kind === 'DeleteOptions' });
  const present = (key: string) => document[key] !== undefined && document[key] !== null;
  const decoded: DecodedDeleteOptions = {};
  if (present('gracePeriodSeconds')) {
    const value = document.gracePeriodSeconds;
    if (typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))) decoded.gracePeriodSeconds = Number(value);
    else if (typeof value === 'number') throw apiErrors.badRequest(`json: cannot unmarshal number ${value} into Go struct field DeleteOptions.gracePeriodSeconds of type int64`);
    else throw typeError(value, 'gracePeriodSeconds', 'int64');
  }
  if (present('preconditions')) {
    const value = document.preconditions;
    if (typeof value !== 'object' || Array.isArray(value)) throw typeError(value, 'preconditions', 'v1.Preconditions');
    const fields = value as Record<string, unknown>;
    const preconditions: { uid?: string; resourceVersion?: string } = {};
    for (const [key, goType] of [['uid', 'types.UID'], ['resourceVersion', 'string']] as const) {
      const field = fields[key];
      if (field === undefined || field === null) continue;
      if (typeof field !== 'string') throw typeError(field, `preconditions.${key}`, goType, 'Preconditions');
      preconditions[key] = field;
    }
    decoded.preconditions = preconditions;
  }
  if (present('orphanDependents')) {
    if (typeof document.orphanDependents !== 'boolean') throw typeError(document.orphanDependents, 'orphanDependents', 'bool');
    decoded.orphanDependents = document.orphanDependents;
  }
  if (present('propagationPolicy')) {
    if (typeof document.propagationPolicy !== 'string') throw typeError(document.propagationPolicy, 'propagationPolicy', 'v1.DeletionPropagation');
    decoded.propagationPolicy = document.propagationPolicy;
  }
  if (present('dryRun')) {
    const value = document.dryRun;
    if (!Array.isArray(value)) throw typeError(value, 'dryRun', '[]string');
    const bad = value.find((v) => typeof v !== 'string');
    if (bad !== undefined) throw typeError(bad, 'dryRun', 'string');
    decoded.dryRun = value as string[];
  }
  return decoded;
}

/** The `*Options` kind named by the API server's errors for a write of this method. */
export function writeOptionsKind(method: string): string {
  return method === 'POST' ? 'CreateOptions' : method === 'PUT' ? 'UpdateOptions' : method === 'PATCH' ? 'PatchOptions' : 'DeleteOptions';
}

// ---------------------------------------------------------------------------------------------
// Media types of request bodies
// ---------------------------------------------------------------------------------------------

/** Bodies a create or an update is read from (JSON, or YAML as kubectl may send). */
export const OBJECT_MEDIA_TYPES = ['application/json', 'application/yaml'];
/** Kubernetes protobuf: client-go's bodies for built-in kinds (server/k8s/protobuf.ts reads them). */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** Bodies a PATCH is read from. */
export const PATCH_MEDIA_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** `Application/JSON; charset=utf-8` → `application/json`. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * A body in a format the API does not read is a 415 before anything else: a browser's
 * cross-site "simple" request (text/plain, form data) never reaches a handler. No Content-Type
 * on a create or an update is read as JSON, as the API server does. `protobuf: false` for a
 * surface that reads only JSON and YAML (the allocation route: GameServerAllocation is no built-in kind).
 */
export function checkBodyMediaType(method: string, contentType: string | undefined, { protobuf = true } = {}): void {
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return;
  const type = mediaTypeOf(contentType);
  // A patch is never protobuf (client-go sends its patches as JSON).
  const accepted = method === 'PATCH' ? PATCH_MEDIA_TYPES : protobuf ? [...OBJECT_MEDIA_TYPES, PROTOBUF_MEDIA_TYPE] : OBJECT_MEDIA_TYPES;
  if (type === '' && method !== 'PATCH') return;
  if (!accepted.includes(type)) throw apiErrors.unsupportedMediaType(contentType ?? '', accepted);
}
