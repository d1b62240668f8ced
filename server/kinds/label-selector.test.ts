import { describe, expect, it } from 'vitest';
import { ApiError } from '../k8s/status.js';
import { convertLabelSelector, formatLabelSelector, matchesSelector, parseFieldSelector, parseLabelSelector } from './label-selector.js';

function errorOf(parse: () => unknown): ApiError {
  try {
    parse();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a parse error');
}

describe('parseLabelSelector', () => {
  it('reads every form of the query syntax', () => {
    expect(parseLabelSelector('a=b,c!=d, e in (x, y),f notin (z),g,!h,n>3,m<10,k==v,in=notin')).toEqual([
      { key: 'a', operator: 'In', values: ['b'] },
      { key: 'c', operator: 'NotIn', values: ['d'] },
      { key: 'e', operator: 'In', values: ['x', 'y'] },
      { key: 'f', operator: 'NotIn', values: ['z'] },
      { key: 'g', operator: 'Exists', values: [] },
      { key: 'h', operator: 'DoesNotExist', values: [] },
      { key: 'n', operator: 'Gt', values: ['3'] },
      { key: 'm', operator: 'Lt', values: ['10'] },
      { key: 'k', operator: 'In', values: ['v'] },
      { key: 'in', operator: 'In', values: ['notin'] },
    ]);
    expect(parseLabelSelector('a=')).toEqual([{ key: 'a', operator: 'In', values: [''] }]);
    expect(parseLabelSelector('')).toEqual([]);
  });

  it.each([
    ['a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['a b', "found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a,,b', "found ',', expected: identifier after ','"],
    ['a in (x', "found '', expected: ',' or ')'"],
    ['a in x', "found 'x', expected: '('"],
    ['=b', "found '=', expected: !, identifier, or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a>x', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['-bad-=x', 'key: Invalid value: "-bad-"'],
    ['a=-x-', 'values[0][a]: Invalid value: "-x-"'],
    [`a=${'v'.repeat(64)}`, 'must be no more than 63 characters'],
  ])('refuses %j with a 400 naming the selector and the problem', (text, problem) => {
    const error = errorOf(() => parseLabelSelector(text));
    expect(error.code).toBe(400);
    expect(error.status.message).toContain(`labelSelector ${JSON.stringify(text)}`);
    expect(error.status.message).toContain(problem);
  });

  it('matches Gt and Lt only on integer labels', () => {
    const gt = parseLabelSelector('n>3');
    expect(matchesSelector(gt, { n: '4' })).toBe(true);
    expect(matchesSelector(gt, { n: '3' })).toBe(false);
    expect(matchesSelector(gt, { n: 'x' })).toBe(false);
    expect(matchesSelector(gt, {})).toBe(false);
  });
});

describe('parseFieldSelector', () => {
  const gs = { metadata: { name: 'a,b', namespace: 'default' }, status: { state: 'Ready' } };

  it('reads =, == and != terms with escaped values', () => {
    expect(parseFieldSelector('metadata.name=a\\,b,status.state!=Allocated', 'GameServer')(gs)).toBe(true);
    expect(parseFieldSelector('metadata.namespace==other', 'GameServer')(gs)).toBe(false);
  });

  it("takes the API server's field labels of Namespaces (status.phase) and Secrets (type)", () => {
    const terminating = { metadata: { name: 'team-a', namespace: '' }, status: { phase: 'Terminating' } };
    expect(parseFieldSelector('status.phase=Terminating', 'Namespace')(terminating)).toBe(true);
    expect(parseFieldSelector('status.phase=Active', 'Namespace')(terminating)).toBe(false);
    expect(parseFieldSelector('type=kubernetes.io/tls', 'Secret')({ metadata: { name: 's', namespace: 'default' }, type: 'kubernetes.io/tls' })).toBe(true);
  });

  it.each([
    ['metadata.name', "can't understand 'metadata.name'"],
    ['metadata.name=a=b', 'unescaped character in value: ='],
    ['metadata.name=a\\x', 'invalid escape sequence: \\x'],
    ['spec.ports=1', 'field label not supported: spec.ports'],
  ])('refuses %j with a 400 naming the selector and the problem', (text, problem) => {
    const error = errorOf(() => parseFieldSelector(text, 'GameServer'));
    expect(error.code).toBe(400);
    expect(error.status.message).toContain(JSON.stringify(text));
    expect(error.status.message).toContain(problem);
  });
});

describe('convertLabelSelector', () => {
  it('turns matchLabels into single-value In requirements, in key order, then the expressions', () => {
    expect(convertLabelSelector({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'Exists' }] })).toEqual({
      ok: true,
      requirements: [
        { key: 'a', operator: 'In', values: ['1'] },
        { key: 'b', operator: 'In', values: ['2'] },
        { key: 'c', operator: 'Exists', values: [] },
      ],
    });
  });
});

describe('formatLabelSelector', () => {
  it('writes the text form kubectl -l takes, which parses back to the same requirements', () => {
    const selector = {
      matchLabels: { team: 'red', 'agones.dev/fleet': 'simple' },
      matchExpressions: [
        { key: 'zone', operator: 'In' as const, values: ['a', 'b'] },
        { key: 'tier', operator: 'NotIn' as const, values: ['x'] },
        { key: 'gpu', operator: 'Exists' as const },
        { key: 'spot', operator: 'DoesNotExist' as const },
      ],
    };
    const text = formatLabelSelector(selector);
    expect(text).toBe('agones.dev/fleet=simple,team=red,zone in (a,b),tier notin (x),gpu,!spot');
    const converted = convertLabelSelector(selector);
    expect(converted.ok && parseLabelSelector(text)).toEqual(converted.ok && converted.requirements);
    expect(formatLabelSelector({})).toBe('<none>');
  });
});
