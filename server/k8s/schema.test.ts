import { describe, expect, it } from 'vitest';
import { type Schema, type SchemaReport, checkSchema, isDateTime } from './schema.js';
import { fieldErrorMessage } from './validation.js';

const check = (value: unknown, schema: Schema, old?: unknown): string[] => {
  const report: SchemaReport = { unknown: [], errors: [] };
  checkSchema(value, schema, '', report, old);
  return report.errors.map(fieldErrorMessage);
};

describe('format: date-time', () => {
  it.each([
    '2024-05-01T10:00:00Z',
    '2024-05-01t10:00:00z',
    '2024-05-01T10:00:00.123456789Z',
    '2024-05-01T10:00:00+02:00',
    '2024-05-01T23:59:59-11:30',
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
  ])('takes %j', (text) => {
    expect(isDateTime(text)).toBe(true);
  });

  it.each([
    '',
    'tomorrow',
    '2024-05-01',
    '2024-05-01T10:00:00',
    '2024-05-01 10:00:00Z',
    '2024-13-01T10:00:00Z',
    '2024-04-31T10:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-05-01T24:00:00Z',
    '2024-05-01T10:60:00Z',
    '2024-05-01T10:00:60Z',
    '2024-05-01T10:00:00+24:00',
    '2024-05-01T10:00:00,5Z',
    '2024-05-01T10:00:00Zt<img src=x>',
    '<img src=x onerror=alert(1)>',
  ])('refuses %j', (text) => {
    expect(isDateTime(text)).toBe(false);
  });

  it('refuses a bad value with the message the API server gives, naming the field', () => {
    const schema: Schema = { type: 'object', properties: { status: { type: 'object', properties: { lastScaleTime: { type: 'string', format: 'date-time', nullable: true } } } } };
    expect(check({ status: { lastScaleTime: '<b>"x"</b>' } }, schema)).toEqual([
      'status.lastScaleTime: Invalid value: "<b>\\"x\\"</b>": status.lastScaleTime in body must be of type date-time: "<b>\\"x\\"</b>"',
    ]);
    expect(check({ status: { lastScaleTime: null } }, schema)).toEqual([]);
    expect(check({ status: { lastScaleTime: '2024-05-01T10:00:00Z' } }, schema)).toEqual([]);
  });

  it('on an update, lets a value stored before stand while the update leaves it as it was (ratcheting), and checks a changed one', () => {
    const schema: Schema = { type: 'object', properties: { status: { type: 'object', properties: { lastScaleTime: { type: 'string', format: 'date-time' }, other: { type: 'integer' } } } } };
    const old = { status: { lastScaleTime: 'yesterday', other: 1 } };
    expect(check({ status: { lastScaleTime: 'yesterday', other: 2 } }, schema, old)).toEqual([]);
    expect(check({ status: { lastScaleTime: 'today', other: 2 } }, schema, old)).toEqual([
      'status.lastScaleTime: Invalid value: "today": status.lastScaleTime in body must be of type date-time: "today"',
    ]);
    expect(check({ status: { lastScaleTime: 'yesterday' } }, schema)).toHaveLength(1);
  });
});
