import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readInputFile } from '../../server/input-file.js';
import { parse } from 'yaml';

/**
 * The cases of `fleetsim conformance sidecar`, read from data: one YAML file per area under
 * conformance/sidecar-cases/, run in file-name order against one target and one reference whose
 * state carries from case to case and from area to area (a target such as Agones's
 * `sdk-server --local` cannot be reset, so the whole run is one sequence).
 */

export interface HttpRequestStep {
  method: string;
  path: string;
  /** A JSON body, sent as its text with `Content-Type: application/json`. */
  body?: unknown;
  /** A body sent as given, byte for byte (malformed JSON and the like). */
  raw?: string;
  /** A body of this many bytes (`{"x":"aaaa…"}`), to find a body-size limit. */
  bodyBytes?: number;
  headers?: Record<string, string>;
}

export interface GrpcRequestStep {
  /** The SDK's services: `sdk` (agones.dev.sdk.SDK), `alpha`, `beta`. */
  service: 'sdk' | 'alpha' | 'beta';
  /** The method as the generated client names it: ready, setLabel, getCounter… */
  method: string;
  /**
   * The request message as its generated class's setters name fields (`key`, `seconds`,
   * `valuesList`); a nested message is an object naming its class in `$type` (e.g. `List`,
   * `google.protobuf.Int64Value`, `google.protobuf.FieldMask`).
   */
  request?: Record<string, unknown>;
}

export interface WatchStep {
  via: 'ndjson' | 'websocket' | 'grpc';
  /**
   * What is done while the watch is open; the watch's messages that follow are compared. The
   * steps should change the GameServer: the watch waits for the message that shows it.
   */
  then: Array<{ http?: HttpRequestStep; grpc?: GrpcRequestStep }>;
}

export interface SidecarCase {
  name: string;
  http?: HttpRequestStep;
  grpc?: GrpcRequestStep;
  watch?: WatchStep;
  /** Response headers compared besides content-type (lower case). */
  headers?: string[];
  /**
   * Asks again (for up to 30 s) while a field of the answer holds a passing value, e.g. a state
   * that a controller moves on from (RequestReady): `{ field: body.status.state, not: [RequestReady] }`.
   */
  until?: { field: string; not: string[] };
}

export interface SidecarArea {
  area: string;
  /** Why the area exists, for a reader of the file. */
  about?: string;
  /** `grpc`: the area runs only when --grpc names the target's gRPC port. */
  needs?: 'grpc';
  cases: SidecarCase[];
  file: string;
}

export interface KnownDifference {
  id: string;
  about: string;
  /** The profiles in which the target is expected to differ this way. */
  profiles: string[];
  /** `area/case` patterns; `*` matches any run of characters. */
  cases: string[];
  /**
   * Regular expressions on the JSON path of a difference (`$.body.message`): when given, only
   * differences at such paths are known, and the rest of the answer is still compared.
   */
  paths?: RegExp[];
  /**
   * Gates whose defaults differ between the spec and the target: the difference is known only
   * when --feature-gates leaves all of them to their defaults.
   */
  gatesLeftToDefault?: string[];
}

export class CaseFileError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(file: string, where: string, message: string): never {
  throw new CaseFileError(`${file}: ${where}: ${message}`);
}

function checkKeys(file: string, where: string, value: Record<string, unknown>, allowed: string[]): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) fail(file, where, `unknown key "${key}" (allowed: ${allowed.join(', ')})`);
}

function checkHttp(file: string, where: string, step: unknown): HttpRequestStep {
  if (!isObject(step)) fail(file, where, 'must be an object with method and path');
  checkKeys(file, where, step, ['method', 'path', 'body', 'raw', 'bodyBytes', 'headers']);
  if (typeof step.method !== 'string' || !/^[A-Z]+$/.test(step.method)) fail(file, `${where}.method`, 'must be an HTTP method in capitals');
  if (typeof step.path !== 'string' || !step.path.startsWith('/')) fail(file, `${where}.path`, 'must be a path starting with /');
  if (step.raw !== undefined && typeof step.raw !== 'string') fail(file, `${where}.raw`, 'must be a string');
  if (step.bodyBytes !== undefined && !(Number.isInteger(step.bodyBytes) && (step.bodyBytes as number) > 10)) fail(file, `${where}.bodyBytes`, 'must be an integer above 10');
  if ([step.body, step.raw, step.bodyBytes].filter((b) => b !== undefined).length > 1) fail(file, where, 'give one of body, raw and bodyBytes');
  if (step.headers !== undefined && (!isObject(step.headers) || Object.values(step.headers).some((v) => typeof v !== 'string'))) {
    fail(file, `${where}.headers`, 'must map header names to strings');
  }
  return step as unknown as HttpRequestStep;
}

function checkGrpc(file: string, where: string, step: unknown): GrpcRequestStep {
  if (!isObject(step)) fail(file, where, 'must be an object with service and method');
  checkKeys(file, where, step, ['service', 'method', 'request']);
  if (!['sdk', 'alpha', 'beta'].includes(step.service as string)) fail(file, `${where}.service`, 'must be sdk, alpha or beta');
  if (typeof step.method !== 'string' || step.method === '') fail(file, `${where}.method`, 'must name a method');
  if (step.request !== undefined && !isObject(step.request)) fail(file, `${where}.request`, 'must be an object');
  return step as unknown as GrpcRequestStep;
}

function checkCase(file: string, where: string, raw: unknown): SidecarCase {
  if (!isObject(raw)) fail(file, where, 'must be an object');
  checkKeys(file, where, raw, ['name', 'http', 'grpc', 'watch', 'headers', 'until']);
  if (typeof raw.name !== 'string' || raw.name === '') fail(file, `${where}.name`, 'must be a non-empty string');
  const at = `${where} (${raw.name})`;
  const kinds = (['http', 'grpc', 'watch'] as const).filter((k) => raw[k] !== undefined);
  if (kinds.length !== 1) fail(file, at, 'give exactly one of http, grpc and watch');
  if (raw.http !== undefined) checkHttp(file, `${at}.http`, raw.http);
  if (raw.grpc !== undefined) checkGrpc(file, `${at}.grpc`, raw.grpc);
  if (raw.watch !== undefined) {
    const watch = raw.watch;
    if (!isObject(watch)) fail(file, `${at}.watch`, 'must be an object with via and then');
    checkKeys(file, `${at}.watch`, watch, ['via', 'then']);
    if (!['ndjson', 'websocket', 'grpc'].includes(watch.via as string)) fail(file, `${at}.watch.via`, 'must be ndjson, websocket or grpc');
    if (!Array.isArray(watch.then)) fail(file, `${at}.watch.then`, 'must be a list of steps');
    watch.then.forEach((step, i) => {
      const w = `${at}.watch.then[${i}]`;
      if (!isObject(step)) fail(file, w, 'must be an object with http or grpc');
      checkKeys(file, w, step, ['http', 'grpc']);
      if (step.http !== undefined) checkHttp(file, `${w}.http`, step.http);
      else if (step.grpc !== undefined) checkGrpc(file, `${w}.grpc`, step.grpc);
      else fail(file, w, 'give http or grpc');
    });
  }
  if (raw.until !== undefined) {
    const until = raw.until;
    if (!isObject(until) || typeof until.field !== 'string' || !Array.isArray(until.not) || !until.not.every((v) => typeof v === 'string')) {
      fail(file, `${at}.until`, 'must be { field: a.dotted.path, not: [values] }');
    }
    checkKeys(file, `${at}.until`, until, ['field', 'not']);
  }
  if (raw.headers !== undefined && !(Array.isArray(raw.headers) && raw.headers.every((h) => typeof h === 'string'))) {
    fail(file, `${at}.headers`, 'must be a list of header names');
  }
  return raw as unknown as SidecarCase;
}

/** YAML text as data; a syntax error names the file. */
function parseYaml(name: string, text: string): unknown {
  try {
    return parse(text) as unknown;
  } catch (error) {
    throw new CaseFileError(`${name}: ${(error as Error).message.split('\n')[0]}`);
  }
}

export function parseArea(file: string, text: string): SidecarArea {
  const name = basename(file);
  const doc = parseYaml(name, text);
  if (!isObject(doc)) fail(name, 'top level', 'must be an object with area and cases');
  checkKeys(name, 'top level', doc, ['area', 'about', 'needs', 'cases']);
  if (typeof doc.area !== 'string' || !/^[a-z0-9-]+$/.test(doc.area)) fail(name, 'area', 'must be a name in lower case (a-z, 0-9, -)');
  if (doc.needs !== undefined && doc.needs !== 'grpc') fail(name, 'needs', 'may only be "grpc"');
  if (!Array.isArray(doc.cases) || doc.cases.length === 0) fail(name, 'cases', 'must be a non-empty list');
  const cases = doc.cases.map((c, i) => checkCase(name, `cases[${i}]`, c));
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.name)) fail(name, 'cases', `two cases are named "${c.name}"`);
    seen.add(c.name);
  }
  return { area: doc.area, about: doc.about as string | undefined, needs: doc.needs as 'grpc' | undefined, cases, file };
}

/** Every *.yaml file of `dir`, in file-name order; area names must be unique. */
export function loadAreas(dir: string): SidecarArea[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
  const areas = files.map((f) => parseArea(join(dir, f), readInputFile(join(dir, f))));
  const names = new Set<string>();
  for (const a of areas) {
    if (names.has(a.area)) throw new CaseFileError(`${basename(a.file)}: area "${a.area}" is also the area of another file`);
    names.add(a.area);
  }
  return areas;
}

export function parseKnownDifferences(file: string, text: string, profiles: readonly string[]): KnownDifference[] {
  const name = basename(file);
  const doc = parseYaml(name, text);
  if (!Array.isArray(doc)) fail(name, 'top level', 'must be a list of known differences');
  const ids = new Set<string>();
  return doc.map((entry, i) => {
    const where = `[${i}]`;
    if (!isObject(entry)) fail(name, where, 'must be an object with id, about, profiles and cases');
    checkKeys(name, where, entry, ['id', 'about', 'profiles', 'cases', 'paths', 'gatesLeftToDefault']);
    if (typeof entry.id !== 'string' || !/^[a-z0-9-]+$/.test(entry.id)) fail(name, `${where}.id`, 'must be a name in lower case (a-z, 0-9, -)');
    if (ids.has(entry.id)) fail(name, `${where}.id`, `"${entry.id}" is given twice`);
    ids.add(entry.id);
    if (typeof entry.about !== 'string' || entry.about.trim() === '') fail(name, `${where}.about`, 'must say what differs and why');
    for (const key of ['profiles', 'cases'] as const) {
      const list = entry[key];
      if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string')) fail(name, `${where}.${key}`, 'must be a non-empty list of strings');
    }
    for (const profile of entry.profiles as string[]) if (!profiles.includes(profile)) fail(name, `${where}.profiles`, `"${profile}" is not one of ${profiles.join(', ')}`);
    let paths: RegExp[] | undefined;
    if (entry.paths !== undefined) {
      if (!Array.isArray(entry.paths) || !entry.paths.every((p) => typeof p === 'string')) fail(name, `${where}.paths`, 'must be a list of regular expressions');
      paths = entry.paths.map((p: string) => {
        try {
          return new RegExp(p);
        } catch (error) {
          return fail(name, `${where}.paths`, (error as Error).message);
        }
      });
    }
    const gates = entry.gatesLeftToDefault;
    if (gates !== undefined && !(Array.isArray(gates) && gates.every((g) => typeof g === 'string'))) fail(name, `${where}.gatesLeftToDefault`, 'must be a list of gate names');
    return {
      id: entry.id,
      about: entry.about.trim(),
      profiles: entry.profiles as string[],
      cases: entry.cases as string[],
      ...(paths ? { paths } : {}),
      ...(gates ? { gatesLeftToDefault: gates as string[] } : {}),
    };
  });
}

export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

export interface KnownContext {
  profile: string;
  /** The gates --feature-gates names (set either way). */
  gatesGiven: ReadonlySet<string>;
}

/** The known difference that covers a difference at `path` in the answers of `area/case`, if any. */
export function knownDifferenceFor(known: readonly KnownDifference[], context: KnownContext, area: string, name: string, path: string): KnownDifference | undefined {
  const key = `${area}/${name}`;
  // An entry that names whole cases says more about them than one excusing a field anywhere: it is tried first.
  const ordered = [...known.filter((k) => k.paths === undefined), ...known.filter((k) => k.paths !== undefined)];
  return ordered.find(
    (k) =>
      k.profiles.includes(context.profile) &&
      k.cases.some((glob) => globToRegExp(glob).test(key)) &&
      (k.paths === undefined || k.paths.some((p) => p.test(path))) &&
      (k.gatesLeftToDefault === undefined || k.gatesLeftToDefault.every((gate) => !context.gatesGiven.has(gate))),
  );
}
