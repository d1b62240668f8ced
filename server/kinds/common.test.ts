import { describe, expect, it } from 'vitest';
import { parseFeatureGates } from '../features.js';
import { fixedAnnotationErrors, jsonEqual, unsetZeroValues, validateAllocationOverflow } from './common.js';

describe('unsetZeroValues', () => {
  const paths = [['scheduling'], ['ports', '*', 'protocol'], ['counters', '*', 'count'], ['health', 'periodSeconds']];

  it('removes the zero values at the paths, in arrays and maps too, and leaves the rest', () => {
    const value = {
      scheduling: '',
      ports: [{ protocol: '', name: '' }, { protocol: 'TCP' }],
      counters: { a: { count: 0 } },
      health: { periodSeconds: 0, disabled: false },
      other: '',
    };
    expect(unsetZeroValues(value, paths)).toEqual({
      ports: [{ name: '' }, { protocol: 'TCP' }],
      counters: { a: {} },
      health: { disabled: false },
      other: '',
    });
    expect(value.scheduling).toBe('');
  });

  it('on an update keeps the value the object already has at the same path', () => {
    const old = { scheduling: 'Distributed', ports: [{ protocol: 'TCP' }], health: { periodSeconds: 0 } };
    expect(unsetZeroValues({ scheduling: '', ports: [{ protocol: '' }, { protocol: '' }], health: { periodSeconds: 0 } }, paths, old)).toEqual({
      scheduling: 'Distributed',
      ports: [{ protocol: 'TCP' }, {}],
      health: {},
    });
  });

  it('returns the same object when there is nothing to unset', () => {
    const value = { scheduling: 'Packed', ports: [{ protocol: 'UDP' }] };
    expect(unsetZeroValues(value, paths)).toBe(value);
  });
});

describe('jsonEqual', () => {
  it('compares JSON values structurally, whatever the key order, a key holding undefined counted as absent', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, gone: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, gone: undefined })).toBe(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1, c: 2 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(jsonEqual(['a', 'b'], ['b', 'a'])).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual(undefined, {})).toBe(false);
    expect(jsonEqual(undefined, undefined)).toBe(true);
    expect(jsonEqual(9007199254740993n, 9007199254740993n)).toBe(true);
    expect(jsonEqual('1', 1)).toBe(false);
  });
});

describe('fixedAnnotationErrors', () => {
  it('forbids adding, changing or removing a fleetsim.dev/ annotation, and nothing else', () => {
    const before = { 'fleetsim.dev/command': 'a', 'fleetsim.dev/process-profile': 'p', note: '1' };
    const after = { 'fleetsim.dev/command': 'b', 'fleetsim.dev/other': 'x', note: '2' };
    expect(fixedAnnotationErrors(after, before, 'metadata.annotations').map((e) => [e.type, e.field])).toEqual([
      ['FieldValueForbidden', 'metadata.annotations[fleetsim.dev/command]'],
      ['FieldValueForbidden', 'metadata.annotations[fleetsim.dev/other]'],
      ['FieldValueForbidden', 'metadata.annotations[fleetsim.dev/process-profile]'],
    ]);
    expect(fixedAnnotationErrors({ ...before, note: '3' }, before, 'metadata.annotations')).toEqual([]);
  });

  it('keeps a set\'s allocationOverflow from putting one on its Allocated GameServers', () => {
    const gates = parseFeatureGates('FleetAllocationOverflow=true');
    const errors = validateAllocationOverflow({ annotations: { 'fleetsim.dev/command': 'x', note: 'y' } }, 'spec.allocationOverflow', gates);
    expect(errors.map((e) => e.field)).toEqual(['spec.allocationOverflow.annotations[fleetsim.dev/command]']);
  });
});
