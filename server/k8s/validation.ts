/**
 * Kubernetes apimachinery validation, reproduced for fleetsim so that a client sees the same
 * error texts a real API server would send (k8s.io/apimachinery: util/validation,
 * util/validation/field; the 422 Status they end in, api/errors, is in status.ts). Behaviour and
 * wording follow apimachinery before the 2025 move to api/validate/content (Kubernetes 1.30-1.33
 * era); no code is copied.
 */

// ---------------------------------------------------------------------------------------------
// String checks: each returns the list of problems, empty when the value is valid.
// ---------------------------------------------------------------------------------------------

export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;
export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** Total bytes of annotation keys plus values (256 KiB). */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

// The patterns are kept as the exact source text because the messages quote them.
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_ERR_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_ERR_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

// Anchored whole-string matches, as Go's MatchString with ^...$ (no multiline: `$` is end of text).
const whole = (fmt: string): RegExp => new RegExp(`^(?:${fmt})$`);
const QUALIFIED_NAME_RE = whole(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = whole(LABEL_VALUE_FMT);
const DNS1123_LABEL_RE = whole(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = whole(DNS1123_SUBDOMAIN_FMT);

/**
 * Go's len(string) counts UTF-8 bytes, not UTF-16 units; lengths must agree for non-ASCII input.
 * Counted without encoding (a lone surrogate counts as its 3-byte replacement, as encoding gives).
 */
export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** apimachinery's MaxLenError. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** apimachinery's EmptyError. */
export function emptyError(): string {
  return 'must be non-empty';
}

/**
 * apimachinery's RegexError. Each example is followed by "', " and joined with " or ", which is
 * where the double space in "'MyName',  or 'my.name'" comes from.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const shown = examples.map((example) => `'${example}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

const qualifiedNameRegexError = (): string =>
  regexError(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc');

/** k8s IsQualifiedName: `[prefix/]name`, prefix a DNS-1123 subdomain, name 1..63 characters. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  // Found by index rather than split: a sidecar checks a key on every label and annotation call.
  const slash = value.indexOf('/');
  let name: string;
  if (slash < 0) {
    name = value;
  } else if (value.indexOf('/', slash + 1) < 0) {
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((msg) => `prefix part ${msg}`));
  } else {
    // More than one slash: a single message, the name part is not examined.
    return [
      `a qualified name ${qualifiedNameRegexError()} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  // The empty/length checks and the pattern check are independent, so an empty name reports both.
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!QUALIFIED_NAME_RE.test(name)) errs.push(`name part ${qualifiedNameRegexError()}`);
  return errs;
}

/** k8s IsValidLabelValue: empty, or up to 63 characters shaped like a qualified name part. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** k8s IsDNS1123Subdomain: lowercase dot-separated labels, at most 253 characters in all. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) {
    errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  }
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

/** k8s IsDNS1123Label: one lowercase DNS label, at most 63 characters. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A value that would pass as a subdomain can only be failing because of its dots, and
    // apimachinery says so instead of printing the pattern.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Field errors (apimachinery field.Error).
// ---------------------------------------------------------------------------------------------

/** The error type doubles as the Status cause `reason`, exactly as apimachinery spells it. */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueForbidden'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueNotFound'
  | 'FieldValueTooLong'
  | 'FieldValueTypeInvalid';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted field path, e.g. `metadata.labels` or `spec.ports[0].name`. */
  field: string;
  badValue?: unknown;
  detail: string;
}

/** Kubernetes's IsValidPortNum: an integer from 1 to 65535. */
export function isPortNumber(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535;
}

/** What the API server says of a port number that is not one. */
export const PORT_NUMBER_RANGE = 'must be between 1 and 65535, inclusive';

export function required(field: string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, badValue: value, detail };
}

export function forbidden(field: string, detail = ''): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

export function notSupported(field: string, value: unknown, validValues: string[]): FieldError {
  const detail =
    validValues.length > 0 ? `supported values: ${validValues.map(goQuote).join(', ')}` : '';
  return { type: 'FieldValueNotSupported', field, badValue: value, detail };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', field, badValue: value, detail: '' };
}

export function notFound(field: string, value: unknown): FieldError {
  return { type: 'FieldValueNotFound', field, badValue: value, detail: '' };
}

/**
 * The value is deliberately not kept (apimachinery records "<value omitted>" and never prints
 * it), so a huge annotation blob is not echoed back. A negative maximum means "unknown".
 */
export function tooLong(field: string, _value: unknown, maxLength: number): FieldError {
  let detail = 'value is too long';
  if (maxLength >= 0) detail = `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`;
  return { type: 'FieldValueTooLong', field, badValue: '<value omitted>', detail };
}

export function typeInvalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueTypeInvalid', field, badValue: value, detail };
}

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotFound: 'Not found',
  FieldValueTooLong: 'Too long',
  FieldValueTypeInvalid: 'Invalid value',
};

/** These types never print the bad value, whatever it holds. */
const VALUE_HIDDEN: ReadonlySet<FieldErrorType> = new Set([
  'FieldValueRequired',
  'FieldValueForbidden',
  'FieldValueTooLong',
]);

/** field.Error.ErrorBody(): the message without the leading `<field>: ` (a Status cause message). */
export function fieldErrorBody(e: FieldError): string {
  let body = TYPE_TEXT[e.type];
  if (!VALUE_HIDDEN.has(e.type)) body += `: ${renderBadValue(e.badValue)}`;
  if (e.detail.length > 0) body += `: ${e.detail}`;
  return body;
}

/** field.Error.Error(): `<field>: <body>`. */
export function fieldErrorMessage(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

// ---------------------------------------------------------------------------------------------
// Rendering values the way Go's fmt and encoding/json would.
// ---------------------------------------------------------------------------------------------

/**
 * ErrorBody prints strings with %q, bools and numbers with %v, anything else as JSON. A JS
 * integer stands for a Go int (printed plainly); any other number for a float64.
 */
function renderBadValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : goFloat(value);
  return goJSON(value) ?? 'null';
}

/** JS strings may hold lone surrogates; Go strings decoded from JSON would carry U+FFFD there. */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

// Go's strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const SHORT_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/** Go's strconv.Quote (what %q prints for a string). */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of wellFormed(value)) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (SHORT_ESCAPES[ch] !== undefined) out += SHORT_ESCAPES[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

function hex(cp: number, width: number): string {
  return cp.toString(16).padStart(width, '0');
}

/**
 * Go's %v for a float64 (%g, shortest digits): exponent form, with at least two exponent digits,
 * when the decimal exponent is below -4 or at least 6; plain decimals otherwise.
 */
function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  const [mantissa = '0', expText = '0'] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}

/** Go's encoding/json: sorted map keys, HTML-safe escapes, no spaces. undefined means "omit". */
function goJSON(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return goJSONString(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return value.toString();
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item: unknown) => goJSON(item) ?? 'null').join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .map(([key, item]) => [key, goJSON(item)] as const)
        .filter((entry): entry is readonly [string, string] => entry[1] !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([key, item]) => `${goJSONString(key)}:${item}`).join(',')}}`;
    }
    default:
      return undefined;
  }
}

function goJSONString(value: string): string {
  // JSON.stringify covers quotes, backslashes and control characters the same way Go does;
  // Go additionally escapes <, >, & and the two JS line separators.
  return JSON.stringify(wellFormed(value)).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${hex(ch.charCodeAt(0), 4)}`);
}

// ---------------------------------------------------------------------------------------------
// Object metadata.
// ---------------------------------------------------------------------------------------------

/** Go ranges over maps in random order; fleetsim reports in key order so output is repeatable. */
function sortedEntries(map: Record<string, string>): [string, string][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * apimachinery ValidateLabels: every error is reported against the map's own path (not a
 * per-key path), with the offending key or value as the bad value.
 */
export function validateLabels(labels: Record<string, string>, fieldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, value] of sortedEntries(labels)) {
    for (const msg of isQualifiedName(key)) errs.push(invalid(fieldPath, key, msg));
    for (const msg of isValidLabelValue(value)) errs.push(invalid(fieldPath, value, msg));
  }
  return errs;
}

/**
 * apimachinery ValidateAnnotations: keys are qualified names compared case-insensitively (the
 * check runs on the lowercased key, the error shows the key as given); the whole map is capped
 * at 256 KiB of keys plus values.
 */
export function validateAnnotations(
  annotations: Record<string, string>,
  fieldPath: string,
): FieldError[] {
  const errs: FieldError[] = [];
  let totalSize = 0;
  for (const [key, value] of sortedEntries(annotations)) {
    for (const msg of isQualifiedName(key.toLowerCase())) errs.push(invalid(fieldPath, key, msg));
    totalSize += byteLength(key) + byteLength(value);
  }
  if (totalSize > TOTAL_ANNOTATION_SIZE_LIMIT_B) {
    errs.push(tooLong(fieldPath, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  }
  return errs;
}
