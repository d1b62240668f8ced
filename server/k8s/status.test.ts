import { describe, expect, it } from 'vitest';
import { invalidStatus } from './status.js';
import { forbidden, invalid, required, validateLabels } from './validation.js';

// Written out in full, as apimachinery prints it: the point is the exact wording.
const NAME_PART_REGEX =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('invalidStatus', () => {
  it('renders one error without brackets and keeps the Go key order', () => {
    const status = invalidStatus('GameServer', 'agones.dev', 'gs-1', [
      invalid('metadata.labels', 'bad key', NAME_PART_REGEX),
    ]);
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `GameServer.agones.dev "gs-1" is invalid: metadata.labels: Invalid value: "bad key": ${NAME_PART_REGEX}`,
      reason: 'Invalid',
      details: {
        name: 'gs-1',
        group: 'agones.dev',
        kind: 'GameServer',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: `Invalid value: "bad key": ${NAME_PART_REGEX}`,
            field: 'metadata.labels',
          },
        ],
      },
      code: 422,
    });
    expect(Object.keys(status)).toEqual([
      'kind',
      'apiVersion',
      'metadata',
      'status',
      'message',
      'reason',
      'details',
      'code',
    ]);
    expect(Object.keys(status.details)).toEqual(['name', 'group', 'kind', 'causes']);
    expect(Object.keys(status.details.causes?.[0] ?? {})).toEqual(['reason', 'message', 'field']);
  });

  it('brackets several errors and drops the group for the core API group', () => {
    const status = invalidStatus('Pod', '', 'web', [
      required('spec.containers'),
      invalid('metadata.name', 'Web', 'must be lowercase'),
    ]);
    expect(status.message).toBe(
      'Pod "web" is invalid: [spec.containers: Required value, metadata.name: Invalid value: "Web": must be lowercase]',
    );
    expect(status.details).toEqual({
      name: 'web',
      kind: 'Pod',
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "Web": must be lowercase',
          field: 'metadata.name',
        },
      ],
    });
  });

  it('de-duplicates identical messages in the text but not in the causes', () => {
    const error = forbidden('spec', 'nope');
    const status = invalidStatus('Fleet', 'agones.dev', 'f', [error, { ...error }]);
    expect(status.message).toBe('Fleet.agones.dev "f" is invalid: spec: Forbidden: nope');
    expect(status.details.causes).toHaveLength(2);
  });

  it('quotes the name like Go %q and omits causes when there are no errors', () => {
    const status = invalidStatus('Fleet', 'agones.dev', 'we"ird', []);
    expect(status.message).toBe('Fleet.agones.dev "we\\"ird" is invalid');
    expect(status.details).toEqual({ name: 'we"ird', group: 'agones.dev', kind: 'Fleet' });
  });

  it('round-trips through JSON unchanged', () => {
    const status = invalidStatus('GameServer', 'agones.dev', 'gs', validateLabels({ '-': 'x' }, 'metadata.labels'));
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });
});
