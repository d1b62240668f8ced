import { apiErrors } from '../k8s/status.js';
import { fieldErrorMessage, goQuote, invalid, isQualifiedName, isValidLabelValue } from '../k8s/validation.js';

/** A parsed label selector: every requirement must hold. */
export interface Requirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values: string[];
}
export type LabelSelector = Requirement[];

/** A Kubernetes label selector object (metav1.LabelSelector), as manifests and requests carry it. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

export interface MetaLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Go's %#v of a []string, as apimachinery prints a requirement's values. */
function goStringSlice(values: readonly string[] | undefined): string {
  if (!values || values.length === 0) return '[]string(nil)';
  return `[]string{${values.map(goQuote).join(', ')}}`;
}

/** utilerrors.Aggregate's text: one message alone, several de-duplicated in brackets. */
function aggregate(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/**
 * labels.NewRequirement's checks, with apimachinery's texts, for parsed and converted selectors
 * alike; `values` as given (an empty list is Go's nil slice). Empty when the requirement is valid.
 */
function requirementErrors(key: string, operator: Requirement['operator'] | 'Equals', values: readonly string[]): string[] {
  const errs: string[] = [];
  const keyProblems = isQualifiedName(key);
  if (keyProblems.length > 0) errs.push(fieldErrorMessage(invalid('key', key, keyProblems.join('; '))));
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
    errs.push(`values: Invalid value: ${goStringSlice(values)}: for 'in', 'notin' operators, values set can't be empty`);
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length !== 0) {
    errs.push(`values: Invalid value: ${goStringSlice(values)}: values set must be empty for exists and does not exist`);
  }
  if ((operator === 'Gt' || operator === 'Lt') && values.some((v) => !/^[-+]?\d+$/.test(v))) {
    errs.push(`values[0]: Invalid value: "${values[0]}": for 'Gt', 'Lt' operators, the value must be an integer`);
  }
  values.forEach((value, i) => {
    const problems = isValidLabelValue(value);
    if (problems.length > 0) errs.push(fieldErrorMessage(invalid(`values[${i}][${key}]`, value, problems.join('; '))));
  });
  return errs;
}

const OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

export type LabelSelectorConversion = { ok: true; requirements: Requirement[] } | { ok: false; error: string };

/**
 * Converts a label selector object into requirements (metav1.LabelSelectorAsSelector), failing
 * on the first bad one with the error text apimachinery gives. matchLabels are read in key order
 * (Go's map order is random).
 */
export function convertLabelSelector(selector: MetaLabelSelector): LabelSelectorConversion {
  const requirements: Requirement[] = [];
  const matchLabels = selector.matchLabels ?? {};
  for (const key of Object.keys(matchLabels).sort()) {
    const value = matchLabels[key]!;
    const errs = requirementErrors(key, 'Equals', [value]);
    if (errs.length > 0) return { ok: false, error: aggregate(errs) };
    requirements.push({ key, operator: 'In', values: [value] });
  }
  for (const expression of selector.matchExpressions ?? []) {
    const { key = '', operator, values = [] } = expression ?? ({} as Partial<LabelSelectorRequirement>);
    if (!operator || !OPERATORS.has(operator)) {
      return { ok: false, error: `${goQuote(String(operator ?? ''))} is not a valid label selector operator` };
    }
    const errs = requirementErrors(key, operator, values ?? []);
    if (errs.length > 0) return { ok: false, error: aggregate(errs) };
    requirements.push({ key, operator, values: [...(values ?? [])] });
  }
  return { ok: true, requirements };
}

/**
 * A label selector object in the text form `kubectl -l` takes (apimachinery's
 * FormatLabelSelector): `a=b,c in (x,y),!d`; `<none>` when it selects everything.
 */
export function formatLabelSelector(selector: MetaLabelSelector): string {
  const terms = Object.keys(selector.matchLabels ?? {})
    .sort()
    .map((key) => `${key}=${selector.matchLabels![key]}`);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (operator === 'Exists') terms.push(key);
    else if (operator === 'DoesNotExist') terms.push(`!${key}`);
    else terms.push(`${key} ${operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`);
  }
  return terms.length > 0 ? terms.join(',') : '<none>';
}

// The `labelSelector` query grammar of apimachinery's labels.Parse: a lexer of identifiers and
// operators, then requirements separated by commas. Errors carry its wording, so a client sees
// what a real API server would tell it.

type TokenType = 'identifier' | 'in' | 'notin' | '!' | '!=' | '(' | ')' | ',' | '=' | '==' | '>' | '<' | 'end';
interface Token {
  type: TokenType;
  text: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (WHITESPACE.has(c)) {
      i++;
      continue;
    }
    if (SPECIAL.has(c)) {
      const two = text.slice(i, i + 2);
      const type = (two === '!=' || two === '==' ? two : c) as TokenType;
      tokens.push({ type, text: type });
      i += type.length;
      continue;
    }
    let end = i;
    while (end < text.length && !WHITESPACE.has(text[end]!) && !SPECIAL.has(text[end]!)) end++;
    const word = text.slice(i, end);
    tokens.push({ type: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'identifier', text: word });
    i = end;
  }
  tokens.push({ type: 'end', text: '' });
  return tokens;
}

class SelectorSyntaxError extends Error {}

/** labels.NewRequirement's checks on a parsed requirement. */
function checkRequirement(r: Requirement): void {
  const problems = requirementErrors(r.key, r.operator, r.values);
  if (problems.length) throw new SelectorSyntaxError(aggregate(problems));
}

/**
 * Parses the `labelSelector` query syntax: `a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`. A syntax
 * error or an invalid key or value is a 400 that names the selector and the problem.
 */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return parseRequirements(lex(text));
  } catch (error) {
    if (!(error instanceof SelectorSyntaxError)) throw error;
    throw apiErrors.badRequest(`unable to parse labelSelector ${JSON.stringify(text)}: ${error.message}`);
  }
}

function parseRequirements(tokens: Token[]): LabelSelector {
  let at = 0;
  // In a value position `in` and `notin` are ordinary words.
  const peek = (): Token => {
    const t = tokens[at]!;
    return t.type === 'in' || t.type === 'notin' ? { type: 'identifier', text: t.text } : t;
  };
  const next = (): Token => {
    const t = peek();
    at++;
    return t;
  };
  const requirements: Requirement[] = [];

  const parseValues = (): string[] => {
    const open = next();
    if (open.type !== '(') throw new SelectorSyntaxError(`found '${open.text}', expected: '('`);
    const values = new Set<string>();
    let expectValue = true;
    for (;;) {
      const t = next();
      if (t.type === ')') {
        if (expectValue) values.add('');
        return [...values].sort();
      }
      if (t.type === ',') {
        if (expectValue) values.add('');
        expectValue = true;
        continue;
      }
      if (t.type === 'identifier' && expectValue) {
        values.add(t.text);
        expectValue = false;
        continue;
      }
      if (t.type === 'end') throw new SelectorSyntaxError(`found '', expected: ',' or ')'`);
      throw new SelectorSyntaxError(`found '${t.text}', expected: ${expectValue ? "',', ')' or identifier" : "',' or ')'"}`);
    }
  };

  const parseRequirement = (): Requirement => {
    let negated = false;
    let t = next();
    if (t.type === '!') {
      negated = true;
      t = next();
    }
    if (t.type !== 'identifier') throw new SelectorSyntaxError(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const after = tokens[at]!;
    if (after.type === 'end' || after.type === ',') return { key, operator: negated ? 'DoesNotExist' : 'Exists', values: [] };
    if (negated) throw new SelectorSyntaxError(`found '${after.text}', expected: ',' or 'end of string'`);
    const op = tokens[at++]!;
    switch (op.type) {
      case 'in':
      case 'notin':
        return { key, operator: op.type === 'in' ? 'In' : 'NotIn', values: parseValues() };
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<': {
        const value = peek();
        let values: string[];
        if (value.type === 'end' || value.type === ',') values = [''];
        else if (value.type === 'identifier') values = [next().text];
        else throw new SelectorSyntaxError(`found '${value.text}', expected: identifier`);
        const operator = op.type === '!=' ? 'NotIn' : op.type === '>' ? 'Gt' : op.type === '<' ? 'Lt' : 'In';
        return { key, operator, values };
      }
      default:
        throw new SelectorSyntaxError(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  };

  for (;;) {
    const t = peek();
    if (t.type === 'end') return requirements;
    if (t.type !== 'identifier' && t.type !== '!') {
      throw new SelectorSyntaxError(`found '${t.text}', expected: !, identifier, or 'end of string'`);
    }
    const requirement = parseRequirement();
    checkRequirement(requirement);
    requirements.push(requirement);
    const separator = next();
    if (separator.type === 'end') return requirements;
    if (separator.type !== ',') throw new SelectorSyntaxError(`found '${separator.text}', expected: ',' or 'end of string'`);
    const following = peek();
    if (following.type !== 'identifier' && following.type !== '!') {
      throw new SelectorSyntaxError(`found '${following.text}', expected: identifier after ','`);
    }
  }
}

/** Whether `labels` hold every key and value of a plain selector (a Service's, a nodeSelector, matchLabels alone). */
export function hasLabels(labels: Record<string, string> | undefined, selector: Record<string, string>): boolean {
  for (const key in selector) if (labels?.[key] !== selector[key]) return false;
  return true;
}

export function matchesSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  // A plain loop: the allocator asks this of every candidate and every change, and a callback
  // (`every`) allocated a closure each time.
  for (let i = 0; i < selector.length; i++) if (!matchesRequirement(selector[i]!, labels)) return false;
  return true;
}

function matchesRequirement(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.operator) {
    case 'In':
      return has && r.values.includes(labels[r.key]!);
    case 'NotIn':
      return !has || !r.values.includes(labels[r.key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      // A label that is not an integer never matches (apimachinery's Requirement.Matches).
      if (!has || !/^[-+]?\d+$/.test(labels[r.key]!)) return false;
      const label = Number(labels[r.key]);
      const bound = Number(r.values[0]);
      return r.operator === 'Gt' ? label > bound : label < bound;
    }
  }
}

/** Fields a field selector may name, per kind (as the API server allows them). */
const FIELD_LABELS: Record<string, string[]> = {
  '*': ['metadata.name', 'metadata.namespace'],
  Event: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'reason',
    'type',
    'source',
  ],
  GameServer: ['status.state'],
  Namespace: ['status.phase'],
  Pod: ['spec.nodeName', 'status.phase'],
  Secret: ['type'],
};

function fieldValue(object: Record<string, unknown>, path: string): string {
  if (path === 'source') return String((object.source as { component?: string } | undefined)?.component ?? '');
  let node: unknown = object;
  for (const part of path.split('.')) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  return node === undefined || node === null ? '' : String(node);
}

/** Splits on commas that are not escaped with a backslash (apimachinery's fields.splitTerms). */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i]!;
    } else if (c === ',') {
      terms.push(current);
      current = '';
    } else current += c;
  }
  terms.push(current);
  return terms;
}

/** `\,` `\=` `\\` stand for themselves; any other escape, or a bare `,` or `=`, is an error. */
function unescapeFieldValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const escaped = value[i + 1];
      if (escaped !== '\\' && escaped !== ',' && escaped !== '=') throw new SelectorSyntaxError(`invalid escape sequence: \\${escaped ?? ''}`);
      out += escaped;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorSyntaxError(`unescaped character in value: ${c}`);
    } else out += c;
  }
  return out;
}

/**
 * Parses a `fieldSelector` (`a=b`, `a==b`, `a!=b`, comma-separated, `\` escapes in values) into
 * a predicate. A term without an operator, a bad escape or a field the kind does not support is
 * a 400 naming the selector and the problem.
 */
export function parseFieldSelector(text: string, kind: string): (object: object) => boolean {
  const allowed = [...FIELD_LABELS['*']!, ...(FIELD_LABELS[kind] ?? [])];
  const tests = splitTerms(text)
    .filter((term) => term !== '')
    .map((term) => {
      const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
      if (!m) throw apiErrors.badRequest(`invalid fieldSelector ${JSON.stringify(text)}: can't understand '${term}'`);
      const [, field, op, rawValue] = m as unknown as [string, string, string, string];
      let value: string;
      try {
        value = unescapeFieldValue(rawValue);
      } catch (error) {
        if (!(error instanceof SelectorSyntaxError)) throw error;
        throw apiErrors.badRequest(`invalid fieldSelector ${JSON.stringify(text)}: ${error.message}`);
      }
      if (!allowed.includes(field)) throw apiErrors.badRequest(`fieldSelector ${JSON.stringify(text)}: field label not supported: ${field}`);
      return (object: object) => (fieldValue(object as Record<string, unknown>, field) === value) === (op !== '!=');
    });
  return (object) => tests.every((t) => t(object));
}
