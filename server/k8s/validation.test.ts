import { describe, expect, it } from 'vitest';
import {
  type FieldError,
  byteLength,
  duplicate,
  fieldErrorBody,
  fieldErrorMessage,
  forbidden,
  goQuote,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  notSupported,
  required,
  tooLong,
  typeInvalid,
  validateAnnotations,
  validateLabels,
} from './validation.js';
import { statusCause } from './status.js';

// Expected texts are written out in full, as apimachinery prints them, rather than rebuilt from
// the module's own helpers: the point of these tests is the exact wording.
const QNAME_REGEX =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const NAME_PART_REGEX = `name part ${QNAME_REGEX}`;
const MULTI_SLASH = `a qualified name ${QNAME_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const LABEL_VALUE_REGEX =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

const a = (n: number): string => 'a'.repeat(n);
// A subdomain of exactly `n` characters made of valid 63-character labels.
const subdomain = (n: number): string => {
  const labels: string[] = [];
  let left = n;
  while (left > 0) {
    const take = Math.min(63, left === 64 ? 62 : left);
    labels.push(a(take));
    left -= take + 1;
  }
  return labels.join('.');
};

describe('isQualifiedName', () => {
  it.each<[string, string]>([
    ['simple', 'app'],
    ['single character', 'a'],
    ['digit', '1'],
    ['mixed punctuation', 'My_Name.v-1'],
    ['63-character name', a(63)],
    ['prefixed', 'example.com/name'],
    ['agones prefix', 'agones.dev/fleet'],
    ['253-character prefix', `${subdomain(253)}/x`],
  ])('accepts %s', (_label, value) => {
    expect(isQualifiedName(value)).toEqual([]);
  });

  it('builds test subdomains of the requested length', () => {
    expect(subdomain(253)).toHaveLength(253);
    expect(subdomain(254)).toHaveLength(254);
    expect(subdomain(64)).toHaveLength(64);
  });

  it.each<[string, string, string[]]>([
    ['empty', '', ['name part must be non-empty', NAME_PART_REGEX]],
    ['64-character name', a(64), ['name part must be no more than 63 characters']],
    ['64 characters ending badly', `${a(63)}-`, ['name part must be no more than 63 characters', NAME_PART_REGEX]],
    ['leading dash', '-app', [NAME_PART_REGEX]],
    ['trailing dot', 'app.', [NAME_PART_REGEX]],
    ['space', 'my app', [NAME_PART_REGEX]],
    ['colon', 'a:b', [NAME_PART_REGEX]],
    ['non-ASCII', 'café', [NAME_PART_REGEX]],
    ['empty prefix', '/name', ['prefix part must be non-empty']],
    ['empty name after prefix', 'example.com/', ['name part must be non-empty', NAME_PART_REGEX]],
    ['uppercase prefix', 'Example.com/name', [`prefix part ${SUBDOMAIN_REGEX}`]],
    ['prefix with underscore', 'my_domain/name', [`prefix part ${SUBDOMAIN_REGEX}`]],
    [
      '254-character prefix',
      `${subdomain(254)}/name`,
      ['prefix part must be no more than 253 characters'],
    ],
    ['bad prefix and bad name', 'A/-b', [`prefix part ${SUBDOMAIN_REGEX}`, NAME_PART_REGEX]],
    ['two slashes', 'a/b/c', [MULTI_SLASH]],
    ['only slashes', '//', [MULTI_SLASH]],
  ])('rejects %s', (_label, value, expected) => {
    expect(isQualifiedName(value)).toEqual(expected);
  });

  it('counts the name length in UTF-8 bytes, as Go does', () => {
    // 32 two-byte characters are 64 bytes although JS sees 32 units.
    expect(isQualifiedName('é'.repeat(32))).toEqual([
      'name part must be no more than 63 characters',
      NAME_PART_REGEX,
    ]);
  });

  it('counts what encoding would give: 4 bytes for an astral character, 3 for a lone surrogate', () => {
    for (const text of ['abc', 'é', '😀', '\ud800', 'a\udc00b', '€'.repeat(5)]) {
      expect(byteLength(text)).toBe(new TextEncoder().encode(text).length);
    }
    expect(byteLength('\ud800')).toBe(3);
  });
});

describe('isValidLabelValue', () => {
  it.each<[string]>([[''], ['a'], ['MyValue'], ['my_value'], ['12345'], ['1.2-3_4'], [a(63)]])(
    'accepts %j',
    (value) => {
      expect(isValidLabelValue(value)).toEqual([]);
    },
  );

  it.each<[string, string[]]>([
    [a(64), ['must be no more than 63 characters']],
    [`${a(63)}.`, ['must be no more than 63 characters', LABEL_VALUE_REGEX]],
    ['-a', [LABEL_VALUE_REGEX]],
    ['a_', [LABEL_VALUE_REGEX]],
    ['has space', [LABEL_VALUE_REGEX]],
    ['a/b', [LABEL_VALUE_REGEX]],
    ['line\n', [LABEL_VALUE_REGEX]],
  ])('rejects %j', (value, expected) => {
    expect(isValidLabelValue(value)).toEqual(expected);
  });
});

describe('isDNS1123Subdomain', () => {
  it.each<[string]>([['a'], ['example.com'], ['1-2.3'], [subdomain(253)]])('accepts %j', (value) => {
    expect(isDNS1123Subdomain(value)).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['', [SUBDOMAIN_REGEX]],
    ['Example.com', [SUBDOMAIN_REGEX]],
    ['a..b', [SUBDOMAIN_REGEX]],
    ['-a.com', [SUBDOMAIN_REGEX]],
    ['a-.com', [SUBDOMAIN_REGEX]],
    ['under_score', [SUBDOMAIN_REGEX]],
    [subdomain(254), ['must be no more than 253 characters']],
    [`${subdomain(253)}-`, ['must be no more than 253 characters', SUBDOMAIN_REGEX]],
  ])('rejects %j', (value, expected) => {
    expect(isDNS1123Subdomain(value)).toEqual(expected);
  });
});

describe('isDNS1123Label', () => {
  it.each<[string]>([['a'], ['my-name'], ['123-abc'], [a(63)]])('accepts %j', (value) => {
    expect(isDNS1123Label(value)).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['', [LABEL_REGEX]],
    ['My-Name', [LABEL_REGEX]],
    ['-a', [LABEL_REGEX]],
    ['a_b', [LABEL_REGEX]],
    [a(64), ['must be no more than 63 characters']],
    // A valid subdomain that is not a label can only be failing on its dots.
    ['example.com', ['must not contain dots']],
    [`${a(60)}.${a(3)}`, ['must be no more than 63 characters', 'must not contain dots']],
    ['a..b', [LABEL_REGEX]],
  ])('rejects %j', (value, expected) => {
    expect(isDNS1123Label(value)).toEqual(expected);
  });
});

describe('field errors', () => {
  it.each<[string, FieldError, string]>([
    ['required, no detail', required('metadata.name'), 'metadata.name: Required value'],
    [
      'required with detail',
      required('metadata.name', 'name or generateName is required'),
      'metadata.name: Required value: name or generateName is required',
    ],
    [
      'invalid string',
      invalid('metadata.name', 'Bad_Name', 'must be lowercase'),
      'metadata.name: Invalid value: "Bad_Name": must be lowercase',
    ],
    [
      'invalid integer',
      invalid('spec.replicas', -1, 'must be greater than or equal to 0'),
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ],
    ['invalid float', invalid('spec.x', 0.5, 'd'), 'spec.x: Invalid value: 0.5: d'],
    ['invalid small float', invalid('spec.x', 0.00001, 'd'), 'spec.x: Invalid value: 1e-05: d'],
    ['invalid large float', invalid('spec.x', 1234567.5, 'd'), 'spec.x: Invalid value: 1.2345675e+06: d'],
    ['invalid boolean', invalid('spec.on', true, 'd'), 'spec.on: Invalid value: true: d'],
    ['invalid null', invalid('spec.x', null, 'd'), 'spec.x: Invalid value: null: d'],
    [
      'invalid object renders as sorted Go JSON',
      invalid('spec.x', { b: 1, a: ['<x>', 'y'] }, 'd'),
      'spec.x: Invalid value: {"a":["\\u003cx\\u003e","y"],"b":1}: d',
    ],
    [
      'invalid string with quotes and control characters',
      invalid('f', 'say "hi"\n\t\x01\u00a0é', 'd'),
      'f: Invalid value: "say \\"hi\\"\\n\\t\\x01\\u00a0é": d',
    ],
    ['invalid, empty detail', invalid('f', 'x', ''), 'f: Invalid value: "x"'],
    [
      'forbidden',
      forbidden('spec.ports', 'may not be changed'),
      'spec.ports: Forbidden: may not be changed',
    ],
    [
      'not supported',
      notSupported('spec.scheduling', 'Random', ['Packed', 'Distributed']),
      'spec.scheduling: Unsupported value: "Random": supported values: "Packed", "Distributed"',
    ],
    [
      'not supported, no list',
      notSupported('spec.scheduling', 'Random', []),
      'spec.scheduling: Unsupported value: "Random"',
    ],
    [
      'duplicate',
      duplicate('spec.ports[1].name', 'default'),
      'spec.ports[1].name: Duplicate value: "default"',
    ],
    [
      'too long',
      tooLong('metadata.annotations', 'x'.repeat(10), 262144),
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ],
    ['too long, one byte', tooLong('f', 'xx', 1), 'f: Too long: may not be more than 1 byte'],
    ['too long, unknown maximum', tooLong('f', 'xx', -1), 'f: Too long: value is too long'],
    [
      'type invalid',
      typeInvalid('spec.replicas', 'three', 'must be of type integer'),
      'spec.replicas: Invalid value: "three": must be of type integer',
    ],
  ])('%s', (_label, error, expected) => {
    expect(fieldErrorMessage(error)).toBe(expected);
    expect(fieldErrorBody(error)).toBe(expected.slice(error.field.length + 2));
  });

  it('records the apimachinery reason for each constructor', () => {
    expect(
      [
        required('f'),
        invalid('f', 1, 'd'),
        forbidden('f', 'd'),
        notSupported('f', 'x', ['y']),
        duplicate('f', 'x'),
        tooLong('f', 'x', 1),
        typeInvalid('f', 'x', 'd'),
      ].map((e) => statusCause(e).reason),
    ).toEqual([
      'FieldValueRequired',
      'FieldValueInvalid',
      'FieldValueForbidden',
      'FieldValueNotSupported',
      'FieldValueDuplicate',
      'FieldValueTooLong',
      'FieldValueTypeInvalid',
    ]);
  });

  it('never echoes a too-long value', () => {
    expect(tooLong('f', 'secret', 3).badValue).toBe('<value omitted>');
  });

  it('quotes like Go strconv.Quote', () => {
    expect(goQuote('')).toBe('""');
    expect(goQuote('a\\b')).toBe('"a\\\\b"');
    expect(goQuote('\x07\b\f\v\x7f')).toBe('"\\a\\b\\f\\v\\x7f"');
    expect(goQuote('\u200b')).toBe('"\\u200b"');
    expect(goQuote('日本😀')).toBe('"日本😀"');
    expect(goQuote('\u{e0001}')).toBe('"\\U000e0001"');
    expect(goQuote('\ud800')).toBe('"\ufffd"');
  });
});

describe('validateLabels', () => {
  it('accepts valid labels', () => {
    expect(
      validateLabels({ app: 'web', 'agones.dev/fleet': 'simple-game-server', empty: '' }, 'metadata.labels'),
    ).toEqual([]);
  });

  it.each<[string, Record<string, string>, string[]]>([
    [
      'bad key',
      { 'bad key': 'v' },
      [`metadata.labels: Invalid value: "bad key": ${NAME_PART_REGEX}`],
    ],
    [
      'bad value',
      { app: 'bad value' },
      [`metadata.labels: Invalid value: "bad value": ${LABEL_VALUE_REGEX}`],
    ],
    [
      'long value',
      { app: a(64) },
      [`metadata.labels: Invalid value: "${a(64)}": must be no more than 63 characters`],
    ],
    [
      'empty key',
      { '': 'v' },
      [
        'metadata.labels: Invalid value: "": name part must be non-empty',
        `metadata.labels: Invalid value: "": ${NAME_PART_REGEX}`,
      ],
    ],
    [
      'bad key and value, reported in key order',
      { z: '-', 'A/b': 'ok' },
      [
        `metadata.labels: Invalid value: "A/b": prefix part ${SUBDOMAIN_REGEX}`,
        `metadata.labels: Invalid value: "-": ${LABEL_VALUE_REGEX}`,
      ],
    ],
  ])('%s', (_label, labels, expected) => {
    const errs = validateLabels(labels, 'metadata.labels');
    expect(errs.map(fieldErrorMessage)).toEqual(expected);
    expect(errs.every((e) => e.type === 'FieldValueInvalid' && e.field === 'metadata.labels')).toBe(true);
  });

  it('uses the given path', () => {
    expect(validateLabels({ '-': 'x' }, 'spec.template.metadata.labels')[0]?.field).toBe(
      'spec.template.metadata.labels',
    );
  });
});

describe('validateAnnotations', () => {
  it('accepts valid annotations, including uppercase prefixes and any value', () => {
    expect(
      validateAnnotations(
        { 'Example.COM/Note': 'anything at all: {"json": true}', plain: '' },
        'metadata.annotations',
      ),
    ).toEqual([]);
  });

  it('checks keys lowercased but reports them as given', () => {
    expect(validateAnnotations({ 'Bad_Prefix.io/x': 'v' }, 'metadata.annotations').map(fieldErrorMessage)).toEqual([
      `metadata.annotations: Invalid value: "Bad_Prefix.io/x": prefix part ${SUBDOMAIN_REGEX}`,
    ]);
  });

  it('rejects multi-slash keys', () => {
    expect(validateAnnotations({ 'a/b/c': 'v' }, 'metadata.annotations').map(fieldErrorMessage)).toEqual([
      `metadata.annotations: Invalid value: "a/b/c": ${MULTI_SLASH}`,
    ]);
  });

  it.each<[string, Record<string, string>, boolean]>([
    ['exactly at the limit', { k: 'v'.repeat(262144 - 1) }, false],
    ['one byte over', { k: 'v'.repeat(262144) }, true],
    ['over only when counted in UTF-8 bytes', { k: 'é'.repeat(131072) }, true],
    ['over across several entries', { a: 'v'.repeat(131071), b: 'v'.repeat(131071), c: 'v' }, true],
  ])('size: %s', (_label, annotations, over) => {
    const errs = validateAnnotations(annotations, 'metadata.annotations');
    expect(errs.map(fieldErrorMessage)).toEqual(
      over ? ['metadata.annotations: Too long: may not be more than 262144 bytes'] : [],
    );
  });
});
